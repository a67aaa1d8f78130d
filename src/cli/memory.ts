/**
 * What the command line does with V8's memory: a run's young generation, and a watch's heap between
 * cycles. Here, not in the rooms below: V8 flags are the whole process's, and the library, called in
 * someone else's process, must leave them as it found them.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * The V8 young generation while a run works on the class index: V8 doubles it (up to 2 x 16 MB)
 * as a scan's survivors pile up, and its garbage then fills it (some 30 MB of a 200,000-class
 * peak). Its limit is command-line only, but a growth factor of 1, read at each growth, stops it.
 */

/** V8's own growth factor (`node --v8-options`), put back when the work is done. */
const DEFAULT_GROWTH_FACTOR = 2;

/** Works running at once: the factor is put back when the last one ends. */
let working = 0;

/**
 * Runs `work` with `--semi-space-growth-factor` 1, then puts V8's default back: V8 hashes its flags
 * into the code cache (launch.ts), which every next run would otherwise reject.
 * @returns what `work` returns; rejects as it does.
 */
export async function withSmallYoungGeneration<T>(work: () => Promise<T>): Promise<T> {
  if (working++ === 0) v8.setFlagsFromString('--semi-space-growth-factor=1');
  try {
    return await work();
  } finally {
    if (--working === 0) v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`);
  }
}

/** Between cycles a watch runs a full collection: else its heap grows (40 MB in 400 cycles, none live). */
let collect: (() => void) | null | undefined;

/** Runs a full garbage collection, where V8 allows one to be asked for; else nothing. Never throws. */
export function collectGarbage(): void {
  if (collect === undefined) {
    try {
      // The documented way to reach V8's gc() without starting Node with --expose-gc; the flag is
      // put back once the function is had (it stays usable), as the code cache needs (above).
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  collect?.();
}
