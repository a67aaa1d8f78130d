/**
 * `npm run bench`: measures reclazz-build against the fake agent on loopback and on
 * synthetic class trees (50,000 and 200,000 classes), each figure beside its floor measured in
 * the same run, its target and pass/MISS; writes bench/results.json after a full run and exits
 * 1 while any figure misses. bench/README.md has the method and what each figure means.
 *
 *   node bench/run.mjs [--runs N] [--only id,id,...] [--reverse] [--keep]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { FIGURES, JOBS } from './figures.mjs';
import { stats } from './measure.mjs';
import { compareVerdicts, shown, tables } from './report.mjs';
import { describeTree, planTree, writeTree } from './tree.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = path.join(ROOT, 'bench', 'results.json');
const FAKE_AGENT = path.join(ROOT, 'dist', 'fake-agent', 'index.js');
const MIN_RUNS = 7;
/**
 * Pause between the last write to an app's classes and the start of its agent, so that every
 * class file's ctime is before the app's start even as read from /proc (10 ms clock ticks,
 * boot time known to about 10 ms) and through the file system's coarse clock.
 */
const SETTLE_MS = 200;

const USAGE = `usage: node bench/run.mjs [--runs N] [--only id,id,...] [--reverse] [--keep]

  --runs N     counted rounds per figure after the warm-up round (at least ${MIN_RUNS}, the default)
  --only ids   measure only these figures (a job measuring several measures all of them);
               bench/results.json is written only by a full run
  --reverse    run the jobs in reverse order (each starts from a known state of its own, so
               the verdicts must not depend on the order)
  --keep       keep the work folder and its class trees (printed at the end)

figures: ${FIGURES.map((f) => f.id).join(', ')}
`;

/** The command line; prints the usage and exits 2 on bad input. */
function commandLine() {
  const usageError = (message) => {
    process.stderr.write(`bench: ${message}\n\n${USAGE}`);
    process.exit(2);
  };
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        runs: { type: 'string' },
        only: { type: 'string' },
        reverse: { type: 'boolean' },
        keep: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (error) {
    usageError(error.message);
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const runs = parsed.runs === undefined ? MIN_RUNS : Number(parsed.runs);
  if (!Number.isInteger(runs) || runs < MIN_RUNS) usageError(`--runs must be a whole number of at least ${MIN_RUNS} (got ${parsed.runs})`);
  const only = parsed.only?.split(',').map((id) => id.trim());
  const unknown = only?.filter((id) => !FIGURES.some((f) => f.id === id)) ?? [];
  if (unknown.length > 0 || only?.length === 0) usageError(`--only: unknown figure ${unknown.join(', ') || '(none given)'}`);
  return { runs, only, reverse: parsed.reverse ?? false, keep: parsed.keep ?? false };
}

const options = commandLine();
if (!fs.existsSync(FAKE_AGENT)) {
  process.stderr.write(
    `bench: ${path.relative(process.cwd(), FAKE_AGENT)} is missing: run \`npm run build\` first (\`npm run bench\` does)\n`,
  );
  process.exit(2);
}
const { startFakeAgent } = await import(pathToFileURL(FAKE_AGENT).href);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (x) => Math.round(x * 10) / 10;
const round2 = (x) => Math.round(x * 100) / 100;
const seconds = (since) => Math.round((performance.now() - since) / 100) / 10;
const loadAverage = () => os.loadavg().map(round2);
const log = (line) => process.stderr.write(`${line}\n`);

// ---- the context a job works in -----------------------------------------------------------

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-bench-'));
const removeWork = () => {
  if (options.keep) log(`kept ${work}`);
  else fs.rmSync(work, { recursive: true, force: true });
};
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(signal, () => {
    log(`\n${signal}: stopping`);
    removeWork();
    process.exit(code);
  });
}

/** Figures recorded so far, by id. */
const recorded = new Map();
const specs = new Map(FIGURES.map((f) => [f.id, f]));
const trees = new Map();
/** The shape of every tree written in this run, by class count (kept after the tree is removed). */
const shapes = {};
let agents = [];
let serial = 0;
let javaDir;
let jobLoad = 0;

/**
 * What a job gets (see figures.mjs). Every folder it makes is new; a tree it asks for is in
 * the known state "classes written before the app started, no .reclazz/ state"; its agents
 * are stopped when it ends.
 */
