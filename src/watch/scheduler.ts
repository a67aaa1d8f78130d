/**
 * The cycle scheduler of `reclazz-build watch`: a change starts a cycle after a quiet period;
 * changes during a cycle make exactly one next cycle; two cycles never overlap.
 */

/** The default quiet period before a cycle starts, in ms (issue: `--debounce`, default 300). */
export const DEFAULT_DEBOUNCE_MS = 300;

/** The longest quiet period accepted, in ms: what one timer can wait (about 24.8 days). */
const MAX_DEBOUNCE_MS = 2_147_483_647;

/** A cycle about to run. */
interface CycleStart {
  /** 1 for the first cycle of the scheduler, then 2, 3... */
  cycle: number;
  /** The paths that changed since the previous cycle started, sorted, without repeats. */
  changed: readonly string[];
}

/** How `runCycle` settled: its value, or what it threw. */
type CycleOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * A cycle that has ended.
 * @internal for its tests
 */
export interface CycleEnd<T> extends CycleStart {
  /** From just before `runCycle` was called until it settled, in ms. */
  durationMs: number;
  /** True when `stop()` aborted the cycle's signal before it settled. */
  aborted: boolean;
  outcome: CycleOutcome<T>;
}

/** What {@link createCycleScheduler} needs. */
export interface CycleSchedulerOptions<T> {
  /**
   * Runs one cycle for the changed paths. `signal` is aborted (with `stop()`'s reason) when the
   * scheduler is stopped during the cycle; the cycle should then stop its build and settle. A
   * rejection is reported as the cycle's outcome and the scheduler goes on.
   */
  runCycle: (changed: readonly string[], signal: AbortSignal) => Promise<T>;
  /** The quiet period in ms, 0 to {@link MAX_DEBOUNCE_MS} (default {@link DEFAULT_DEBOUNCE_MS}). */
  debounceMs?: number;
  /** Called just before `runCycle`. */
  onCycleStart?: (start: CycleStart) => void;
  /** Called when `runCycle` has settled, before the next cycle can start. */
  onCycleEnd?: (end: CycleEnd<T>) => void;
  /** Called with what a callback threw; by default it is rethrown outside the scheduler, so it is not lost. */
  onError?: (error: unknown) => void;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/** Where a scheduler is: no change pending, waiting for quiet, running a cycle, or stopped. */
type SchedulerState = 'idle' | 'waiting' | 'running' | 'stopped';

/** A running scheduler. */
export interface CycleScheduler {
  /** Reports changed paths; ignored once stopped. An empty list changes nothing. */
  notify(paths: string | Iterable<string>): void;
  /** Stops and drops pending changes; aborts a running cycle with `reason` and resolves once it settled. Idempotent. */
  stop(reason?: unknown): Promise<void>;
  readonly state: SchedulerState;
  /** How many cycles have started. */
  readonly cycles: number;
}

/**
 * Creates a scheduler; nothing runs until the first `notify`.
 * @throws RangeError when `debounceMs` is not a whole number of ms from 0 to {@link MAX_DEBOUNCE_MS}.
 */
export function createCycleScheduler<T>(options: CycleSchedulerOptions<T>): CycleScheduler {
  const debounceMs = checkedDebounce(options.debounceMs);
  const now = options.now ?? Date.now;
  const call = guardedCaller(options.onError);

  let pending = new Set<string>();
  let lastChangeAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let controller: AbortController | undefined;
  let stopping: Promise<void> | undefined;
  let cycles = 0;

  const wait = (ms: number): void => {
    clearTimeout(timer);
    timer = setTimeout(fire, ms);
  };

  function fire(): void {
    timer = undefined;
    if (stopping || running || pending.size === 0) return;
    const changed = [...pending].sort();
    pending = new Set();
    run(changed);
  }

  function run(changed: readonly string[]): void {
    const cycle = ++cycles;
    const abort = new AbortController();
    controller = abort;
    running = (async () => {
      call(options.onCycleStart, { cycle, changed });
      const startedAt = now();
      const outcome = await settle(() => options.runCycle(changed, abort.signal));
      call(options.onCycleEnd, { cycle, changed, durationMs: now() - startedAt, aborted: abort.signal.aborted, outcome });
    })().finally(() => {
      running = undefined;
      controller = undefined;
      // Changes made during the cycle: one next cycle, a quiet period after the last of them.
      if (!stopping && pending.size > 0) wait(Math.max(0, lastChangeAt + debounceMs - now()));
    });
  }

  return {
    notify(paths) {
      if (stopping) return;
      const before = pending.size;
      for (const changed of typeof paths === 'string' ? [paths] : paths) pending.add(changed);
      if (pending.size === before && before === 0) return;
      lastChangeAt = now();
      if (!running) wait(debounceMs);
    },
    stop(reason) {
      stopping ??= (async () => {
        clearTimeout(timer);
        timer = undefined;
        pending = new Set();
        if (running) {
          controller?.abort(reason);
          await running;
        }
      })();
      return stopping;
    },
    get state(): SchedulerState {
      if (stopping) return 'stopped';
      if (running) return 'running';
      return timer ? 'waiting' : 'idle';
    },
    get cycles() {
      return cycles;
    },
  };
}

/**
 * The quiet period to use, in ms: `debounceMs`, or {@link DEFAULT_DEBOUNCE_MS} when it is not given.
 * @throws RangeError when it is not a whole number of ms from 0 to {@link MAX_DEBOUNCE_MS}.
 */
function checkedDebounce(debounceMs: number | undefined): number {
  const ms = debounceMs ?? DEFAULT_DEBOUNCE_MS;
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_DEBOUNCE_MS) {
    throw new RangeError(`the debounce must be a whole number of ms from 0 to ${MAX_DEBOUNCE_MS}, got ${String(ms)}`);
  }
  return ms;
}

/**
 * Calls a user callback without letting what it throws break the scheduler: it goes to `onError`,
 * or by default is rethrown outside the scheduler, so it is not lost.
 */
function guardedCaller(onError: ((error: unknown) => void) | undefined) {
  const report =
    onError ??
    ((error: unknown) =>
      setImmediate(() => {
        throw error;
      }));
  return <A>(callback: ((arg: A) => void) | undefined, arg: A): void => {
    try {
      callback?.(arg);
    } catch (error) {
      report(error);
    }
  };
}

/** How a cycle settled: its value, or what it threw or rejected with (a synchronous throw included). */
async function settle<T>(cycle: () => Promise<T>): Promise<CycleOutcome<T>> {
  try {
    return { ok: true, value: await cycle() };
  } catch (error) {
    return { ok: false, error };
  }
}
