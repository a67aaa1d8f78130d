/**
 * The named build hold (protocol.md "BUILD"): `started` with an owner token, acknowledged by
 * the exact `BUILD_ACK <request> started owner=<owner>` before any compiler runs, then `ok` or
 * `failed` with their own receipts. Every wait is bounded; a missing receipt is never success.
 */
import { type AgentConnection, AgentConnectionError } from '../agent/connection.js';
import { buildLine, type BuildReceipt, type BuildState, newToken, parseBuildReceipt } from '../agent/protocol.js';
import { pause } from '../util/wait.js';
import type { HoldLeft } from '../outcome/facts.js';

/** How often a held-by-someone-else `started` is retried while waiting, in ms. */
const HOLD_RETRY_MS = 500;

/** The outcome of one BUILD request. */
type HoldReply =
  | { kind: 'ack' }
  | { kind: 'rejected' }
  /** A receipt without the owner suffix: an agent from before build ownership, not an owned hold. */
  | { kind: 'old-style' }
  | { kind: 'lost'; failure: AgentConnectionError };

/**
 * Sends `BUILD <state> request=<fresh> owner=<owner>` and waits for its exact receipt.
 * A receipt for this request naming another owner is not ours and is ignored.
 * @param timeoutMs bound for the receipt, in ms.
 * @throws nothing: connection failures come back as `{ kind: 'lost' }`.
 */