const ctx = {
  runs: options.runs,
  work,

  /**
   * A new project folder whose target/classes holds one class the app loads (a run with no
   * class file proves nothing, and exits 75). @returns its absolute path
   */
  project(name) {
    const dir = path.join(work, `${name}-${(serial += 1)}`);
    fs.mkdirSync(path.join(dir, 'target', 'classes', 'bench'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'target', 'classes', 'bench', 'App.class'), 'app-v1');
    return dir;
  },

  /**
   * The tree of `count` classes: written (and flushed to disk) on first use; later its
   * `.reclazz/` is removed, whatever earlier jobs left there.
   * @returns {{dir: string, classes: string, files: {path: string, size: number}[], manifest: string, shape: object}}
   */
  async tree(count) {
    const known = trees.get(count);
    if (known !== undefined) {
      fs.rmSync(path.join(known.dir, '.reclazz'), { recursive: true, force: true });
      return known;
    }
    const dir = path.join(work, `tree-${count}`);
    const classes = path.join(dir, 'target', 'classes');
    const files = planTree(count, 1);
    const manifest = path.join(work, `tree-${count}.json`);
    const started = performance.now();
    writeTree(classes, files, manifest);
    const written = seconds(started);
    // The tree's dirty pages would otherwise be written back while the first figures run.
    const syncStarted = performance.now();
    const synced = spawnSync('sync', ['-f', classes]);
    if (synced.status !== 0) log(`  sync -f failed (${synced.stderr}): the tree is written back while figures run`);
    const tree = { dir, classes, files, manifest, shape: describeTree(files) };
    trees.set(count, tree);
    shapes[count] = tree.shape;
    log(`  tree of ${count} classes: ${JSON.stringify(tree.shape)}; written in ${written} s, synced in ${seconds(syncStarted)} s`);
    return tree;
  },

  /** Removes everything in `dir`'s `.reclazz/` but the agent's port file: a checkout's first run. */
  forgetState(dir) {
    const state = path.join(dir, '.reclazz');
    for (const name of fs.readdirSync(state))
      if (name !== 'agent.port') fs.rmSync(path.join(state, name), { recursive: true, force: true });
  },

  /**
   * Starts one fake agent per `[projectDir, options]` (writing `<projectDir>/.reclazz/agent.port`;
   * immediate receipts unless the options say otherwise), after SETTLE_MS: the app starts after
   * its classes are written, so they are unchanged since its start and "nothing changed" needs
   * no VERIFY.
   */
  async startAgents(list) {
    await sleep(SETTLE_MS);
    for (const [dir, agentOptions = {}] of list) {
      const portFile = path.join(dir, '.reclazz', 'agent.port');
      agents.push(await startFakeAgent({ portFile, captureDelayMs: 0, reloadMs: 0, ...agentOptions }));
    }
  },

  /** bench/java/MinimalClient.java compiled with javac (once). @returns its class folder, undefined without javac */
  javaClient() {
    if (javaDir === undefined) {
      const out = path.join(work, 'java');
      const compiled = spawnSync('javac', ['-d', out, path.join(ROOT, 'bench', 'java', 'MinimalClient.java')], { stdio: 'inherit' });
      javaDir = compiled.status === 0 ? out : null;
    }
    return javaDir ?? undefined;
  },

  /**
   * Records figure `id` from its per-round `values` (in its unit). `measured` and `floor` are
   * the columns beside it ({ what, median, unit }); `details` go to results.json only, `note`
   * (one line) also to the log, under the figure.
   */
  record(id, values, { measured, floor, details = {}, note } = {}) {
    const spec = specs.get(id);
    const s = stats(values);
    const entry = {
      ...base(spec),
      median: round2(s.median),
      min: round2(s.min),
      max: round2(s.max),
      runs: s.n,
      pass: s.median <= spec.limit,
      measured: measured && { ...measured, median: round1(measured.median) },
      floor: floor && { ...floor, median: round1(floor.median) },
      ...Object.fromEntries(Object.entries(details).map(([key, value]) => [key, typeof value === 'number' ? round2(value) : value])),
    };
    recorded.set(id, entry);
    const beside = [
      entry.measured && shown(entry.measured.median, entry.measured.unit),
      entry.floor && `${entry.floor.what} ${shown(entry.floor.median, entry.floor.unit)}`,
    ];
    log(
      `  ${id}: ${shown(s.median, spec.unit)} (min ${shown(s.min, spec.unit)}, max ${shown(s.max, spec.unit)}` +
        `${beside.some(Boolean) ? `; ${beside.filter(Boolean).join(' over ')}` : ''}) target ${entry.target}: ${entry.pass ? 'pass' : 'MISS'}`,
    );
    if (note !== undefined) log(`    ${note}`);
  },

  /** Records figure `id` as missed because it could not be measured (`message` says why). */
  fail(id, message) {
    recorded.set(id, { ...base(specs.get(id)), pass: false, error: message });
    log(`  ${id}: MISS, ${message.split('\n')[0]}`);
  },
};

