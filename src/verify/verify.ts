/**
 * The VERIFY loop (protocol.md "VERIFY"): ask the agent, per changed class, whether the exact
 * bytes (by SHA-256) were applied, polling `running`/`not_observed` and the "not captured yet"
 * mismatch under one deadline, with a bounded number of requests in flight on one connection.
 */
import type { AgentConnection } from '../agent/connection.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import type { VerifyReport } from '../outcome/facts.js';
import { VerifyRound } from './round.js';
import type { VerifyOptions, VerifyTarget } from './types.js';

/**
 * Most VERIFY requests in flight at once: far below the agent's 1000-line outbox.
 * @internal for its tests
 */
export const VERIFY_WINDOW = 64;

/**
 * Verifies every target; resolves when all are final, the deadline passes, the capacity rule
 * stops the wait, the session changes, the connection closes, or `signal` aborts. Never
 * rejects for the agent's behaviour: every class ends with a verdict (see round.ts for how
 * replies are routed and lost ones asked again).
 */
export function verifyClasses(
  connection: AgentConnection,
  targets: readonly VerifyTarget[],
  options: VerifyOptions,
): Promise<VerifyReport> {
  return new VerifyRound(connection, targets, {
    ...options,
    window: options.window ?? VERIFY_WINDOW,
    capacity: options.capacity ?? AGENT_RECEIPT_CAPACITY,
  }).run();
}
