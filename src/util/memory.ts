/** What a long-running process does with V8's memory: a cycle's young generation, and a watch's heap between cycles. */
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * The V8 young generation while a cycle works on the class index. V8 doubles the young
 * generation (up to 2 x 16 MB on 64-bit) whenever as many bytes survived its collections as it
 * holds; a scan keeps a little of what it allocates (the index's paths, the changes it found),
 * and its garbage (a `fs.Stats` per class file, about 1 KB) then fills the largest size: some
 * 30 MB of a 200,000-class run's peak. The limit is set only on the command line, but the growth
 * factor is read each time it grows: a factor of 1 keeps it at the size it has.
 */

/** V8's own growth factor (`node --v8-options`), put back when the work is done. */
const DEFAULT_GROWTH_FACTOR = 2;

/** Works running at once (several agents' cycles): the factor is put back when the last one ends. */
let working = 0;

/**
 * Runs `work` with the young generation kept at the size it has (V8's
 * `--semi-space-growth-factor` set to 1), then puts V8's default back: V8 hashes its flags into
 * a code cache, and a cache taken at exit with the flag changed (cli/launch.ts takes one when it
 * has none) would be rejected by every next run. Only the garbage collector's sizes change, no
 * behaviour.
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

/**
 * Between two cycles a watch gives back the memory the cycle used: a full garbage collection.
 * V8 otherwise lets a long-lived process's heap grow towards its limits (about 40 MB more in
 * 400 cycles here, none of it live), which a watch left open all day should not.
 */
let collect: (() => void) | null | undefined;

/** Runs a full garbage collection, where V8 allows one to be asked for; else nothing. Never throws. */
export function collectGarbage(): void {
  if (collect === undefined) {
    try {
      // The documented way to reach V8's gc() without starting Node with --expose-gc.
      v8.setFlagsFromString('--expose-gc');
      collect = vm.runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  collect?.();
}
