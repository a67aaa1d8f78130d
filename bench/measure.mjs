/**
 * How the bench times things: child processes timed from spawn to exit, their exit status
 * checked, rounds of variants that alternate, and the statistics of a figure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** Environment of every child: plain output, no reclazz variables from the caller. */
export const ENV = Object.fromEntries(
  Object.entries({ ...process.env, CI: 'true', NO_COLOR: '1' }).filter(([k]) => !k.startsWith('RECLAZZ_')),
);

/** GNU time, for a child's peak RSS; undefined when it is not installed. */
export const TIME_BIN = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/**
 * Runs a child to its end with `cwd`. `startMs`/`endMs` are performance.now() at spawn and at
 * exit, `ms` the difference.
 * @returns {Promise<{code: number, signal: string|null, startMs: number, endMs: number, ms: number, stdout: string, stderr: string}>}
 *   `code` is 128 when the child died by a signal. Rejects only when it cannot be started.
 */
export function run(file, args, { cwd, env = ENV } = {}) {
  return new Promise((resolve, reject) => {
    const out = [];
    const err = [];
    const startMs = performance.now();
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let endMs = 0;
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', reject);
    child.on('exit', () => (endMs = performance.now()));
    child.on('close', (code, signal) =>
      resolve({
        code: code ?? 128,
        signal,
        startMs,
        endMs,
        ms: endMs - startMs,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      }),
    );
  });
}

/**
 * `result` unchanged when its exit status is `expected`.
 * @throws {Error} naming `what`, both statuses and the child's output, so a run that ended
 *   otherwise (a 75 after a wait, a crash) is never timed as if it had done the figure's work.
 */
export function expectExit(result, expected, what) {
  if (result.code === expected) return result;
  const output = `${result.stderr}${result.stdout}`.trim().split('\n').slice(-15).join('\n');
  throw new Error(`${what} exited ${result.code}${result.signal ? ` (${result.signal})` : ''}, expected ${expected}\n${output}`);
}

/**
 * Like {@link run} under GNU time: adds `rssMB`, the child's peak resident set in MB (10^6
 * bytes; time reports KiB). Needs {@link TIME_BIN}; `rssFile` is where time writes it.
 */
export async function runWithPeakRss(file, args, { cwd, rssFile }) {
  const result = await run(TIME_BIN, ['-f', '%M', '-o', rssFile, file, ...args], { cwd });
  const kib = Number(fs.readFileSync(rssFile, 'utf8').trim().split('\n').at(-1));
  return { ...result, rssMB: (kib * 1024) / 1e6 };
}

/**
 * Runs the variants one after another, round by round, so that each round sees the machine
 * in the same state for all of them; round 0 is a warm-up and is not counted.
 * @param count counted rounds
 * @param variants functions of the round number that return a value (ms, MB) or its promise
 * @returns per variant, its values of the counted rounds, in round order
 */
export async function rounds(count, variants) {
  const values = variants.map(() => []);
  for (let round = 0; round <= count; round += 1) {
    for (const [i, variant] of variants.entries()) {
      const value = await variant(round);
      if (round > 0) values[i].push(value);
    }
  }
  return values;
}

/** Median, min, max and count of a non-empty list of numbers. */
export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

/** `op` of the values of the same round of two variants: per-round differences or ratios. */
export const perRound = (a, b, op) => a.map((x, i) => op(x, b[i]));