async function sendBuild(
  connection: AgentConnection,
  state: BuildState,
  owner: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HoldReply> {
  const request = newToken();
  try {
    const receipt = await connection.request(
      buildLine(state, request, owner),
      (event) => (event.level === 'INFO' ? matchBuildReceipt(event.message, request, state, owner) : undefined),
      `BUILD ${state} receipt`,
      timeoutMs,
      signal,
    );
    if (receipt.owner === undefined) return { kind: 'old-style' };
    return { kind: receipt.kind === 'BUILD_ACK' ? 'ack' : 'rejected' };
  } catch (error) {
    if (error instanceof AgentConnectionError) return { kind: 'lost', failure: error };
    if (signal?.aborted)
      return { kind: 'lost', failure: new AgentConnectionError('aborted', `interrupted while waiting for the BUILD ${state} receipt`) };
    throw error;
  }
}

function matchBuildReceipt(message: string, request: string, state: BuildState, owner: string): BuildReceipt | undefined {
  const receipt = parseBuildReceipt(message, request);
  if (receipt === undefined || receipt.state !== state) return undefined;
  return receipt.owner === undefined || receipt.owner === owner ? receipt : undefined;
}

/** Options for {@link acquireHold}. */
export interface AcquireOptions {
  owner: string;
  /** Bound for each receipt, in ms. */
  timeoutMs: number;
  /** How long to keep retrying while another owner holds the build, in ms (0: do not wait). */
  waitMs: number;
  signal?: AbortSignal;
  /** Called while waiting for another owner's hold, with the elapsed time in ms. */
  onBusy?: (elapsedMs: number) => void;
}

/**
 * The result of {@link acquireHold}. `busy`: another owner held it after `waitMs`;
 * `interrupted-waiting`: the signal fired between refused tries (we hold nothing); `lost`: a
 * receipt wait failed (the hold may be ours).
 */
export type AcquireResult =
  | { kind: 'acquired' }
  | { kind: 'busy'; waitedMs: number }
  | { kind: 'interrupted-waiting'; waitedMs: number }
  | Exclude<HoldReply, { kind: 'ack' } | { kind: 'rejected' }>;

/**
 * Acquires the named hold (protocol.md "BUILD"), retrying `started` (fresh request token each) every
 * {@link HOLD_RETRY_MS} ms up to `waitMs` while another owner holds it.
 * @throws nothing: every ending is an {@link AcquireResult}.
 */
async function acquireHold(connection: AgentConnection, options: AcquireOptions): Promise<AcquireResult> {
  const start = performance.now();
  for (;;) {
    const reply = await sendBuild(connection, 'started', options.owner, options.timeoutMs, options.signal);
    if (reply.kind === 'ack') return { kind: 'acquired' };
    if (reply.kind !== 'rejected') return reply;
    const elapsed = performance.now() - start;
    if (elapsed >= options.waitMs) return { kind: 'busy', waitedMs: Math.round(elapsed) };
    options.onBusy?.(Math.round(elapsed));
    // The last retry lands at the end of --wait, not a retry interval before it.
    if (!(await pause(Math.min(HOLD_RETRY_MS, options.waitMs - elapsed), options.signal))) {
      return { kind: 'interrupted-waiting', waitedMs: Math.round(performance.now() - start) };
    }
  }
}

/** How a `BUILD ok`/`failed` exchange ended. */
export type FinishReply = 'ack' | 'rejected' | 'lost' | 'aborted';

/**
 * The hold of one owner on one connection: the BUILD exchanges above, with the state machine
 * (`nextHold` below) advanced by each. `state` says where the hold is at any moment.
 */
export class BuildHold {
  state: HoldState = 'none';

  constructor(
    private readonly connection: AgentConnection,
    /** The owner token every BUILD of this hold carries. */
    readonly owner: string,
    /** Bound for each receipt, in ms. */
    private readonly timeoutMs: number,
  ) {}

  /** Sends `started` until acknowledged, refused or lost (see {@link acquireHold}). */
  async acquire(options: Omit<AcquireOptions, 'owner' | 'timeoutMs'>): Promise<AcquireResult> {
    this.state = nextHold(this.state, 'start');
    const result = await acquireHold(this.connection, { ...options, owner: this.owner, timeoutMs: this.timeoutMs });
    const event =
      result.kind === 'acquired' ? 'acquired' : result.kind === 'busy' || result.kind === 'interrupted-waiting' ? 'refused' : 'lost';
    this.state = nextHold(this.state, event);
    return result;
  }

  /**
   * Sends `ok` or `failed` with a fresh request token and waits for its receipt; an acknowledged
   * `ok` releases the hold (once the agent's capture runs), an acknowledged `failed` leaves it
   * held for this owner. With the connection gone nothing is sent and the hold is unknown.
   * @param signal aborts the wait (then `aborted`); after an interrupt pass none, so the receipt is still awaited.
   */
  async finish(state: 'ok' | 'failed', signal?: AbortSignal): Promise<FinishReply> {
    if (this.connection.closed) {
      this.state = nextHold(this.state, 'lost');
      return 'lost';
    }
    this.state = nextHold(this.state, 'finish');
    const reply = await sendBuild(this.connection, state, this.owner, this.timeoutMs, signal);
    const result: FinishReply =
      reply.kind === 'ack' || reply.kind === 'rejected'
        ? reply.kind
        : reply.kind === 'lost' && reply.failure.kind === 'aborted'
          ? 'aborted'
          : 'lost';
    this.state = nextHold(this.state, result !== 'ack' ? 'lost' : state === 'ok' ? 'released' : 'kept');
    return result;
  }

  /**
   * The build ended, and no result is sent (the agent's file watcher did not start in time, so an
   * `ok` could not be captured): the agent keeps holding for this owner, whose next `started` recovers it.
   */
  leave(): void {
    this.state = nextHold(this.state, 'leave');
  }

  /** After an acknowledged `ok` whose capture failed (a held class file unreadable, a scan unfinished): the agent keeps the hold for this owner. */
  keptAfterOk(): void {
    this.state = nextHold(this.state, 'kept');
  }

  /**
   * After a lost `ok` receipt: sends `failed`, which cancels a capture the `ok` may have
   * scheduled (protocol.md "BUILD"). Whatever its receipt, the hold stays unknown.
   */
  async cancelLostOk(): Promise<FinishReply> {
    if (this.connection.closed) return 'lost';
    const reply = await sendBuild(this.connection, 'failed', this.owner, this.timeoutMs);
    return reply.kind === 'ack' ? 'ack' : 'lost';
  }
}

/**
 * The named build hold as a state machine (protocol.md "BUILD"), as this client sees it:
 *
 *   none ──start──▶ acquiring ──acquired──▶ held ──finish──▶ finishing ──released──▶ released
 *                    │  └──refused──▶ none   │                │  └──kept──────▶ left
 *                    └──lost──▶ unknown      ├──leave──▶ left └──lost──▶ unknown
 *                                            └──lost──▶ unknown   released ──kept──▶ left
 *
 * `left`: our `failed` was acknowledged, our ok's capture failed (agent ReloadQueue.acceptBuild),
 * or the hold was left with no result sent: the agent holds for our owner token. `unknown`: the
 * hold may or may not be ours. A new cycle may start from any but acquiring, held and finishing.
 */

/** Where the hold is. */
export type HoldState = 'none' | 'acquiring' | 'held' | 'finishing' | 'released' | 'left' | 'unknown';

/**
 * What happened to it.
 * @internal for its tests
 */
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
  /** The build ended and no result is sent: the agent keeps holding for our owner. */
  | 'leave'
  /** A receipt was lost or rejected, the reply was not an owned one, or the connection closed. */
  | 'lost';

const TRANSITIONS: Readonly<Record<HoldState, Partial<Record<HoldEvent, HoldState>>>> = {
  none: { start: 'acquiring' },
  acquiring: { acquired: 'held', refused: 'none', lost: 'unknown' },
  held: { finish: 'finishing', lost: 'unknown', leave: 'left' },
  finishing: { released: 'released', kept: 'left', lost: 'unknown' },
  released: { start: 'acquiring', kept: 'left' },
  left: { start: 'acquiring', finish: 'finishing', lost: 'unknown' },
  unknown: { start: 'acquiring', finish: 'finishing', lost: 'unknown' },
};

/**
 * The state after `event` in `state`.
 * @throws Error for an event the state does not allow (a bug in the flow, never the agent's doing).
 * @internal for its tests
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
