/**
 * The V8 young generation of a process that works on a large class index. V8 doubles the young
 * generation (up to 2 x 16 MB on 64-bit) whenever as many bytes survived its collections as it
 * holds; a scan keeps a little of what it allocates (the index's paths, the changes it found),
 * and its garbage (a `fs.Stats` per class file, about 1 KB) then fills the largest size: some
 * 30 MB of a 200,000-class run's peak. The limit is set only on the command line, but the growth
 * factor is read each time it grows: a factor of 1 keeps it at the size it has.
 */
import v8 from 'node:v8';

/** V8's own growth factor (`node --v8-options`), put back at exit. */
const DEFAULT_GROWTH_FACTOR = 2;

let kept = false;

/**
 * Keeps the young generation at the size it has from now until the process exits (V8's
 * `--semi-space-growth-factor` set to 1); once per process, later calls do nothing. V8's default
 * is put back on `exit` before any listener registered earlier runs: V8 hashes its flags into a
 * code cache, and a cache taken at exit with the flag changed (cli/launch.ts takes one there)
 * would be rejected by every next run. Only the garbage collector's sizes change, no behaviour;
 * a process started with its own growth factor is left as it is.
 */
export function keepYoungGenerationSmall(): void {
  if (kept || process.execArgv.some((arg) => arg.startsWith('--semi-space-growth-factor'))) return;
  kept = true;
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  process.prependListener('exit', () => v8.setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH_FACTOR}`));
}
