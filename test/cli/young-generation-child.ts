/**
 * A child process for young-generation.test.ts (run with --expose-gc). `grow` / `grow-small`:
 * keeps 400,000 small objects (as a scan keeps what it found), inside withSmallYoungGeneration
 * with `grow-small`, then as many more once it returned, and prints the young generation's size
 * before, after the first and after the second, in bytes. `cache-after` / `cache-during`: writes
 * to `file` the code cache of a small script, taken after withSmallYoungGeneration returned /
 * while it runs; `cache-overlap`: two works at once, the cache taken once the first ended while
 * the second runs (`file`) and once both ended (`file.both`); `load`: prints whether a process
 * with V8's own flags rejects the cache in `file`.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { withSmallYoungGeneration } from '../../src/cli/memory.js';

const [mode, file] = process.argv.slice(2);
const source = 'function add(a, b) { return a + b; } add(1, 2);';
const takeCache = () => fs.writeFileSync(file!, new vm.Script(source).createCachedData());
const youngBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
const keep = (kept: object[]) => {
  for (let row = 0; row < 400_000; row += 1) kept.push({ row, name: `com/acme/Class${row}.class` });
};

if (mode === 'grow' || mode === 'grow-small') {
  // One young collection first: it commits the second half of the young generation, which is not growth.
  (globalThis.gc as unknown as (options: { type: 'minor' }) => void)({ type: 'minor' });
  const before = youngBytes();
  const kept: object[] = [];
  if (mode === 'grow-small') await withSmallYoungGeneration(async () => keep(kept));
  else keep(kept);
  const during = youngBytes();
  keep(kept);
  console.log(JSON.stringify({ before, during, after: youngBytes() }));
} else if (mode === 'cache-after') {
  await withSmallYoungGeneration(async () => undefined);
  takeCache();
} else if (mode === 'cache-overlap') {
  let endSecond = () => {};
  const second = withSmallYoungGeneration(() => new Promise<void>((resolve) => (endSecond = resolve)));
  await withSmallYoungGeneration(async () => undefined);
  takeCache();
  endSecond();
  await second;
  fs.writeFileSync(`${file!}.both`, new vm.Script(source).createCachedData());
} else if (mode === 'cache-during') {
  await withSmallYoungGeneration(async () => takeCache());
} else {
  console.log(JSON.stringify({ rejected: new vm.Script(source, { cachedData: fs.readFileSync(file!) }).cachedDataRejected }));
}
