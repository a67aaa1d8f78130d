/**
 * `reclazz-build scan`: sends `SCAN` (protocol.md "SCAN ..."). The agent never answers SCAN.
 * To a current agent a DOCTOR follows on the same connection: its answer shows the agent has
 * read the SCAN line (commands on one connection are handled in order) and whether SCAN is
 * wired (`scanSupported`). It says nothing about what the scan found or reloaded.
 */
import { requestFailure } from '../agent/connection.js';
import { isCurrentAgent, type AgentTarget } from '../agent/handshake.js';
import { closeSession } from '../session/options.js';
import { openFor } from './doctor.js';
import { askDoctor, type DoctorAnswer } from '../agent/requests.js';
import { signalOf } from '../outcome/exit.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type ScanResult } from '../outcome/result.js';

/** Sends SCAN. Never throws for the agent's behaviour. */
export async function runScan(options: AgentTarget): Promise<ScanResult> {
  const started = performance.now();
  const end = (outcome: Outcome, facts: Partial<Pick<ScanResult, 'endpoint' | 'sent' | 'delivered'>> = {}): ScanResult =>
    buildResult(outcome, { action: 'scan' as const, sent: false, delivered: false, ...facts }, performance.now() - started);

  const opening = await openFor(options);
  if (opening.kind === 'refused') return end(opening.outcome);
  const { session } = opening;
  const { connection, endpoint } = session;
  try {
    connection.send('SCAN');
    const sent = { endpoint, sent: true };
    if (!isCurrentAgent(session.open.connected))
      return end({ reason: 'ok', done: { kind: 'scan', delivered: false, hold: 'unavailable' } }, sent);
    let answer: DoctorAnswer;
    try {
      answer = await askDoctor(connection, options.timeoutMs, options.signal);
    } catch (error) {
      const failure = requestFailure(error, options.signal);
      if (failure === 'aborted') return end({ reason: 'interrupted', signal: signalOf(options.signal), at: 'after-scan' }, sent);
      const why = failure === 'timeout' ? `none within ${options.timeoutMs} ms` : 'connection closed';
      return end({ reason: 'no-receipt', awaited: { kind: 'doctor-after-scan', why } }, sent);
    }
    if (answer.kind === 'observed' && !answer.doctor.scanSupported) {
      return end({ reason: 'unsupported', agentVersion: answer.doctor.agentVersion, flag: 'scanSupported' }, sent);
    }
    const hold = answer.kind === 'observed' ? answer.doctor.buildHold : 'unavailable';
    return end({ reason: 'ok', done: { kind: 'scan', delivered: true, hold } }, { ...sent, delivered: true });
  } finally {
    await closeSession(session);
  }
}
