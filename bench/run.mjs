/**
 * `npm run bench`: measures reclazz-build against the fake agent on loopback and synthetic
 * class trees, prints every figure with its target and pass/miss, and writes
 * bench/results.json. See docs/README-performance.md for what each figure means.
 *
 * Method: every figure is the median of at least 5 runs after one warm-up run, with min and
 * max. Comparisons are paired: the variants of one figure run alternately, round by round,
 * and the figure is the median of the per-round differences (or ratios), never of times
 * taken at different moments. The fake agent runs in this process; the CLI, the bare
 * commands and the Java client are child processes timed with performance.now() from spawn
 * to exit.
 *
 *   node bench/run.mjs [--runs N] [--only id,id,...] [--keep]
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeTree, planTree, writeTree } from './tree.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'reclazz-build.cjs');
const MUTATE = path.join(ROOT, 'bench', 'mutate.mjs');
const RESULTS = path.join(ROOT, 'bench', 'results.json');
const { startFakeAgent } = await import(pathToFileURL(path.join(ROOT, 'dist', 'fake-agent', 'index.js')).href);

const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};
const RUNS = Math.max(5, Number(option('--runs') ?? 0));
const ONLY = option('--only')?.split(',');
const KEEP = argv.includes('--keep');
const wanted = (id) => ONLY === undefined || ONLY.includes(id);

const BIG = 50_000;
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

// ---- measuring ----------------------------------------------------------------------------

/** Environment of every CLI run: plain output, no reclazz variables from the caller. */
const ENV = Object.fromEntries(Object.entries({ ...process.env, CI: 'true', NO_COLOR: '1' }).filter(([k]) => !k.startsWith('RECLAZZ_')));

/**
 * Runs a child to its end. `startMs`/`endMs` are performance.now() at spawn and at exit.
 * @returns its exit status, output and times.
 */
