/**
 * `reclazz-build scan`: sends `SCAN` (protocol.md "SCAN ..."). The agent never answers SCAN.
 * To a current agent a DOCTOR follows on the same connection: its answer shows the agent has
 * read the SCAN line (commands on one connection are handled in order) and whether SCAN is
 * wired (`scanSupported`). It says nothing about what the scan found or reloaded.
 */
import { AgentConnectionError } from '../agent/connection.js';
import { askDoctor } from '../agent/requests.js';
import { interrupted, isCurrentAgent, openAgent, refusal, type AgentTarget, type Refusal } from './connect.js';
import type { ScanResult } from './types.js';
import { EXIT_REFUSED } from '../events.js';

/** Sends SCAN. Never throws for the agent's behaviour. */
export async function runScan(options: AgentTarget): Promise<ScanResult> {
  const started = performance.now();
  const done = (
    fields: Omit<ScanResult, 'action' | 'durationMs' | 'sent' | 'delivered'> & { sent?: boolean; delivered?: boolean },
  ): ScanResult => ({
    action: 'scan',
    sent: false,
    delivered: false,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });
  const fromRefusal = ({ kind: _kind, ...r }: Refusal, sent = false) => done({ ...r, sent });

  const opened = await openAgent(options);
  if (opened.kind === 'refused') return fromRefusal(opened);
  const { connection, endpoint } = opened;
  try {
    connection.send('SCAN');
    if (!isCurrentAgent(opened.connected)) {
      return done({
        reason: 'ok',
        exitCode: 0,
        sent: true,
        message: 'SCAN sent to an agent from before build ownership; the agent never answers SCAN, so nothing confirms it',
        endpoint,
      });
    }
    let answer;
    try {
      answer = await askDoctor(connection, options.timeoutMs, options.signal);
    } catch (error) {
      // An abort may surface as the signal's reason rather than an AgentConnectionError.
      if (options.signal?.aborted) return fromRefusal(interrupted(options.signal, 'after sending SCAN', endpoint), true);
      if (!(error instanceof AgentConnectionError)) throw error;
      return done({
        reason: 'no-receipt',
        exitCode: EXIT_REFUSED,
        sent: true,
        message: `SCAN sent, but the DOCTOR sent after it got no answer (${error.kind === 'timeout' ? `none within ${options.timeoutMs} ms` : 'connection closed'}): uncertain whether the agent read it`,
        hint: 'the agent may still be starting; check with `reclazz-build doctor`, then send SCAN again',
        endpoint,
      });
    }
    if (answer.kind === 'observed' && !answer.doctor.scanSupported) {
      return fromRefusal(
        refusal(
          'unsupported',
          'the agent read SCAN but reports scanSupported=false: its SCAN handler is not wired yet, so nothing was scanned',
          'wait until the app has started and try again',
          endpoint,
        ),
        true,
      );
    }
    const hold = answer.kind === 'observed' ? answer.doctor.buildHold : 'unavailable';
    const held = hold !== 'none' && hold !== 'unavailable';
    return done({
      reason: 'ok',
      exitCode: 0,
      sent: true,
      delivered: true,
      message:
        'SCAN sent and read by the agent (it answered the DOCTOR sent after it); SCAN has no reply, so what it found and reloaded is not reported',
      ...(held ? { hint: `a ${hold} build hold is active: SCAN does not release it, held class files stay back until BUILD ok` } : {}),
      endpoint,
    });
  } finally {
    connection.close();
  }
}
