/**
 * Detection in watch mode costs what changed, not the tree: a cycle stats only folders with events
 * (classwatch.ts). Since events are hints, a background full pass runs every
 * {@link FULL_PASS_EVERY_MS} ms, and a cycle whose last full pass is older scans everything.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { FULL_PASS_EVERY_MS, watchClassDirs, type ClassWatch } from './classwatch.js';

/** How long detection waits for the build's last events to come in: until none came for this long, in ms. */
const EVENTS_QUIET_MS = 15;
/** The longest wait for the build's last events, in ms. */
const EVENTS_WAIT_MS = 200;
/** How often the background checks whether a full pass is due, in ms. */
const BACKGROUND_CHECK_MS = 5000;

/** What {@link classHints} needs. */
export interface HintOptions {
  /** The full stat pass: the folders whose class files differ from the record (session/detect.ts). */
  stalePass: (dirs: readonly string[]) => Promise<Iterable<string>>;
  /** The longest time between two full passes, in ms (default {@link FULL_PASS_EVERY_MS}). */
  fullPassEveryMs?: number;
  /** How often the background looks whether a pass is due, in ms (default {@link BACKGROUND_CHECK_MS}). */
  checkEveryMs?: number;
  /** Called for a watcher error (the watch goes on) and for a background pass that failed. */
  onError: (error: Error) => void;
}

/** A running set of hints. */
export interface ClassHints {
  /** Watches `dirs` (the class output directories found before any cycle), so that changes before the first cycle are seen. */
  watch(dirs: readonly string[]): Promise<void>;
  /** A new cycle begins: its first `changedFolders` takes the folders. */
  startCycle(): void;
  /** For the cycle (session/options.ts `changedFolders`): the folders to scan, or undefined for a full pass. */
  changedFolders(dirs: readonly string[], full: boolean): Promise<ReadonlySet<string> | undefined>;
  /** Stops watching; releases every handle and timer. */
  close(): Promise<void>;
}

/** Starts the hints; nothing is watched until the first cycle names its class output directories. */
export function classHints(options: HintOptions): ClassHints {
  const every = options.fullPassEveryMs ?? FULL_PASS_EVERY_MS;
  let watch: ClassWatch | undefined;
  let dirs: readonly string[] = [];
  /** This cycle's folders (undefined inside: a full pass), once taken. */
  let taken: Promise<ReadonlySet<string> | undefined> | undefined;
  let busy: Promise<unknown> = Promise.resolve();
  let closed = false;

  /** The background pass: only between cycles, and only when one is due. */
  const background = () => {
    const current = watch;
    if (current === undefined || !current.fullPassDue()) return;
    const startedAt = Date.now();
    busy = busy.then(async () => {
      if (closed || current !== watch || !current.fullPassDue()) return;
      try {
        current.markDirty(await options.stalePass(dirs));
        current.markFullPass(startedAt);
      } catch (error) {
        options.onError(error instanceof Error ? error : new Error(String(error)));
      }
    });
  };
  const timer = setInterval(background, options.checkEveryMs ?? BACKGROUND_CHECK_MS);
  /** The watch covering `now`: the current one, or a new one over them and the ones watched so far. */
  const rewatch = async (now: readonly string[]): Promise<ClassWatch> => {
    if (watch !== undefined && now.every((dir) => dirs.includes(dir))) return watch;
    await watch?.close();
    taken = undefined;
    dirs = [...new Set([...dirs, ...now])];
    // Its first pass is always full: fullPassDue is true until it is ready and a pass is marked.
    watch = watchClassDirs({ dirs, fullPassEveryMs: every, onError: options.onError });
    return watch;
  };

  return {
    async watch(now) {
      await rewatch(now);
    },
    startCycle() {
      taken = undefined;
    },
    async changedFolders(now, full) {
      const current = await rewatch(now);
      // Several agents: each session of the cycle asks; the folders are taken once, by the first.
      taken ??= (async () => {
        // A background pass in progress finishes first: its findings belong to this cycle.
        await busy;
        await eventsIn(current);
        const startedAt = Date.now();
        if (current.fullPassDue(startedAt)) {
          current.takeDirtyFolders();
          current.markFullPass(startedAt);
          return undefined;
        }
        return current.takeDirtyFolders();
      })();
      const folders = await taken;
      return full || current !== watch ? undefined : folders;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await busy;
      await watch?.close();
    },
  };
}

/** Waits until the class watch had no new dirty folder for {@link EVENTS_QUIET_MS} ms, at most {@link EVENTS_WAIT_MS} ms. */
async function eventsIn(watch: ClassWatch): Promise<void> {
  const start = performance.now();
  let count = -1;
  while (watch.dirtyCount !== count && performance.now() - start < EVENTS_WAIT_MS) {
    count = watch.dirtyCount;
    await sleep(EVENTS_QUIET_MS);
  }
}
