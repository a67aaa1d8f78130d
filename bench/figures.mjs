/**
 * The bench's figures and the jobs that measure them. A job gets a context from run.mjs
 * (see `Context` there): fresh project folders, the class trees in a known state, agents
 * started after their classes are written, and `record` for each figure it measured.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV, TIME_BIN, expectExit, perRound, rounds, run, runWithPeakRss, stats } from './measure.mjs';
import { planTree, writeTree } from './tree.mjs';
import { WATCH_FIGURES, WATCH_JOBS } from './watch-figures.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'reclazz-build.cjs');
const MUTATE = path.join(ROOT, 'bench', 'mutate.mjs');
const FLOOR = path.join(ROOT, 'bench', 'floor.mjs');
const NODE = process.execPath;

/** Class counts of the two big trees. */
const BIG = 50_000;
const HUGE = 200_000;

/**
 * Every figure, in the order the table shows them. `limit` is the target (the median must be
 * at most that); `kept` marks the first bench's figures, still measured with their old targets.
 */
export const FIGURES = [
  { id: 'java', unit: 'x', limit: 0.95, name: 'whole run `reclazz-build -- true` (immediate receipts, nothing changed) / MinimalClient' },
  { id: 'overhead', unit: 'ms', limit: 90, name: 'whole-run overhead: `reclazz-build -- true` minus bare `true`' },
  { id: 'detect-50k', unit: 'x', limit: 1.25, name: 'change detection, 50,000 classes, nothing changed / bare walk (readdir + lstat)' },
  { id: 'detect-200k', unit: 'x', limit: 1.25, name: 'change detection, 200,000 classes, nothing changed / bare walk (readdir + lstat)' },
  { id: 'memory-200k', unit: 'MB', limit: 160, name: 'peak RSS, 200,000 classes, 5,000 changed (VERIFY on)' },
  { id: 'first-run-50k', unit: 'x', limit: 1.5, name: 'first run with no index, 50,000 classes / (walk + `sha256sum`)' },
  { id: 'startup', unit: 'x', limit: 1.25, name: '`reclazz-build --version` / `node -e 0`' },
  {
    id: 'detect-1000',
    unit: 'ms',
    limit: 600,
    kept: true,
    name: 'change detection, 50,000 classes, 1,000 changed (a third same size and mtime), --no-verify',
  },
  { id: 'verify-500', unit: 'ms', limit: 500, kept: true, name: 'VERIFY 500 changed classes, applied at once: first VERIFY -> exit' },
  {
    id: 'verify-latency',
    unit: 'ms',
    limit: 200,
    kept: true,
    name: 'VERIFY latency: agent flips running -> applied after 1 s; flip -> exit',
  },
  { id: 'capacity', unit: 'ms', limit: 1000, kept: true, name: '5,000 changed, beyond the 512 receipts: last receipt final -> exit' },
  ...WATCH_FIGURES,
];

// ---- helpers ------------------------------------------------------------------------------

