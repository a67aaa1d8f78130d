/**
 * `reclazz-build status|pause|resume`: `RELOAD <action> request=<token>` and its exact
 * `RELOAD_STATE` receipt (protocol.md "RELOAD"). A missing receipt leaves the outcome uncertain:
 * it is reported as such, never as done.
 */
import { requestFailure } from '../agent/connection.js';
import { requireCurrentAgent, type AgentTarget } from '../agent/handshake.js';
import { closeSession } from '../session/options.js';
import { openFor } from './doctor.js';
import { askReload } from '../agent/requests.js';
import { signalOf } from '../outcome/exit.js';
import type { ReloadAction, ReloadState } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type ReloadResult } from '../outcome/result.js';

/** Sends one RELOAD action and waits for its receipt. Never throws for the agent's behaviour. */
export async function runReload(action: ReloadAction, options: AgentTarget): Promise<ReloadResult> {
  const started = performance.now();
  const end = (outcome: Outcome, facts: Partial<Pick<ReloadResult, 'endpoint' | 'state'>> = {}): ReloadResult =>
    buildResult(outcome, { action, ...facts }, performance.now() - started);

  const opening = await openFor(options);
  if (opening.kind === 'refused') return end(opening.outcome);
  const { session } = opening;
  const { connection, endpoint } = session;
  try {
    const old = requireCurrentAgent(session.open, 'RELOAD');
    if (old !== undefined) return end(old, { endpoint });
    let state: ReloadState;
    try {
      state = await askReload(connection, action, options.timeoutMs, options.signal);
    } catch (error) {
      const failure = requestFailure(error, options.signal);
      if (failure === 'aborted')
        return end({ reason: 'interrupted', signal: signalOf(options.signal), at: 'reload-receipt', action }, { endpoint });
      const outcome: Outcome =
        failure === 'timeout'
          ? { reason: 'no-receipt', awaited: { kind: 'reload', action, timeoutMs: options.timeoutMs } }
          : { reason: 'agent-disconnected', port: endpoint.port, during: { kind: 'reload', action } };
      return end(outcome, { endpoint });
    }
    const expected = action === 'pause' ? true : action === 'resume' ? false : state.paused;
    if (state.paused !== expected) return end({ reason: 'unexpected-receipt', action, paused: state.paused }, { endpoint });
    return end({ reason: 'ok', done: { kind: 'reload', action, state } }, { endpoint, state });
  } finally {
    await closeSession(session);
  }
}
