/**
 * A child process for young-generation.test.ts (run with --expose-gc). `grow` / `grow-small`:
 * keeps 400,000 small objects (as a scan keeps what it found), after keepYoungGenerationSmall
 * with `grow-small`, and prints the young generation's size before and after, in bytes.
 * `cache-at-exit` / `cache-now`: writes to `file` the code cache of a small script, taken by an
 * `exit` listener registered before keepYoungGenerationSmall (as cli/launch.ts does) / right
 * after it; `load`: prints whether a process with V8's own flags rejects that cache.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { keepYoungGenerationSmall } from '../../src/session/young-generation.js';

const [mode, file] = process.argv.slice(2);
const source = 'function add(a, b) { return a + b; } add(1, 2);';
const takeCache = () => fs.writeFileSync(file!, new vm.Script(source).createCachedData());
const youngBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;

if (mode === 'grow' || mode === 'grow-small') {
  // One young collection first: it commits the second half of the young generation, which is not growth.
  (globalThis.gc as unknown as (options: { type: 'minor' }) => void)({ type: 'minor' });
  const before = youngBytes();
  if (mode === 'grow-small') keepYoungGenerationSmall();
  const kept: object[] = [];
  for (let row = 0; row < 400_000; row += 1) kept.push({ row, name: `com/acme/Class${row}.class` });
  console.log(JSON.stringify({ before, after: youngBytes() }));
} else if (mode === 'cache-at-exit') {
  process.on('exit', takeCache);
  keepYoungGenerationSmall();
} else if (mode === 'cache-now') {
  keepYoungGenerationSmall();
  takeCache();
} else {
  console.log(JSON.stringify({ rejected: new vm.Script(source, { cachedData: fs.readFileSync(file!) }).cachedDataRejected }));
}
