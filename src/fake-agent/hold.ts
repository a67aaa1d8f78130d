/**
 * The build hold's rules (protocol.md, "BUILD" hold rules), as a pure decision function.
 * Side effects (capture scheduling, broadcasts, receipts) live in the server.
 */
import type { BuildState } from './commands.js';
import type { HoldKind } from './types.js';

/** The hold the agent currently has. `sinceMs` is epoch ms of the first acquisition. */
export interface HoldState {
  kind: HoldKind;
  owner?: string;
  sinceMs: number;
}

/** No hold. */
export const NO_HOLD: HoldState = { kind: 'none', sinceMs: 0 };

/**
 * Outcome of one BUILD command against the current hold.
 * - rejected: nothing changes; `BUILD_REJECTED` when a request token was given.
 * - accepted: `hold` is the hold afterwards and `event` what happened:
 *   `acquired` (a free hold taken), `reacquired` (same holder started again: cancels a pending
 *   capture), `failed` (hold kept or, for unowned, taken: cancels a pending capture),
 *   `capture-scheduled` (ok: the hold stays until the capture runs).
 */
export type BuildDecision =
  | { accepted: false }
  | { accepted: true; event: 'acquired' | 'reacquired' | 'failed' | 'capture-scheduled'; hold: HoldState };

/**
 * Apply the hold rules:
 * - named (`owner` given): only `started` acquires a free hold; the same owner (compared
 *   case-sensitively) may send started/failed/ok; another owner, or any named command against a
 *   legacy hold, is rejected; named ok/failed with no hold are rejected.
 * - unowned (`owner` undefined): rejected while a named hold exists; otherwise legacy rules:
 *   started or failed take/keep a legacy hold, ok schedules a capture (which releases it).
 * `nowMs` (epoch ms) stamps a newly acquired hold.
 */
export function decideBuild(
  current: HoldState,
  state: BuildState,
  owner: string | undefined,
  nowMs: number,
): BuildDecision {
  if (owner !== undefined) {
    if (current.kind === 'none') {
      return state === 'started'
        ? { accepted: true, event: 'acquired', hold: { kind: 'named', owner, sinceMs: nowMs } }
        : { accepted: false };
    }
    if (current.kind === 'legacy' || current.owner !== owner) return { accepted: false };
    return { accepted: true, event: continuing(state), hold: current };
  }
  if (current.kind === 'named') return { accepted: false };
  if (current.kind === 'none') {
    if (state === 'ok') return { accepted: true, event: 'capture-scheduled', hold: current };
    return {
      accepted: true,
      event: state === 'started' ? 'acquired' : 'failed',
      hold: { kind: 'legacy', sinceMs: nowMs },
    };
  }
  return { accepted: true, event: continuing(state), hold: current };
}

function continuing(state: BuildState): 'reacquired' | 'failed' | 'capture-scheduled' {
  return state === 'started' ? 'reacquired' : state === 'failed' ? 'failed' : 'capture-scheduled';
}
