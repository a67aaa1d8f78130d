/**
 * The agent's state while a build's VERIFY round runs, which can end the wait for classes it
 * has not attempted long before the deadline (protocol.md "What the agent's source shows"):
 *
 * - **Paused**: `BUILD ok` while reloads are paused captures, releases the hold and keeps the
 *   batch pending until resume (agent ReloadQueue.acceptBuild), so nothing is attempted: the
 *   classes are pending until resume.
 * - **Capture over**: once the hold is released, nothing is pending (RELOAD status) and the
 *   watcher runs (DOCTOR), every change the agent saw has been dispatched; after a grace for the
 *   watcher's debounce and batching, a class with no attempt of its bytes was not seen by it.
 *
 * - **Hold kept**: a held capture that cannot read a pending class file broadcasts ERROR
 *   `Failed to read class file <path>: ...`, puts its batch back and keeps the hold with its
 *   owner although `ok` was acknowledged (agent ReloadQueue.acceptBuild): nothing of the build is
 *   attempted while RELOAD status still shows the named hold.
 *
 * RELOAD status is asked every {@link POLL_MS} ms on the round's connection; any failure to
 * get it ends the watching (the round then waits as it would without it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConnection } from '../agent/connection.js';
import { unreadClassFile } from '../agent/reports.js';
import { askDoctor, askReload } from '../agent/requests.js';
import { roundEnd } from '../report/step-words.js';
import type { VerifyOptions } from '../verify/round.js';

/** How often the agent's state is asked, in ms. */
const POLL_MS = 250;
/**
 * How long the agent must show its capture over before an unattempted class counts as unseen,
 * in ms: the watcher's debounce (500 ms by default) and a batch's gathering (1 s at most), twice.
 */
const GRACE_MS = 3000;

/** What the watching needs. Times in ms. */
export interface CaptureWatchOptions {
  /** Bound per receipt. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** DOCTOR showed the watcher still starting: nothing counts as unseen until it runs. */
  watcherStarting: boolean;
  /** The class file the agent's capture could not read since this build's ok, if it said so ({@link readFailures}). */
  readFailure?: () => string | undefined;
}

/** What {@link readFailures} saw, until stopped. */
export interface ReadFailures {
  /** The first path the agent said it could not read, if any. */
  path: () => string | undefined;
  stop: () => void;
}

/**
 * Listens on `connection` for the agent's `Failed to read class file <path>` ERROR from now on
 * (call it before `BUILD ok` is sent: the capture may fail before the VERIFY round starts).
 */
export function readFailures(connection: AgentConnection): ReadFailures {
  let seen: string | undefined;
  const stop = connection.listen((event) => {
    if (event.level === 'ERROR') seen ??= unreadClassFile(event.message);
  });
  return { path: () => seen, stop };
}

/** The `watch` of a build's VERIFY round (verify/types.ts) on `connection`. */
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
    if (state.paused) return stop({ status: 'paused', detail: roundEnd.paused, all: true, sinceMs: askedAt });
    const unread = options.readFailure?.();
    if (unread !== undefined && state.buildHold === 'named')
      return stop({ status: 'hold-kept', detail: roundEnd.holdKept(unread), all: true, sinceMs: askedAt });
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
      return stop({ status: 'not-watched', detail: roundEnd.unseen, all: false, sinceMs: quietSince + GRACE_MS });
  }
}
