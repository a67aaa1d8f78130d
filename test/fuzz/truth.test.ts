/**
 * The truth fuzz (issue 38): random sequences of what a developer, a build and an IDE do to a
 * checkout of one or two apps, each app a fake agent whose JVM's truth oracle says what it runs.
 * The property: a run that ends 0 with a proof covered only classes its JVMs run, or would load
 * first, exactly as the bytes on disk. A counterexample is shrunk, printed with its seed and path,
 * and kept as a named regression test (truth-regressions.test.ts).
 *
 * CI plays a bounded number; `npm run fuzz -- --seed <n> --count <n>` plays more and prints its
 * throughput; `--seed <n> --path <path>` replays one (RECLAZZ_FUZZ_SEED, RECLAZZ_FUZZ_COUNT and
 * RECLAZZ_FUZZ_PATH say the same); `--focus two-apps` (RECLAZZ_FUZZ_FOCUS) searches two apps sharing a
 * class output directory while one of them dies and comes back.
 */
import { expect, it } from 'vitest';
import { describeScenario, runTruthFuzz, type Counterexample, type Focus } from '../support/truth-fuzz.js';

const SEED = process.env.RECLAZZ_FUZZ_SEED !== undefined ? Number(process.env.RECLAZZ_FUZZ_SEED) : (Date.now() ^ (process.pid << 8)) | 0;
const COUNT = Number(process.env.RECLAZZ_FUZZ_COUNT ?? 24);
const PATH = process.env.RECLAZZ_FUZZ_PATH;
const WORKERS = Number(process.env.RECLAZZ_FUZZ_WORKERS ?? 16);
const FOCUS: Focus = process.env.RECLAZZ_FUZZ_FOCUS === 'two-apps' ? 'two-apps' : 'all';

it(`${PATH === undefined ? COUNT : 1} sequences: no run ends 0 with a proof while a JVM runs other bytes than it covered`, async () => {
  console.log(
    `truth fuzz: seed ${SEED}, ${PATH === undefined ? `${COUNT} sequences, ${WORKERS} at a time` : `replaying path ${PATH}`}${FOCUS === 'all' ? '' : `, focus ${FOCUS}`}`,
  );
  let last = performance.now();
  const report = await runTruthFuzz({
    seed: SEED,
    count: COUNT,
    workers: WORKERS,
    focus: FOCUS,
    ...(PATH === undefined ? {} : { path: PATH }),
    // Printed at once, so a run stopped early still shows it.
    onFailure: (failure) => console.log(`truth fuzz: FALSE ✔\n${describeFailure(failure)}`),
    onProgress: (ran) => {
      if (performance.now() - last < 30_000) return;
      last = performance.now();
      console.log(`truth fuzz: ${ran} sequences played`);
    },
  });
  const seconds = report.ms / 1000;
  console.log(
    `truth fuzz: ${report.ran} sequences (${report.runs} runs, ${report.proven} of them ✔) in ${seconds.toFixed(1)} s: ` +
      `${(report.ran / seconds).toFixed(2)} sequences/s`,
  );
  const failed = report.failures.map(describeFailure);
  expect(failed).toEqual([]);
}, 3_600_000);

function describeFailure(f: Counterexample): string {
  const focus = FOCUS === 'all' ? '' : ` --focus ${FOCUS}`;
  return `seed ${f.seed}, path ${f.path} (replay: npm run fuzz -- --seed ${f.seed} --path ${f.path}${focus})\n${f.error}\nthe shrunk sequence:\n${describeScenario(f.scenario)}`;
}
