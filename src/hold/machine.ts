/**
 * The named build hold as a state machine (protocol.md "BUILD"), as this client sees it:
 *
 *   none ──start──▶ acquiring ──acquired──▶ held ──finish──▶ finishing ──released──▶ released
 *                      │  └──refused──▶ none                   │        └──kept──────▶ left
 *                      └──lost──▶ unknown                      └──lost──▶ unknown    released ──kept──▶ left
 *
 * `released`: our `BUILD ok` was acknowledged (the agent releases the hold once its capture
 * ran). `left`: our `BUILD failed` was acknowledged, so the agent keeps holding for our owner
 * token; or our ok's capture could not read a held class file, so the agent kept the hold
 * (agent ReloadQueue.acceptBuild). `unknown`: a receipt was lost or the agent went away: the hold may or may not be ours.
 * A new cycle may start from none, released, left or unknown (the same owner may send
 * `started` again). Pure: the BUILD exchange itself is in hold.ts.
 */
import type { HoldLeft } from '../outcome/facts.js';

/** Where the hold is. */
export type HoldState = 'none' | 'acquiring' | 'held' | 'finishing' | 'released' | 'left' | 'unknown';

/** What happened to it. */
export type HoldEvent =
  /** `BUILD started` is about to be sent. */
  | 'start'
  /** The exact `BUILD_ACK ... started owner=<ours>` came. */
  | 'acquired'
  /** `started` was rejected (another owner holds it) or the wait for it was given up: we took nothing. */
  | 'refused'
  /** `BUILD ok` or `BUILD failed` is about to be sent. */
  | 'finish'
  /** The `ok` receipt came: released once the agent's capture runs. */
  | 'released'
  /** The `failed` receipt came, or our ok's capture failed: the agent keeps holding for our owner. */
  | 'kept'
  /** A receipt was lost or rejected, the reply was not an owned one, or the connection closed. */
  | 'lost';

const TRANSITIONS: Readonly<Record<HoldState, Partial<Record<HoldEvent, HoldState>>>> = {
  none: { start: 'acquiring' },
  acquiring: { acquired: 'held', refused: 'none', lost: 'unknown' },
  held: { finish: 'finishing', lost: 'unknown' },
  finishing: { released: 'released', kept: 'left', lost: 'unknown' },
  released: { start: 'acquiring', kept: 'left' },
  left: { start: 'acquiring', finish: 'finishing', lost: 'unknown' },
  unknown: { start: 'acquiring', finish: 'finishing', lost: 'unknown' },
};

/**
 * The state after `event` in `state`.
 * @throws Error for an event the state does not allow (a bug in the flow, never the agent's doing).
 */
export function nextHold(state: HoldState, event: HoldEvent): HoldState {
  const next = TRANSITIONS[state][event];
  if (next === undefined) throw new Error(`hold: '${event}' is not possible in state '${state}'`);
  return next;
}

/** What a result reports the hold as: released or never taken, held by our owner, or unknown. */
export function holdLeft(state: HoldState): HoldLeft {
  switch (state) {
    case 'none':
    case 'released':
      return 'none';
    case 'held':
    case 'left':
      return 'held';
    case 'acquiring':
    case 'finishing':
    case 'unknown':
      return 'unknown';
  }
}

/** True when the hold may be ours: a bug or a state error sends `failed` first, and the owner is named. */
export function mayBeOurs(state: HoldState): boolean {
  return state !== 'none' && state !== 'released';
}
