/** The session a subcommand opens: no lock and no owner, only what it asks the agent. */
import type { AgentTarget } from '../agent/handshake.js';
import type { RunEvent } from '../outcome/events.js';
import { openSession, type OpenPlan, type Opening } from '../session/open.js';
import type { SessionHost } from '../session/session.js';

/**
 * Opens a session for a subcommand against `target`.
 * @param onEvent where `agent` events go (`verify` shows them, as a build does).
 */
export function openFor(
  target: AgentTarget,
  plan: Omit<OpenPlan, 'builds' | 'onAgentEvent'> = {},
  onEvent?: (event: RunEvent) => void,
): Promise<Opening<SessionHost>> {
  const options = {
    timeoutMs: target.timeoutMs,
    ...(target.port === undefined ? {} : { port: target.port }),
    ...(target.portFile === undefined ? {} : { portFile: target.portFile }),
    ...(target.portFiles === undefined ? {} : { portFiles: target.portFiles }),
  };
  const hooks = { ...(target.signal === undefined ? {} : { signal: target.signal }), ...(onEvent === undefined ? {} : { onEvent }) };
  return openSession(options, { cwd: target.cwd, env: target.env }, hooks, { ...plan, onAgentEvent: target.onEvent ?? (() => undefined) });
}
