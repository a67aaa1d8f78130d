/**
 * The rules that end a build's VERIFY round early (verify/round.ts `watch`): the agent's state shows
 * it will not attempt a class (paused, its capture over, or its hold kept after a failed capture).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConnection } from '../agent/connection.js';
import { keptHoldCause } from '../agent/reports.js';
import { askDoctor, askReload } from '../agent/requests.js';
import type { HoldKeptCause } from '../outcome/outcome.js';
import type { VerifyOptions } from '../verify/round.js';

/**
 * The agent's state can end a build's VERIFY round for unattempted classes long before the deadline
 * (protocol.md "What the agent's source shows"; agent ReloadQueue.acceptBuild). RELOAD status is
 * asked every {@link POLL_MS} ms; a failure to get it ends the watching, and the round waits on.
 * - Paused: `BUILD ok` captures, releases the hold and keeps the batch pending until resume.
 * - Capture over: hold released, nothing pending, the watcher running (DOCTOR) for {@link GRACE_MS}:
 *   every change the agent saw was dispatched, so a class with no attempt of its bytes was unseen.
 * - Hold kept: a capture that cannot read a held class file (ERROR `Failed to read class file
 *   <path>: ...`), or whose scan did not finish (ERROR `Accepting build output failed: ... Build scan
 *   did not finish`: the watcher not running), puts its batch back and keeps the hold with its owner
 *   although `ok` was acknowledged: nothing is attempted while RELOAD status shows the named hold.
 */

/** How often the agent's state is asked, in ms. */
const POLL_MS = 250;
/**
 * How long the agent must show its capture over before an unattempted class counts as unseen,
 * in ms: the watcher's debounce (500 ms by default) and a batch's gathering (1 s at most), twice.
 */
const GRACE_MS = 3000;

/** What the watching needs. Times in ms. */
interface CaptureWatchOptions {
  /** Bound per receipt. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** DOCTOR showed the watcher still starting: nothing counts as unseen until it runs. */
  watcherStarting: boolean;
  /** Why the agent's capture failed since this build's ok, if it said so ({@link readFailures}). */
  readFailure?: () => HoldKeptCause | undefined;
}

/** What {@link readFailures} saw, until stopped. */
export interface ReadFailures {
  /** The first failure of its capture the agent told, if any. */
  cause: () => HoldKeptCause | undefined;
  stop: () => void;
}

/**
 * Listens on `connection` for the agent's ERROR that its held capture failed (agent/reports.ts
 * keptHoldCause), whatever its file watcher's state, from now on (call it before `BUILD ok` is
 * sent: the capture may fail before the VERIFY round starts).
 */
export function readFailures(connection: AgentConnection): ReadFailures {
  let seen: HoldKeptCause | undefined;
  const stop = connection.listen((event) => {
    if (event.level === 'ERROR') seen ??= keptHoldCause(event.message);
  });
  return { cause: () => seen, stop };
}

/** The `watch` of a build's VERIFY round (verify/round.ts) on `connection`. */
export function captureWatch(connection: AgentConnection, options: CaptureWatchOptions): NonNullable<VerifyOptions['watch']> {
  return (stop) => {
    const ended = new AbortController();
    const signal = options.signal === undefined ? ended.signal : AbortSignal.any([ended.signal, options.signal]);
    void watchLoop(connection, { ...options, signal }, stop).catch(() => undefined);
    return () => ended.abort();
  };
}

async function watchLoop(
  connection: AgentConnection,
  options: CaptureWatchOptions & { signal: AbortSignal },
  stop: Parameters<NonNullable<VerifyOptions['watch']>>[0],
): Promise<void> {
  const { signal, timeoutMs } = options;
  let watching = !options.watcherStarting;
  let quietSince: number | undefined;
  for (;;) {
    await sleep(POLL_MS, undefined, { signal });
    const askedAt = performance.now();
    const state = await askReload(connection, 'status', timeoutMs, signal);
    if (state.paused) return stop({ status: 'paused', why: { kind: 'paused' }, all: true, sinceMs: askedAt });
    const failed = options.readFailure?.();
    if (failed !== undefined && state.buildHold === 'named')
      return stop({ status: 'hold-kept', why: { kind: 'hold-kept', cause: failed }, all: true, sinceMs: askedAt });
    if (!watching) {
      const answer = await askDoctor(connection, timeoutMs, signal);
      watching = answer.kind === 'observed' && answer.doctor.watcherState === 'watching';
    }
    const over = watching && state.buildHold === 'none' && state.pendingClasses === 0;
    if (!over) {
      quietSince = undefined;
      continue;
    }
    quietSince ??= askedAt;
    if (performance.now() - quietSince >= GRACE_MS)
      return stop({ status: 'not-watched', why: { kind: 'capture-over' }, all: false, sinceMs: quietSince + GRACE_MS });
  }
}
