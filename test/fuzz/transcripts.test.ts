/**
 * Fuzz: random and mutated agent transcripts (see test/support/transcript-peer.ts), at least
 * 1000 per run, seeded and the seed printed. Each transcript is served by a tiny TCP peer to
 * `runSafeBuild` in-process (a real `sh` build that rewrites class files), many at a time, and
 * every run must:
 *  - resolve (never throw, never hang), with an exit status in the documented set that agrees
 *    with its reason;
 *  - never claim more than the wire proved (checked against an independent reading of the
 *    bytes the peer wrote): no build without a well-formed `started` receipt for a request it
 *    sent, no exit 0 without the `ok` receipt, no build-failed status without the `failed`
 *    receipt, no `applied` verdict without a matching applied VERIFY_RESULT of the session;
 *  - never send `BUILD ok` after the build was interrupted.
 * A quarter of the transcripts are tainted: control characters in every text field the peer
 * sends (see `controlText`); every run's events and result are rendered by the human reporter,
 * which must show none of them raw. A smaller sample runs through the real binary to prove no
 * stack trace reaches stderr, and a tainted sample that no raw control byte from the peer does
 * and no line of its own is printed.
 *
 * Replay: RECLAZZ_FUZZ_SEED=<seed> (and RECLAZZ_FUZZ_ONLY=<index>); RECLAZZ_FUZZ_RUNS=<n>.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/outcome/result.js';
import { HumanReporter } from '../../src/report/human.js';
import { runSafeBuild } from '../../src/index.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';
import { hasStackTrace } from '../support/project.js';
import { rawControlIn } from '../support/scratch.js';
import { INJECTED_LINE, oracle, randomPlan, servePlan, taintedPlan, type Plan } from '../support/transcript-peer.js';
import { describeResult } from '../../src/report/words.js';

const SEED = process.env.RECLAZZ_FUZZ_SEED !== undefined ? Number(process.env.RECLAZZ_FUZZ_SEED) : (Date.now() ^ (process.pid << 8)) >>> 0;
const RUNS = Math.max(1000, Number(process.env.RECLAZZ_FUZZ_RUNS ?? 1000));
const ONLY = process.env.RECLAZZ_FUZZ_ONLY === undefined ? undefined : Number(process.env.RECLAZZ_FUZZ_ONLY);
const PARALLEL = 32;
const CLI_SAMPLE = 16;
const CLI_TAINTED = 24;
const CLASSES = ['A', 'B', 'C'];

const REFUSED = new Set([
  'no-agent',
  'bad-port-file',
  'ambiguous-agent',
  'lock-busy',
  'stale-port',
  'handshake',
  'old-agent',
  'agent-not-ready',
  'unsupported',
  'hold-busy',
  'no-receipt',
  'agent-disconnected',
]);

function project(plan: Plan): { dir: string; args: string[] } {
  const dir = tempDir('reclazz-fuzz-');
  const classes = path.join(dir, 'target', 'classes');
  for (const name of CLASSES) writeClass(classes, `com.acme.${name}`, `${name}-v1`);
  const writes = CLASSES.slice(0, plan.changes)
    .map((name) => `printf '%s' "${name}-$$" > target/classes/com/acme/${name}.class`)
    .join('; ');
  return { dir, args: ['sh', '-c', `${writes}${writes ? '; ' : ''}exit ${plan.buildExit}`] };
}

/** Checks one finished run against the documented exit statuses and the oracle. */
function check(plan: Plan, result: RunResult, log: Parameters<typeof oracle>[0]): void {
  const context = `seed ${SEED} transcript ${plan.index}: ${result.reason} ${result.exitCode} ${describeResult(result).message}\n${JSON.stringify(plan)}`;
  const allowed: Record<string, number[]> = {
    ok: [0],
    'build-failed': [plan.buildExit],
    'not-safe': [70],
    'verify-incomplete': [75],
    interrupted: [130, 143],
  };
  const exits = REFUSED.has(result.reason) ? [69] : allowed[result.reason];
  expect(exits, `unexpected reason; ${context}`).toBeDefined();
  expect(exits, context).toContain(result.exitCode);
  const { message } = describeResult(result);
  expect(typeof message === 'string' && message.length > 0, context).toBe(true);
  if (result.reason === 'interrupted') expect(result.exitCode, context).toBe(plan.abort?.signal === 'SIGTERM' ? 143 : 130);
  if (result.provenLive) expect(result.exitCode, context).toBe(0);

  const wire = oracle(log);
  const sent = (state: string) => log.received.filter((l) => l.startsWith(`BUILD ${state} `)).map((l) => /request=(\S+)/.exec(l)![1]!);
  const acked = (state: string) => sent(state).some((request) => wire.acks.has(`${request} ${state} ${result.owner}`));
  if (result.build !== undefined) expect(acked('started'), `the build ran without a started receipt; ${context}`).toBe(true);
  if (result.exitCode === 0) expect(acked('ok'), `exit 0 without an ok receipt; ${context}`).toBe(true);
  if (result.reason === 'build-failed') expect(acked('failed'), `build-failed without a failed receipt; ${context}`).toBe(true);
  for (const verdict of result.verdicts.filter((v) => v.status === 'applied')) {
    const tokens = log.received
      .filter((l) => l.startsWith(`VERIFY `) && l.endsWith(` ${verdict.className} ${verdict.sha256}`))
      .map((l) => l.split(' ')[1]);
    const proven = tokens.some((token) => wire.applied.has(`${token} ${verdict.className} ${verdict.sha256} ${result.agent?.sessionId}`));
    expect(proven, `applied without an applied receipt for ${verdict.className}; ${context}`).toBe(true);
  }
  if (result.build?.interruptedBy !== undefined) expect(sent('ok'), `BUILD ok after an interrupt; ${context}`).toEqual([]);
}