/** `node bin/reclazz-build.cjs ...args` in `cwd`; throws unless it exits with `expected`. */
async function cli(cwd, args, expected) {
  return expectExit(await run(NODE, [BIN, ...args], { cwd }), expected, `reclazz-build ${args.join(' ')}`);
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
 * bench/floor.mjs `mode` over `tree`'s classes; throws unless it saw every file of the tree.
 * @returns its JSON line: { files, walkMs, hashMs, ms }
 */
async function floor(mode, tree) {
  const result = expectExit(await run(NODE, [FLOOR, mode, tree.classes]), 0, `floor.mjs ${mode}`);
  const measured = JSON.parse(result.stdout);
  if (measured.files !== tree.files.length)
    throw new Error(`floor.mjs ${mode} found ${measured.files} files, the tree has ${tree.files.length}`);
  return measured;
}

const median = (values) => stats(values).median;
/** A measured or floor column: what it is and the median of its per-round values. */
const column = (what, values, unit = 'ms') => ({ what, median: median(values), unit });
const minus = (a, b) => a - b;
const shownMs = (ms) => `${Math.round(ms)} ms`;
const over = (a, b) => a / b;

/** The agent's clock shared with the CLI's: when it received the first VERIFY, when a class last flipped to final. */
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

/** Checks what a run past the 512 receipts reports (its exit, 75, the caller checks): the message names the limit, and `changed` classes changed. @returns the message */
function checkBeyondCapacity(result, changed) {
  const json = jsonResult(result);
  if (!/512/.test(json.message) || !/receipts/.test(json.message))
    throw new Error(`the message does not name the 512 receipts: ${json.message}`);
  if (json.changes?.changed !== changed)
    throw new Error(`expected ${changed} changed classes, the run reports ${JSON.stringify(json.changes)}`);
  return json.message;
}

// ---- jobs ---------------------------------------------------------------------------------

/** A job measures `figures` in one go; `tree` names the class tree it needs (removed once no later job needs it). */
export const JOBS = [
  {
    figures: ['startup'],
    async run(ctx) {
      const [bare, version] = await rounds(Math.max(ctx.runs, 30), [
        async () => expectExit(await run(NODE, ['-e', '0']), 0, 'node -e 0').ms,
        async () => (await cli(ROOT, ['--version'], 0)).ms,
      ]);
      ctx.record('startup', perRound(version, bare, over), { measured: column('--version', version), floor: column('node -e 0', bare) });
    },
  },

  {
    figures: ['java', 'overhead'],
    async run(ctx) {
      const ours = ctx.project('noop');
      const theirs = ctx.project('noop-java');
      const javaDir = ctx.javaClient();
      await ctx.startAgents([
        [ours, { watchDirs: [path.join(ours, 'target', 'classes')] }],
        [theirs, { watchDirs: [path.join(theirs, 'target', 'classes')] }],
      ]);
      // Node's own start-up, for the overhead's context: every Node program pays it, and
      // NODE_EXTRA_CA_CERTS (when set) makes Node 20 parse certificates before any script runs.
      const nodeStart = (env) => async () => expectExit(await run(NODE, ['-e', '0'], { env }), 0, 'node -e 0').ms;
      const withoutCa = process.env.NODE_EXTRA_CA_CERTS
        ? Object.fromEntries(Object.entries(ENV).filter(([k]) => k !== 'NODE_EXTRA_CA_CERTS'))
        : undefined;
      const variants = {
        bare: async () => expectExit(await run('true', []), 0, 'true').ms,
        whole: async () => (await cli(ours, ['--', 'true'], 0)).ms,
        node: nodeStart(ENV),
        ...(javaDir === undefined
          ? {}
          : {
              java: async () =>
                expectExit(await run('java', ['-cp', javaDir, 'MinimalClient', '--', 'true'], { cwd: theirs }), 0, 'MinimalClient').ms,
            }),
        ...(withoutCa === undefined
          ? {}
          : {
              nodeBare: nodeStart(withoutCa),
              wholeBare: async () => expectExit(await run(NODE, [BIN, '--', 'true'], { cwd: ours, env: withoutCa }), 0, 'run').ms,
            }),
      };
      const measured = await rounds(Math.max(ctx.runs, 21), Object.values(variants));
      const { bare, whole, node, java, nodeBare, wholeBare } = Object.fromEntries(Object.keys(variants).map((k, i) => [k, measured[i]]));
      const nodeMs = median(node);
      const details = {
        nodeStartMs: nodeMs,
        ...(withoutCa === undefined ? {} : { nodeStartWithoutExtraCaMs: median(nodeBare), runWithoutExtraCaMs: median(wholeBare) }),
      };
      const note =
        `Node's own start-up (node -e 0) ${shownMs(nodeMs)}` +
        (withoutCa === undefined
          ? ''
          : `; without NODE_EXTRA_CA_CERTS (set here) ${shownMs(details.nodeStartWithoutExtraCaMs)}, and the run ${shownMs(details.runWithoutExtraCaMs)}`);
      ctx.record('overhead', perRound(whole, bare, minus), {
        measured: column('run', whole),
        floor: column('bare `true`', bare),
        details,
        note,
      });
      if (java === undefined) ctx.fail('java', 'javac or java not found: MinimalClient cannot be built');
      else ctx.record('java', perRound(whole, java, over), { measured: column('run', whole), floor: column('MinimalClient', java) });
    },
  },

  { figures: ['detect-50k'], tree: BIG, run: (ctx) => nothingChanged(ctx, 'detect-50k', BIG) },

  {
    figures: ['first-run-50k'],
    tree: BIG,
    async run(ctx) {
      const tree = await ctx.tree(BIG);
      const empty = ctx.project('empty');
      await ctx.startAgents([[tree.dir], [empty]]);
      const walks = [];
      const hashes = [];
      const [floors, nodeFloors, cold, without] = await rounds(ctx.runs, [
        async (round) => {
          const measured = await floor('hash', tree);
          if (round > 0) {
            walks.push(measured.walkMs);
            hashes.push(measured.hashMs);
          }
          return measured.ms;
        },
        async () => (await floor('node-hash', tree)).ms,
        async () => {
          ctx.forgetState(tree.dir);
          return (await cli(tree.dir, ['--', 'true'], 0)).ms;
        },
        async () => (await cli(empty, ['--', 'true'], 0)).ms,
      ]);
      const firstRun = perRound(cold, without, minus);
      ctx.record('first-run-50k', perRound(firstRun, floors, over), {
        measured: column('first run', firstRun),
        floor: column('walk + sha256sum', floors),
        details: {
          walkMs: median(walks),
          sha256sumMs: median(hashes),
          // sha256sum may not use the CPU's SHA instructions where Node's OpenSSL does: the same ratio over Node's own hashing.
          walkNodeSha256Ms: median(nodeFloors),
          overWalkNodeSha256: Math.round(median(perRound(firstRun, nodeFloors, over)) * 100) / 100,
          runMs: median(cold),
          emptyRunMs: median(without),
        },
      });
    },
  },

  {
    figures: ['detect-1000'],
    tree: BIG,
    async run(ctx) {
      const tree = await ctx.tree(BIG);
      const empty = ctx.project('empty');
      // The same build command on both sides: the empty project rewrites a scratch copy of the
      // same files, outside any class output directory.
      const scratch = path.join(empty, 'scratch');
      writeTree(scratch, tree.files.slice(0, 1000));
      await ctx.startAgents([[tree.dir], [empty]]);
      const mutate = (dir) => ['--no-verify', '--json', '--', NODE, MUTATE, dir, tree.manifest, '1000'];
      const [withTree, without] = await rounds(ctx.runs, [
        async (round) => {
          const result = await cli(tree.dir, mutate(tree.classes), 0);
          const { changes } = jsonResult(result);
          if (round > 0 && (changes.changed !== 1000 || changes.added + changes.removed !== 0))
            throw new Error(`1,000 rewritten, the run reports ${JSON.stringify(changes)}`);
          return result.ms;
        },
        async () => (await cli(empty, mutate(scratch), 0)).ms,
      ]);
      const detection = perRound(withTree, without, minus);
      ctx.record('detect-1000', detection, { details: { runMs: median(withTree), emptyRunMs: median(without) } });
    },
  },

  {
    figures: ['capacity'],
    tree: BIG,
    async run(ctx) {
      const tree = await ctx.tree(BIG);
      const { clock, intercept, verifyStatus } = agentClock();
      // The fake's default capture delay and reload time; scanCache keeps its scans of the
      // tree to stat calls.
      await ctx.startAgents([
        [tree.dir, { watchDirs: [tree.classes], scanCache: true, captureDelayMs: 100, reloadMs: 50, intercept, verifyStatus }],
      ]);
      let message;
      const [times] = await rounds(ctx.runs, [
        async (round) => {
          clock.reset();
          const result = await cli(tree.dir, ['--json', '--', NODE, MUTATE, tree.classes, tree.manifest, '5000'], 75);
          if (round > 0) message = checkBeyondCapacity(result, 5000);
          return result.endMs - clock.lastFinal;
        },
      ]);
      ctx.record('capacity', times, { details: { message } });
    },
  },

  {
    figures: ['verify-500'],
    async run(ctx) {
      const dir = ctx.project('verify500');
      const classes = path.join(dir, 'target', 'classes');
      const manifest = path.join(dir, 'manifest.json');
      writeTree(classes, planTree(2000, 2), manifest);
      const { clock, intercept, verifyStatus } = agentClock();
      await ctx.startAgents([[dir, { watchDirs: [classes], scanCache: true, intercept, verifyStatus }]]);
      const [times] = await rounds(ctx.runs, [
        async () => {
          clock.reset();
          const result = await cli(dir, ['--json', '--', NODE, MUTATE, classes, manifest, '500'], 0);
          const json = jsonResult(result);
          const applied = json.classes.filter((c) => c.status === 'applied').length;
          if (!json.provenLive || applied !== 500) throw new Error(`500 changed, ${applied} applied, provenLive ${json.provenLive}`);
          return result.endMs - clock.firstVerify;
        },
      ]);
      ctx.record('verify-500', times);
    },
  },

  {
    figures: ['verify-latency'],
    async run(ctx) {
      const dir = ctx.project('latency');
      const classes = path.join(dir, 'target', 'classes');
      const manifest = path.join(dir, 'manifest.json');
      writeTree(classes, planTree(200, 3), manifest);
      const { clock, intercept, verifyStatus } = agentClock();
      await ctx.startAgents([[dir, { watchDirs: [classes], reloadMs: 1000, intercept, verifyStatus }]]);
      const [times] = await rounds(ctx.runs, [
        async () => {
          clock.reset();
          const result = await cli(dir, ['--json', '--', NODE, MUTATE, classes, manifest, '20'], 0);
          if (!jsonResult(result).provenLive) throw new Error('20 changed classes, not proven live');
          return result.endMs - clock.lastFinal;
        },
      ]);
      ctx.record('verify-latency', times);
    },
  },

  { figures: ['detect-200k'], tree: HUGE, run: (ctx) => nothingChanged(ctx, 'detect-200k', HUGE) },

  {
    figures: ['memory-200k'],
    tree: HUGE,
    async run(ctx) {
      if (TIME_BIN === undefined) return ctx.fail('memory-200k', '/usr/bin/time (GNU time) not found');
      const tree = await ctx.tree(HUGE);
      await ctx.startAgents([[tree.dir, { watchDirs: [tree.classes], scanCache: true }]]);
      const rssFile = path.join(ctx.work, 'rss.txt');
      const [walkRss, rss] = await rounds(ctx.runs, [
        async () => expectExit(await runWithPeakRss(NODE, [FLOOR, 'walk', tree.classes], { rssFile }), 0, 'floor.mjs walk').rssMB,
        async (round) => {
          // The in-process fake agent scans all 200,000 files before it answers BUILD started
          // and ok (seconds on a busy machine): a long receipt bound, as this figure is memory.
          const args = [BIN, '--json', '--timeout', '60000', '--', NODE, MUTATE, tree.classes, tree.manifest, '5000'];
          const result = expectExit(await runWithPeakRss(NODE, args, { cwd: tree.dir, rssFile }), 75, 'reclazz-build (5,000 changed)');
          if (round > 0) checkBeyondCapacity(result, 5000);
          return result.rssMB;
        },
      ]);
      ctx.record('memory-200k', rss, { floor: column('bare walk', walkRss, 'MB') });
    },
  },
  ...WATCH_JOBS,
];

/**
 * Change detection with nothing changed on a tree of `count` classes, per round divided by
 * a bare walk of the same tree: (run on the tree - the same run on an empty project) / walk.
 * The agents watch nothing: the fake's own scans of a big tree would land in the measured time.
 */
async function nothingChanged(ctx, id, count) {
  const tree = await ctx.tree(count);
  const empty = ctx.project('empty');
  await ctx.startAgents([[tree.dir], [empty]]);
  // Round 0, the warm-up, is also the tree's first run: it writes the index the others use.
  const [walks, withTree, without] = await rounds(ctx.runs, [
    async () => (await floor('walk', tree)).ms,
    async () => (await cli(tree.dir, ['--', 'true'], 0)).ms,
    async () => (await cli(empty, ['--', 'true'], 0)).ms,
  ]);
  const detection = perRound(withTree, without, minus);
  ctx.record(id, perRound(detection, walks, over), {
    measured: column('detection', detection),
    floor: column('walk', walks),
    details: { runMs: median(withTree), emptyRunMs: median(without) },
  });
}
