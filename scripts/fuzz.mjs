#!/usr/bin/env node
// npm run fuzz: the truth fuzz (test/fuzz/truth.test.ts) for as long as it is asked to run, with
// its seed and count: `npm run fuzz -- --seed 123 --count 5000`; `--seed <n> --path <path>`
// replays the one sequence a failure names; `--workers <n>` plays that many at a time in each
// process (default 16), `--processes <n>` splits the count over that many processes (default 2: the
// sequences run in process with their fake agents, so one process uses one core), the i-th one
// seeded `seed + 1000 * i`. It prints its throughput (sequences/s), and on a false ✔ the seed, the
// path and the shrunk sequence. `--focus two-apps` searches two apps sharing a class output
// directory while one of them dies and comes back. It runs that one file alone, without the e2e
// project's warm-up.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startVitest } from 'vitest/node';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    count: { type: 'string' },
    path: { type: 'string' },
    workers: { type: 'string' },
    processes: { type: 'string' },
    focus: { type: 'string' },
  },
});
for (const [name, value] of Object.entries(values)) {
  if (name === 'focus' && value !== 'all' && value !== 'two-apps') {
    console.error(`npm run fuzz: --focus takes all or two-apps, not ${JSON.stringify(value)}`);
    process.exit(2);
  }
  if (name !== 'path' && name !== 'focus' && !/^-?\d+$/.test(value)) {
    console.error(
      `npm run fuzz: --${name} takes a whole number, not ${JSON.stringify(value)} (e.g. npm run fuzz -- --seed 123 --count 5000)`,
    );
    process.exit(2);
  }
}
const processes = Number(values.processes ?? 2);
if (processes > 1 && values.path === undefined) {
  const seed = values.seed === undefined ? (Date.now() ^ (process.pid << 8)) | 0 : Number(values.seed);
  const count = Number(values.count ?? 24);
  const started = performance.now();
  console.log(`npm run fuzz: seed ${seed}, ${count} sequences over ${processes} processes`);
  const codes = await Promise.all(
    Array.from({ length: processes }, (_, i) => {
      const share = Math.floor(count / processes) + (i < count % processes ? 1 : 0);
      const args = [fileURLToPath(import.meta.url), '--processes', '1', '--seed', String(seed + 1000 * i), '--count', String(share)];
      if (values.workers !== undefined) args.push('--workers', values.workers);
      if (values.focus !== undefined) args.push('--focus', values.focus);
      const child = spawn(process.execPath, args, { stdio: 'inherit' });
      return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const failed = codes.some((code) => code !== 0);
  console.log(
    `npm run fuzz: seed ${seed}, ${count} sequences in ${seconds.toFixed(1)} s: ${(count / seconds).toFixed(2)} sequences/s; ${failed ? 'a false ✔ or an error (above)' : 'no false ✔'}`,
  );
  process.exit(failed ? 1 : 0);
}
const env = {
  seed: 'RECLAZZ_FUZZ_SEED',
  count: 'RECLAZZ_FUZZ_COUNT',
  path: 'RECLAZZ_FUZZ_PATH',
  workers: 'RECLAZZ_FUZZ_WORKERS',
  focus: 'RECLAZZ_FUZZ_FOCUS',
};
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
