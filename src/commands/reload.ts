/**
 * `reclazz-build status|pause|resume`: `RELOAD <action> request=<token>` and its exact
 * `RELOAD_STATE` receipt (protocol.md "RELOAD"). A missing receipt leaves the outcome uncertain:
 * it is reported as such, never as done.
 */
import { AgentConnectionError } from '../agent/connection.js';
import type { ReloadAction, ReloadState } from '../agent/protocol.js';
import { askReload } from '../agent/requests.js';
import { interrupted, isCurrentAgent, openAgent, refusal, type AgentTarget, type Refusal } from './connect.js';
import type { ReloadResult } from './types.js';

/** Sends one RELOAD action and waits for its receipt. Never throws for the agent's behaviour. */
export async function runReload(action: ReloadAction, options: AgentTarget): Promise<ReloadResult> {
  const started = performance.now();
  const done = (fields: Omit<ReloadResult, 'action' | 'durationMs'>): ReloadResult => ({
    action,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });
  const fromRefusal = ({ kind: _kind, ...r }: Refusal) => done(r);

  const opened = await openAgent(options);
  if (opened.kind === 'refused') return fromRefusal(opened);
  const { connection, endpoint } = opened;
  try {
    if (!isCurrentAgent(opened.connected)) {
      return fromRefusal(
        refusal(
          'old-agent',
          `the agent on port ${endpoint.port} is too old for RELOAD (its CONNECTED line has no agent version); nothing was sent`,
          'update the reclazz agent in the app',
          endpoint,
        ),
      );
    }
    let state: ReloadState;
    try {
      state = await askReload(connection, action, options.timeoutMs, options.signal);
    } catch (error) {
      const uncertain =
        action === 'status' ? 'the reload state is unknown' : `uncertain whether the agent ${action === 'pause' ? 'paused' : 'resumed'}`;
      // An abort may surface as the signal's reason rather than an AgentConnectionError.
      if (options.signal?.aborted)
        return fromRefusal(interrupted(options.signal, `while waiting for the RELOAD_STATE receipt: ${uncertain}`, endpoint));
      if (!(error instanceof AgentConnectionError)) throw error;
      const why =
        error.kind === 'timeout'
          ? `no RELOAD_STATE receipt for RELOAD ${action} within ${options.timeoutMs} ms: ${uncertain}`
          : `the agent closed the connection before the RELOAD_STATE receipt for RELOAD ${action}: ${uncertain}`;
      return fromRefusal(
        refusal(
          error.kind === 'timeout' ? 'no-receipt' : 'agent-disconnected',
          why,
          action === 'status'
            ? 'the agent may still be starting; try again, or raise --timeout'
            : 'check with `reclazz-build status` before retrying',
          endpoint,
        ),
      );
    }
    const expected = action === 'pause' ? true : action === 'resume' ? false : state.paused;
    if (state.paused !== expected) {
      return fromRefusal(
        refusal(
          'unexpected-receipt',
          `the agent answered RELOAD ${action} with paused=${state.paused}: automatic reload is ${state.paused ? 'still paused' : 'not paused'}`,
          'check with `reclazz-build status`',
          endpoint,
        ),
      );
    }
    return done({ reason: 'ok', exitCode: 0, message: describeState(action, state), ...holdHint(state), endpoint, state });
  } finally {
    connection.close();
  }
}

function describeState(action: ReloadAction, state: ReloadState): string {
  const counts = `${state.pendingClasses} pending class${state.pendingClasses === 1 ? '' : 'es'}, ${state.pendingActions} pending action${state.pendingActions === 1 ? '' : 's'}, build hold ${state.buildHold}`;
  switch (action) {
    case 'pause':
      return `automatic reload paused (agent-wide: any client may resume it); ${counts}`;
    case 'resume':
      return `automatic reload resumed; pending work is scheduled, not yet reloaded; ${counts}`;
    case 'status':
      return `automatic reload is ${state.paused ? 'PAUSED' : 'running'}; ${counts}`;
  }
}

function holdHint(state: ReloadState): { hint?: string } {
  if (state.buildHold === 'none') return {};
  return { hint: `a ${state.buildHold} build hold still keeps class files back until its owner's BUILD ok; resume never releases it` };
}
