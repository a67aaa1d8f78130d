/** hold/machine.ts: every transition the hold allows, every one it refuses, and what a result reports for each state. */
import { describe, expect, it } from 'vitest';
import { holdLeft, mayBeOurs, nextHold, type HoldEvent, type HoldState } from '../../src/hold/hold.js';

const STATES: HoldState[] = ['none', 'acquiring', 'held', 'finishing', 'released', 'left', 'unknown'];
const EVENTS: HoldEvent[] = ['start', 'acquired', 'refused', 'finish', 'released', 'kept', 'leave', 'lost'];

/** Every allowed transition, with why it exists. */
const ALLOWED: Array<[HoldState, HoldEvent, HoldState, string]> = [
  ['none', 'start', 'acquiring', 'a cycle sends BUILD started'],
  ['acquiring', 'acquired', 'held', 'the exact owned BUILD_ACK started came'],
  ['acquiring', 'refused', 'none', 'another owner holds it: we took nothing'],
  ['acquiring', 'lost', 'unknown', 'the started receipt was lost: it may have been installed'],
  ['held', 'finish', 'finishing', 'BUILD ok or failed is sent'],
  ['held', 'lost', 'unknown', 'the connection closed during the build'],
  [
    'held',
    'leave',
    'left',
    "the build ended and no result is sent (the agent's watcher did not start in time): the agent keeps holding for our owner",
  ],
  ['finishing', 'released', 'released', 'the ok receipt came'],
  ['finishing', 'kept', 'left', 'the failed receipt came: the agent keeps holding for our owner'],
  ['finishing', 'lost', 'unknown', 'the finish receipt was lost or rejected'],
  ['released', 'start', 'acquiring', 'the next cycle on the session'],
  [
    'released',
    'kept',
    'left',
    "the ok's capture failed (a held class file unreadable, its scan unfinished): the agent keeps holding for our owner",
  ],
  ['left', 'start', 'acquiring', 'the next cycle recovers the hold a failed build left'],
  ['left', 'finish', 'finishing', 'a bug after a failed build sends failed again'],
  ['left', 'lost', 'unknown', 'the connection closed while it was left'],
  ['unknown', 'start', 'acquiring', 'the same owner may send started again'],
  ['unknown', 'finish', 'finishing', 'failed is sent to be safe'],
  ['unknown', 'lost', 'unknown', 'still unknown'],
];

describe('the hold state machine', () => {
  it.each(ALLOWED)('%s --%s--> %s (%s)', (from, event, to) => {
    expect(nextHold(from, event)).toBe(to);
  });

  const refused = STATES.flatMap((state) => EVENTS.map((event) => [state, event] as const)).filter(
    ([state, event]) => !ALLOWED.some(([from, on]) => from === state && on === event),
  );
  it.each(refused)('%s refuses %s (a bug in the flow, not the agent)', (state, event) => {
    expect(() => nextHold(state, event)).toThrow(`'${event}' is not possible in state '${state}'`);
  });

  it.each([
    ['none', 'none', false],
    ['acquiring', 'unknown', true],
    ['held', 'held', true],
    ['finishing', 'unknown', true],
    ['released', 'none', false],
    ['left', 'held', true],
    ['unknown', 'unknown', true],
  ] as const)('%s is reported as hold %s; may be ours: %s', (state, left, ours) => {
    expect(holdLeft(state)).toBe(left);
    expect(mayBeOurs(state)).toBe(ours);
  });
});