function base(spec) {
  return {
    id: spec.id,
    figure: spec.name,
    kept: spec.kept ?? false,
    unit: spec.unit,
    target: `<= ${shown(spec.limit, spec.unit)}`,
    loadAverage1m: jobLoad,
  };
}

async function stopAgents() {
  const stopping = agents;
  agents = [];
  for (const agent of stopping) await agent.stop();
}

/** Removes the trees no job in `later` needs (all of them with --keep kept). */
function dropTrees(later) {
  if (options.keep) return;
  const needed = new Set(later.map((job) => job.tree));
  for (const [count, tree] of trees) {
    if (needed.has(count)) continue;
    const started = performance.now();
    fs.rmSync(tree.dir, { recursive: true, force: true });
    fs.rmSync(tree.manifest, { force: true });
    trees.delete(count);
    log(`  tree of ${count} classes removed in ${seconds(started)} s`);
  }
}

// ---- main ---------------------------------------------------------------------------------

function javaVersion() {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stderr.split('\n')[0] : null;
}

const machine = {
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  memoryGB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform} ${os.release()}`,
  java: javaVersion(),
  fileSystem: spawnSync('stat', ['-f', '-c', '%T', work], { encoding: 'utf8' }).stdout?.trim() || 'unknown',
  /** 1, 5 and 15-minute load averages when the bench started and ended: other work on the machine moves the figures. */
  loadAverage: { start: loadAverage(), end: [] },
};
const order = options.reverse ? 'reverse' : 'forward';
const jobs = (options.reverse ? [...JOBS].reverse() : JOBS).filter(
  (job) => options.only === undefined || job.figures.some((id) => options.only.includes(id)),
);
const jobTimes = [];
const started = performance.now();
try {
  log(
    `machine: ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, ${machine.fileSystem}; load average ${machine.loadAverage.start.join(' ')}`,
  );
  log(`${options.runs} counted rounds per figure after a warm-up; ${order} order`);
  for (const [i, job] of jobs.entries()) {
    jobLoad = round2(os.loadavg()[0]);
    log(`\n${job.figures.join(', ')} (load average ${jobLoad})`);
    const jobStarted = performance.now();
    try {
      await job.run(ctx);
    } catch (error) {
      for (const id of job.figures) if (!recorded.has(id)) ctx.fail(id, error.message);
    } finally {
      await stopAgents();
    }
    jobTimes.push({ figures: job.figures, seconds: seconds(jobStarted) });
    dropTrees(jobs.slice(i + 1));
  }

  machine.loadAverage.end = loadAverage();
  const figures = FIGURES.map((f) => recorded.get(f.id)).filter(Boolean);
  const durationS = Math.round((performance.now() - started) / 1000);
  process.stdout.write(
    `\nreclazz-build benchmark, ${machine.cores} cores, Node ${machine.node}, ${order} order, ${options.runs} rounds; ` +
      `load average ${machine.loadAverage.start[0]} at start, ${machine.loadAverage.end[0]} at end; ${durationS} s\n\n${tables(figures)}\n`,
  );
  if (options.only === undefined) {
    const comparison = compareVerdicts(RESULTS, figures, order);
    if (comparison !== undefined) process.stdout.write(`\n${comparison}\n`);
    const report = {
      machine,
      date: new Date().toISOString(),
      order,
      method:
        `${options.runs} counted rounds per figure after one warm-up round; the variants of a figure (the CLI, its floor, an empty project) ` +
        'run alternately, round by round, and a ratio or difference is taken per round before the median; child processes timed spawn -> exit ' +
        'with performance.now(); every timed run must exit with the status its figure expects; each job starts from fresh folders or a tree ' +
        'reset to "classes written before the agent started, no .reclazz/"',
      trees: shapes,
      durationS,
      jobs: jobTimes,
      figures,
    };
    fs.writeFileSync(`${RESULTS}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
    fs.renameSync(`${RESULTS}.tmp`, RESULTS);
    process.stdout.write(`written to ${path.relative(process.cwd(), RESULTS)}\n`);
  }
  process.exitCode = figures.every((f) => f.pass) ? 0 : 1;
} finally {
  await stopAgents();
  removeWork();
}