function run(file, args, { cwd = ROOT, env = ENV } = {}) {
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

/** `node bin/reclazz-build.cjs ...args` in `cwd`; throws unless it exits with `expect`. */
async function cli(cwd, args, expect = 0) {
  const result = await run(process.execPath, [BIN, ...args], { cwd });
  if (result.code !== expect)
    throw new Error(`reclazz-build ${args.join(' ')} exited ${result.code}, expected ${expect}\n${result.stderr}${result.stdout}`);
  return result;
}

/** The `type: "result"` line of a `--json` run. */
function jsonResult(result) {
  const line = result.stdout
    .trim()
    .split('\n')
    .findLast((l) => l.includes('"type":"result"'));
  if (line === undefined) throw new Error(`no JSON result line in:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(line);
}

/**
 * Runs each variant once per round, alternately, after one warm-up round.
 * @returns per variant, the measured values of the counted rounds.
 */
async function rounds(count, variants) {
  const values = variants.map(() => []);
  for (let round = 0; round <= count; round += 1) {
    for (const [i, variant] of variants.entries()) {
      const value = await variant(round);
      if (round > 0) values[i].push(value);
    }
  }
  return values;
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

const pairwise = (a, b, op) => a.map((x, i) => op(x, b[i]));
const round1 = (x) => Math.round(x * 10) / 10;
const round2 = (x) => Math.round(x * 100) / 100;

// ---- set-up -------------------------------------------------------------------------------

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-bench-'));
const agents = [];

/** A project folder whose target/classes holds one class the app loads (a run with no class file proves nothing). */
function project(name) {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'target', 'classes', 'bench'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'target', 'classes', 'bench', 'App.class'), 'app-v1');
  return dir;
}

/**
 * Starts a fake agent that writes `<dir>/.reclazz/agent.port`. Its stand-in JVM starts a moment
 * after the classes were written, as an app does: only then do they count as there before it.
 */
async function agentFor(dir, options = {}) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const agent = await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), captureDelayMs: 0, reloadMs: 0, ...options });
  agents.push(agent);
  return agent;
}

async function stopAgent(agent) {
  await agent.stop();
  agents.splice(agents.indexOf(agent), 1);
}

/** Times the CLI and a clock shared with the in-process fake agent: when it received a verb, when a class flipped. */
function agentClock() {
  const clock = {
    firstVerify: undefined,
    lastFinal: undefined,
    reset() {
      this.firstVerify = undefined;
      this.lastFinal = undefined;
    },
  };
  return {
    clock,
    intercept: (cmd) => {
      if (cmd.verb === 'VERIFY' && clock.firstVerify === undefined) clock.firstVerify = performance.now();
      return undefined;
    },
    verifyStatus: () => {
      clock.lastFinal = performance.now();
      return 'applied';
    },
  };
}

/** Compiles bench/java/MinimalClient.java; undefined when javac is missing. */
function compileJavaClient() {
  const out = path.join(work, 'java');
  const compiled = spawnSync('javac', ['-d', out, path.join(ROOT, 'bench', 'java', 'MinimalClient.java')], { stdio: 'inherit' });
  return compiled.status === 0 ? out : undefined;
}

function javaVersion() {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stderr.split('\n')[0] : undefined;
}

// ---- figures ------------------------------------------------------------------------------

const figures = [];

/**
 * Records a figure. `values` are the per-round values (ms, ratio or MB); `limit` the target
 * (at most). `ok` may add a condition beyond the number.
 */
function figure(id, name, unit, limit, values, extra = {}) {
  const s = stats(values);
  const pass = (limit === undefined || s.median <= limit) && (extra.ok ?? true);
  const entry = {
    id,
    figure: name,
    target: limit === undefined ? 'info' : `<= ${limit}${unit === 'x' ? 'x' : ` ${unit}`}`,
    unit,
    median: round2(s.median),
    min: round2(s.min),
    max: round2(s.max),
    runs: s.n,
    pass: limit === undefined ? null : pass,
    ...extra.details,
  };
  delete entry.ok;
  figures.push(entry);
  const shown = (v) => (unit === 'x' ? `${v.toFixed(2)}x` : `${Math.round(v)} ${unit}`);
  process.stderr.write(
    `  ${name}: ${shown(s.median)} (min ${shown(s.min)}, max ${shown(s.max)}) ${limit === undefined ? '' : pass ? 'pass' : 'MISS'}\n`,
  );
  return entry;
}

async function startupFigure() {
  process.stderr.write('start-up\n');
  const [bare, version] = await rounds(Math.max(RUNS, 30), [
    () => run(process.execPath, ['-e', '0']).then((r) => r.ms),
    () => cli(ROOT, ['--version']).then((r) => r.ms),
  ]);
  figure(
    'startup',
    '`reclazz-build --version` / `node -e 0`',
    'x',
    1.6,
    pairwise(version, bare, (a, b) => a / b),
    {
      details: { versionMs: round1(stats(version).median), nodeMs: round1(stats(bare).median) },
    },
  );
}

async function wholeRunFigures() {
  process.stderr.write('whole run, nothing changed (and the Java client)\n');
  const ours = project('noop');
  await agentFor(ours, { watchDirs: [path.join(ours, 'target', 'classes')] });
  const javaDir = compileJavaClient();
  const theirs = project('noop-java');
  await agentFor(theirs, { watchDirs: [path.join(theirs, 'target', 'classes')] });
  const variants = [() => run('true', []).then((r) => r.ms), () => cli(ours, ['--', 'true']).then((r) => r.ms)];
  if (javaDir !== undefined) {
    variants.push(async () => {
      const r = await run('java', ['-cp', javaDir, 'MinimalClient', '--', 'true'], { cwd: theirs });
      if (r.code !== 0) throw new Error(`MinimalClient exited ${r.code}: ${r.stderr}`);
      return r.ms;
    });
  }
  const [bare, whole, java] = await rounds(Math.max(RUNS, 21), variants);
  figure(
    'overhead',
    'whole-run overhead: `reclazz-build -- true` minus bare `true`',
    'ms',
    120,
    pairwise(whole, bare, (a, b) => a - b),
    {
      details: { runMs: round1(stats(whole).median), bareMs: round1(stats(bare).median) },
    },
  );
  if (java === undefined) {
    figures.push({
      id: 'java',
      figure: 'whole run vs the minimal Java client',
      target: '<= 1.2x',
      pass: false,
      note: 'javac/java not found',
    });
    process.stderr.write('  Java client: javac not found: MISS\n');
  } else {
    figure(
      'java',
      'whole run, `reclazz-build -- true` / minimal Java client (javac) `-- true`',
      'x',
      1.2,
      pairwise(whole, java, (a, b) => a / b),
      {
        details: { runMs: round1(stats(whole).median), javaMs: round1(stats(java).median), java: javaVersion() },
      },
    );
  }
}

async function changeDetectionFigures(bigTree) {
  const { dir: big, manifest } = bigTree;
  const empty = project('empty');
  // The same build command on both sides: the empty project rewrites a scratch copy of the
  // same files, outside any class output directory.
  const scratch = path.join(empty, 'scratch');
  writeTree(scratch, bigTree.files.slice(0, 1000));
  // These agents watch nothing: at 50,000 classes the fake's own scans would land in our time.
  await agentFor(big);
  await agentFor(empty);
  // The hash index (whatever its file name or format): removed for the first-run figure.
  const dropIndex = () => {
    for (const name of fs.readdirSync(path.join(big, '.reclazz')))
      if (name.startsWith('classes.')) fs.rmSync(path.join(big, '.reclazz', name), { force: true });
  };

  if (wanted('detect-none') || wanted('detect-cold')) {
    process.stderr.write(`change detection, ${BIG} classes, nothing changed\n`);
    const [withTree, without, cold] = await rounds(Math.max(RUNS, 7), [
      () => cli(big, ['--', 'true']).then((r) => r.ms),
      () => cli(empty, ['--', 'true']).then((r) => r.ms),
      async () => {
        dropIndex();
        return (await cli(big, ['--', 'true'])).ms;
      },
    ]);
    figure(
      'detect-none',
      `change detection, ${BIG} classes, nothing changed (hash index warm: every run after the first)`,
      'ms',
      400,
      pairwise(withTree, without, (a, b) => a - b),
      {
        details: { runMs: round1(stats(withTree).median), emptyRunMs: round1(stats(without).median) },
      },
    );
    figure(
      'detect-cold',
      `change detection, ${BIG} classes, nothing changed, no hash index (first run in a checkout: hashes all)`,
      'ms',
      undefined,
      pairwise(cold, without, (a, b) => a - b),
      {
        details: { runMs: round1(stats(cold).median), emptyRunMs: round1(stats(without).median) },
      },
    );
  }

  if (wanted('detect-1000')) {
    process.stderr.write(`change detection, ${BIG} classes, 1,000 rewritten by the build\n`);
    let detected = true;
    const [withTree, without] = await rounds(Math.max(RUNS, 7), [
      async () => {
        const r = await cli(big, [
          '--no-verify',
          '--json',
          '--',
          process.execPath,
          MUTATE,
          path.join(big, 'target', 'classes'),
          manifest,
          '1000',
        ]);
        const changes = jsonResult(r).changes;
        if (changes.changed !== 1000 || changes.added + changes.removed !== 0) detected = false;
        return r.ms;
      },
      async () => (await cli(empty, ['--no-verify', '--json', '--', process.execPath, MUTATE, scratch, manifest, '1000'])).ms,
    ]);
    figure(
      'detect-1000',
      `change detection, ${BIG} classes, 1,000 changed (a third same size and mtime), --no-verify`,
      'ms',
      600,
      pairwise(withTree, without, (a, b) => a - b),
      {
        ok: detected,
        details: { allDetected: detected, runMs: round1(stats(withTree).median), emptyRunMs: round1(stats(without).median) },
      },
    );
  }
  for (const agent of [...agents]) await stopAgent(agent);
}

async function verifyFigure() {
  process.stderr.write('VERIFY, 500 changed classes, the agent applies at once\n');
  const dir = project('verify500');
  const classes = path.join(dir, 'target', 'classes');
  const files = planTree(2000, 2);
  const manifest = path.join(work, 'verify500.json');
  writeTree(classes, files, manifest);
  const { clock, intercept, verifyStatus } = agentClock();
  await agentFor(dir, { watchDirs: [classes], scanCache: true, intercept, verifyStatus });
  let proven = true;
  const [times] = await rounds(Math.max(RUNS, 7), [
    async () => {
      clock.reset();
      const r = await cli(dir, ['--json', '--', process.execPath, MUTATE, classes, manifest, '500']);
      const result = jsonResult(r);
      if (!result.provenLive || result.classes.filter((c) => c.status === 'applied').length !== 500) proven = false;
      return r.endMs - clock.firstVerify;
    },
  ]);
  figure('verify-500', 'VERIFY 500 changed classes, applied at once: first VERIFY received -> CLI exit', 'ms', 500, times, {
    ok: proven,
    details: { allProven: proven },
  });
  for (const agent of [...agents]) await stopAgent(agent);
}

async function latencyFigure() {
  process.stderr.write('VERIFY latency: running for 1 s, then applied\n');
  const dir = project('latency');
  const classes = path.join(dir, 'target', 'classes');
  const manifest = path.join(work, 'latency.json');
  writeTree(classes, planTree(200, 3), manifest);
  const { clock, intercept, verifyStatus } = agentClock();
  await agentFor(dir, { watchDirs: [classes], reloadMs: 1000, intercept, verifyStatus });
  let proven = true;
  const [times] = await rounds(RUNS, [
    async () => {
      clock.reset();
      const r = await cli(dir, ['--json', '--', process.execPath, MUTATE, classes, manifest, '20']);
      if (!jsonResult(r).provenLive) proven = false;
      return r.endMs - clock.lastFinal;
    },
  ]);
  figure('verify-latency', 'VERIFY latency: agent flips running -> applied after 1 s; flip -> CLI exit', 'ms', 200, times, {
    ok: proven,
    details: { allProven: proven },
  });
  for (const agent of [...agents]) await stopAgent(agent);
}

async function capacityFigures(bigTree) {
  process.stderr.write(`${BIG} classes, 5,000 changed, VERIFY on (capacity, memory)\n`);
  const { dir, manifest } = bigTree;
  const classes = path.join(dir, 'target', 'classes');
  const { clock, intercept, verifyStatus } = agentClock();
  // Defaults of the fake for capture delay and reload time; scanCache keeps its 50,000-file
  // scans to stat calls.
  await agentFor(dir, { watchDirs: [classes], scanCache: true, captureDelayMs: 100, reloadMs: 50, intercept, verifyStatus });
  const rssFile = path.join(work, 'rss.txt');
  let named = true;
  const rss = [];
  const [times] = await rounds(RUNS, [
    async (round) => {
      clock.reset();
      const args = [BIN, '--json', '--', process.execPath, MUTATE, classes, manifest, '5000'];
      const r =
        TIME === undefined
          ? await run(process.execPath, args, { cwd: dir })
          : await run(TIME, ['-f', '%M', '-o', rssFile, process.execPath, ...args], { cwd: dir });
      if (r.code !== 75) throw new Error(`expected exit 75 (not all proven), got ${r.code}\n${r.stderr}`);
      const result = jsonResult(r);
      if (!/512/.test(result.message) || !/receipts/.test(result.message)) named = false;
      if (round > 0 && TIME !== undefined) rss.push(Number(fs.readFileSync(rssFile, 'utf8').trim().split('\n').at(-1)) / 1024);
      if (round > 0) bigTree.message = result.message;
      return r.endMs - clock.lastFinal;
    },
  ]);
  figure('capacity', '5,000 changed (beyond the 512-receipt ledger): last receipt final -> CLI exit', 'ms', 1000, times, {
    ok: named,
    details: { namesCapacity: named, message: bigTree.message },
  });
  if (rss.length > 0) figure('memory', `peak RSS of the CLI, ${BIG} classes with 5,000 changed, VERIFY on`, 'MB', 150, rss);
  else figures.push({ id: 'memory', figure: 'peak RSS', target: '<= 150 MB', pass: false, note: '/usr/bin/time not found' });
  for (const agent of [...agents]) await stopAgent(agent);
}

// ---- main ---------------------------------------------------------------------------------

function table() {
  const rows = figures.map((f) => {
    const shown = (v) => (v === undefined ? '-' : f.unit === 'x' ? `${v.toFixed(2)}x` : `${Math.round(v)} ${f.unit}`);
    return [f.figure, f.target, shown(f.median), shown(f.min), shown(f.max), f.pass === null ? 'info' : f.pass ? 'pass' : 'MISS'];
  });
  const head = ['figure', 'target', 'median', 'min', 'max', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const loadAverage = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
const machine = {
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memoryGB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform} ${os.release()}`,
  java: javaVersion() ?? null,
  /** 1, 5 and 15-minute load averages when the bench started and ended: other work on the machine moves the figures. */
  loadAverage: { start: loadAverage(), end: [] },
};

const started = performance.now();
try {
  process.stderr.write(
    `machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}; ${RUNS}+ runs per figure after a warm-up\n`,
  );
  let bigTree;
  const needBig = ['detect-none', 'detect-cold', 'detect-1000', 'capacity', 'memory'].some(wanted);
  if (needBig) {
    const dir = project('big');
    const files = planTree(BIG, 1);
    const manifest = path.join(work, 'big.json');
    const t = performance.now();
    writeTree(path.join(dir, 'target', 'classes'), files, manifest);
    bigTree = { dir, files, manifest, shape: describeTree(files) };
    process.stderr.write(`tree: ${JSON.stringify(bigTree.shape)} written in ${Math.round(performance.now() - t)} ms\n`);
  }
  if (wanted('startup')) await startupFigure();
  if (wanted('overhead') || wanted('java')) await wholeRunFigures();
  if (['detect-none', 'detect-cold', 'detect-1000'].some(wanted)) await changeDetectionFigures(bigTree);
  if (wanted('verify-500')) await verifyFigure();
  if (wanted('verify-latency')) await latencyFigure();
  if (wanted('capacity') || wanted('memory')) await capacityFigures(bigTree);

  machine.loadAverage.end = loadAverage();
  const report = {
    machine,
    date: new Date().toISOString(),
    method:
      'median of per-round values after one warm-up round; paired variants run alternately; child processes timed spawn -> exit with performance.now()',
    tree: bigTree?.shape ?? null,
    durationS: Math.round((performance.now() - started) / 1000),
    figures,
  };
  process.stdout.write(
    `\nreclazz-build benchmark on ${machine.cores} cores, Node ${machine.node} (load average ${machine.loadAverage.start[0]} at start, ${machine.loadAverage.end[0]} at end)\n${table()}\n`,
  );
  if (ONLY === undefined) {
    fs.writeFileSync(`${RESULTS}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
    fs.renameSync(`${RESULTS}.tmp`, RESULTS);
    process.stdout.write(`written to ${path.relative(process.cwd(), RESULTS)} (${report.durationS} s)\n`);
  }
  process.exitCode = figures.every((f) => f.pass !== false) ? 0 : 1;
} finally {
  for (const agent of agents) await agent.stop();
  if (KEEP) process.stderr.write(`kept ${work}\n`);
  else fs.rmSync(work, { recursive: true, force: true });
}