/** Transcript `index` of a run: every fourth one tainted. */
function planAt(seed: number, index: number): Plan {
  return index % 4 === 3 ? taintedPlan(seed, index) : randomPlan(seed, index);
}

/** What a terminal would get: nothing raw, and no line the peer made. */
function expectShownSafely(text: string, context: string): void {
  expect(rawControlIn(text), `a raw control character reached the terminal; ${context}`).toBeUndefined();
  expect(
    text.split('\n').filter((line) => line.startsWith(INJECTED_LINE)),
    `a peer's line of its own; ${context}`,
  ).toEqual([]);
}

async function runOne(plan: Plan): Promise<RunResult> {
  const peer = await servePlan(plan, SEED);
  const { dir, args } = project(plan);
  const controller = new AbortController();
  let shown = '';
  const human = new HumanReporter({ write: (text) => (shown += text), live: false, quiet: false, verbose: true });
  const abort = plan.abort === undefined ? undefined : setTimeout(() => controller.abort(plan.abort!.signal), plan.abort.atMs);
  try {
    const guard = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`seed ${SEED} transcript ${plan.index} did not end within 20 s`)), 20_000).unref(),
    );
    const result = await Promise.race([
      runSafeBuild(
        {
          tool: 'command',
          args,
          cwd: dir,
          port: peer.port,
          timeoutMs: plan.timeoutMs,
          verifyTimeoutMs: plan.verifyTimeoutMs,
          waitMs: plan.waitMs,
          env: { PATH: process.env.PATH },
          sharesTerminal: false,
        },
        { signal: controller.signal, onEvent: (event) => human.event(event) },
      ),
      guard,
    ]);
    check(plan, result, peer.log);
    human.result(result);
    expectShownSafely(shown, `seed ${SEED} transcript ${plan.index}${plan.taint ? ' (tainted)' : ''}: ${result.reason}\n${shown}`);
    return result;
  } finally {
    if (abort !== undefined) clearTimeout(abort);
    await peer.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('fuzz: random and mutated agent transcripts', () => {
  it(`${RUNS} transcripts in-process: clean exit status, no throw, never more than the wire proved`, async () => {
    console.log(`fuzz seed ${SEED} (replay: RECLAZZ_FUZZ_SEED=${SEED}); ${ONLY === undefined ? RUNS : 1} transcripts`);
    const indexes = ONLY === undefined ? Array.from({ length: RUNS }, (_, i) => i) : [ONLY];
    const outcomes = new Map<string, number>();
    const tainted = new Map<string, number>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indexes.length) {
        const plan = planAt(SEED, indexes[next++]!);
        const result = await runOne(plan);
        const key = `${result.reason} ${result.exitCode}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (plan.taint) tainted.set(key, (tainted.get(key) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const total = [...outcomes.values()].reduce((a, b) => a + b, 0);
    console.log(
      `fuzz: ${total} transcripts ran; outcomes: ${[...outcomes]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}`,
    );
    console.log(`fuzz: tainted ones: ${[...tainted].map(([k, n]) => `${k}: ${n}`).join(', ')}`);
    expect(total).toBe(indexes.length);
    if (ONLY === undefined) {
      // The generator reaches deep into the flow, not only early refusals.
      for (const key of ['ok 0', 'not-safe 70', 'verify-incomplete 75']) expect(outcomes.get(key) ?? 0, key).toBeGreaterThan(0);
      // Tainted ones too get past the handshake and DOCTOR to a build and its verdict.
      const deep = ['ok 0', 'not-safe 70', 'verify-incomplete 75', 'build-failed 3'].reduce((n, key) => n + (tainted.get(key) ?? 0), 0);
      expect(deep, 'tainted transcripts that got to a build').toBeGreaterThan(0);
    }
  }, 240_000);

  it(`${CLI_SAMPLE} transcripts through the real binary: no stack trace on stderr`, async () => {
    const plans = Array.from({ length: CLI_SAMPLE }, (_, i) => randomPlan(SEED ^ 0x7f4a7c15, i));
    let next = 0;
    let ran = 0;
    const worker = async (): Promise<void> => {
      while (next < plans.length) {
        const plan = plans[next++]!;
        const peer = await servePlan(plan, SEED);
        const { dir, args } = project(plan);
        try {
          const run = await runCli(
            [
              '--port',
              String(peer.port),
              '--timeout',
              String(plan.timeoutMs),
              '--verify-timeout',
              String(plan.verifyTimeoutMs),
              '--wait',
              String(plan.waitMs),
              '--',
              ...args,
            ],
            { cwd: dir, timeoutMs: 30_000 },
          );
          const context = `seed ${SEED} cli transcript ${plan.index}: exit ${run.exitCode}\n${run.stderr}`;
          expect([0, 69, 70, 75, plan.buildExit], context).toContain(run.exitCode);
          expect(hasStackTrace(run.stderr), context).toBe(false);
          expect(run.stderr, context).toMatch(/proven live|✘ not run:/);
          ran += 1;
        } finally {
          await peer.stop();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    console.log(`fuzz: ${ran} transcripts through the real binary (seed ${SEED ^ (0x7f4a7c15 >>> 0)})`);
  }, 120_000);

  it(`${CLI_TAINTED} tainted transcripts through the real binary: no raw control byte from the peer on stderr`, async () => {
    const plans = Array.from({ length: CLI_TAINTED }, (_, i) => taintedPlan(SEED ^ 0x2545f491, i));
    let next = 0;
    let ran = 0;
    const worker = async (): Promise<void> => {
      while (next < plans.length) {
        const plan = plans[next++]!;
        const peer = await servePlan(plan, SEED);
        const { dir, args } = project(plan);
        try {
          const run = await runCli(
            [
              '--port',
              String(peer.port),
              '--timeout',
              String(plan.timeoutMs),
              '--verify-timeout',
              String(plan.verifyTimeoutMs),
              '--verbose',
              '--',
              ...args,
            ],
            { cwd: dir, timeoutMs: 30_000 },
          );
          const context = `seed ${SEED} tainted cli transcript ${plan.index}: exit ${run.exitCode}\n${JSON.stringify(run.stderr)}`;
          expect(hasStackTrace(run.stderr), context).toBe(false);
          expectShownSafely(run.stderr, context);
          expectShownSafely(run.stdout, context);
          ran += 1;
        } finally {
          await peer.stop();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    expect(ran).toBe(plans.length);
  }, 120_000);
});
