#!/usr/bin/env node
// npm run fuzz: the truth fuzz (test/fuzz/truth.test.ts) for as long as it is asked to run, with
// its seed and count: `npm run fuzz -- --seed 123 --count 5000`; `--seed <n> --path <path>`
// replays the one sequence a failure names; `--workers <n>` plays that many at a time (default 6).
// It prints its throughput (sequences/s), and on a false ✔ the seed, the path and the shrunk
// sequence. It runs that one file alone, without the e2e project's fixture warm-up.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startVitest } from 'vitest/node';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    count: { type: 'string' },
    path: { type: 'string' },
    workers: { type: 'string' },
  },
});
for (const [name, value] of Object.entries(values)) {
  if (name !== 'path' && !/^-?\d+$/.test(value)) {
    console.error(
      `npm run fuzz: --${name} takes a whole number, not ${JSON.stringify(value)} (e.g. npm run fuzz -- --seed 123 --count 5000)`,
    );
    process.exit(2);
  }
}
const env = { seed: 'RECLAZZ_FUZZ_SEED', count: 'RECLAZZ_FUZZ_COUNT', path: 'RECLAZZ_FUZZ_PATH', workers: 'RECLAZZ_FUZZ_WORKERS' };
for (const [name, variable] of Object.entries(env)) if (values[name] !== undefined) process.env[variable] = values[name];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const vitest = await startVitest('test', ['test/fuzz/truth.test.ts'], {
  root,
  config: false,
  include: ['test/fuzz/truth.test.ts'],
  setupFiles: ['test/support/setup.ts'],
  globalSetup: ['test/support/global-setup.ts'],
  testTimeout: 0,
  watch: false,
});
await vitest?.close();
process.exit(vitest?.state.getCountOfFailedTests() === 0 ? 0 : 1);
