/**
 * The truth fuzz's scenarios: a world (truth-world.ts) and a sequence of what happens to it, as
 * plain data a regression test can keep written out; fast-check's arbitraries of them; playing
 * one, with the property checked after every run: a run that ends 0 with a proof covered only
 * classes whose JVMs run, or would load first, exactly the bytes on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { COARSE_CLOCK_MS } from '../../src/classes/evidence.js';
import { INDEX_FILE, stateFolderPath } from '../../src/state/folder.js';
import type { RunResult } from '../../src/outcome/result.js';
import { waitFor, sleep } from './wait.js';
import { type App, bytesOf, CLASSES, type ClassKey, type FalseClaim, type Module, World, type WorldSpec } from './truth-world.js';
import { describeResult } from '../../src/report/words.js';

/** A class file written (`v`: its version) or deleted, in a module's class output directory. */
interface Edit {
  at: Module;
  cls: ClassKey;
  v: number | 'delete';
}

/** One thing that happens to the world. */
type Op =
  /** reclazz-build runs a build that makes `edits` and exits `exit` (1: a failing build). */
  | { op: 'build'; edits: Edit[]; exit: 0 | 1 }
  /**
   * A compile outside reclazz-build (an IDE, a plain `mvn compile`), or a copy that keeps an hour-old mtime (`cp -p`,
   * `rsync -a`, `tar x`); `loadStamp`: written right after that app's JVM loaded its classes, its mtime the earliest
   * the file system's coarse clock gives such a write (a tick, 10 ms, before the load).
   */
  | { op: 'outside'; edits: Edit[]; keepTime?: boolean; loadStamp?: App | undefined }
  /** A class file renamed onto another class's path. */
  | { op: 'rename'; at: Module; from: ClassKey; to: ClassKey }
  /** A class output directory replaced by a changed copy renamed into its place (`rm -rf out && mv staging out`). */
  | { op: 'swap-dir'; at: Module; edits: Edit[] }
  /** A package folder renamed away and back. */
  | { op: 'rename-package'; at: Module }
  /** A package folder replaced by a changed copy prepared before the apps started, renamed into its place. */
  | { op: 'swap-package'; at: Module }
  /** svc-a's symbolic link flipped to its other folder. */
  | { op: 'flip-link' }
  /** The jar on A's class path replaced by one holding copies of `holds`. */
  | { op: 'jar'; holds: ClassKey[]; v: number }
  /** An app restarted (a new JVM loads what is on disk), killed (its port file stays), started again, paused or resumed. */
  | { op: 'restart' | 'kill' | 'revive' | 'pause' | 'resume'; app: App }
  /** Time passes: until a watcher has acted on what it saw, or long enough for the rule to take a write as noticed. */
  | { op: 'wait'; until: 'settled' | 'noticed' }
  /** More than 512 classes reloaded by the app's watcher (new ones, removed again after): its receipts evicted. */
  | { op: 'flood'; app: App }
  /** The run's record of an app lost or corrupt. */
  | { op: 'lose-record'; app: App; how: 'delete' | 'corrupt' }
  /** The late folder made, after its app started, holding a copy of a shared class. */
  | { op: 'late-folder'; v: number }
  /** The app writes a log file in the checkout root. */
  | { op: 'root-log' };

/** A world and what happens to it. */
export interface Scenario {
  world: WorldSpec;
  ops: Op[];
}

/** A run that ended 0 with a proof while a class it covered runs other bytes: the property broken. */
class FalseCheck extends Error {
  constructor(
    readonly claims: FalseClaim[],
    readonly step: number,
    readonly result: RunResult,
  ) {
    super(
      `a false ✔ at step ${step}: "${describeResult(result).message}"\n` +
        claims
          .map(
            (c) =>
              `  ${c.className} in ${c.file}: on disk ${c.onDisk?.slice(0, 12)}, app ${c.app}${c.inRun ? '' : ' (not in the run)'} ` +
              `${c.jvm.loaded ? 'runs' : 'would load'} ${c.jvm.sha256?.slice(0, 12) ?? 'nothing'}${c.jvm.source === undefined ? '' : ` from ${c.jvm.source}`}`,
          )
          .join('\n') +
        `\n  verdicts: ${result.verdicts.map((v) => `${v.className} ${v.status}${v.evidence === undefined ? '' : ` (${v.evidence.by})`}`).join(', ')}`,
    );
  }
}

/** The bytes a build writes for `edit`, as a POSIX shell line. */
function shellEdit(world: World, edit: Edit): string {
  const file = world.file(edit.at, edit.cls);
  if (edit.v === 'delete') return `rm -f '${file}'`;
  return `mkdir -p '${path.dirname(file)}' && printf '%s' '${bytesOf(edit.cls, edit.at, edit.v)}' > '${file}'`;
}

/** `edit` made here, as an outside compile writes it; with `mtimeMs`, as a write the file system stamped then (epoch ms). */
function applyEdit(world: World, edit: Edit, dir = world.dir(edit.at), mtimeMs?: number): void {
  const file = path.join(dir, ...CLASSES[edit.cls].split('.')) + '.class';
  if (edit.v === 'delete') return fs.rmSync(file, { force: true });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytesOf(edit.cls, edit.at, edit.v));
  if (mtimeMs !== undefined) fs.utimesSync(file, new Date(mtimeMs), new Date(mtimeMs));
}

/** The mtime an outside write gets (undefined: the file system's): an hour ago, or a tick before an app's JVM loaded. */
function stampOf(world: World, op: { keepTime?: boolean; loadStamp?: App | undefined }): number | undefined {
  if (op.keepTime === true) return Date.now() - 3_600_000;
  const loadedAt = op.loadStamp === undefined ? undefined : world.loadedAtMs(op.loadStamp);
  return loadedAt === undefined ? undefined : loadedAt - COARSE_CLOCK_MS;
}

/** How long a watcher takes to act on a write it saw (its debounce, its poll, the capture and the reload), in ms, with room. */
const settleMs = (world: World): number => world.spec.debounceMs + 150;
/** Longer than the rule's notice time for a write (`debounceMs` + 1 s, evidence.ts `noticeMs`), in ms. */
const noticeMs = (world: World): number => world.spec.debounceMs + 1150;

/** More classes than the agent keeps receipts for (512). */
const FLOOD = 520;

/**
 * Does `op` to `world`; a run's result is returned. Ops that do not apply to this world (a link
 * flip without a link, an app it does not have) do nothing.
 */
async function perform(world: World, op: Op): Promise<RunResult | undefined> {
  switch (op.op) {
    case 'build':
      return world.run([...op.edits.map((edit) => shellEdit(world, edit)), `exit ${op.exit}`].join('\n'));
    case 'outside':
      for (const edit of op.edits) applyEdit(world, edit, world.dir(edit.at), stampOf(world, op));
      return undefined;
    case 'rename': {
      const from = world.file(op.at, op.from);
      if (fs.existsSync(from)) {
        fs.mkdirSync(path.dirname(world.file(op.at, op.to)), { recursive: true });
        fs.renameSync(from, world.file(op.at, op.to));
      }
      return undefined;
    }
    case 'swap-dir': {
      const dir = world.dir(op.at);
      if (!fs.existsSync(dir) || fs.lstatSync(dir).isSymbolicLink()) return undefined;
      fs.cpSync(dir, `${dir}.staging`, { recursive: true, preserveTimestamps: true });
      for (const edit of op.edits) applyEdit(world, { ...edit, at: op.at }, `${dir}.staging`);
      fs.rmSync(dir, { recursive: true });
      fs.renameSync(`${dir}.staging`, dir);
      return undefined;
    }
    case 'rename-package': {
      const folder = path.dirname(world.file(op.at, packageKey(op.at)));
      if (!fs.existsSync(folder)) return undefined;
      fs.renameSync(folder, `${folder}.moved`);
      fs.renameSync(`${folder}.moved`, folder);
      return undefined;
    }
    case 'swap-package':
      world.swapPackage(op.at, packageKey(op.at));
      return undefined;
    case 'flip-link':
      world.flipLink();
      return undefined;
    case 'jar':
      if (world.spec.jar.length > 0) world.writeJar(op.holds, op.v);
      return undefined;
    case 'restart':
      await world.restart(op.app);
      return undefined;
    case 'kill':
      await world.kill(op.app);
      return undefined;
    case 'revive':
      await world.revive(op.app);
      return undefined;
    case 'pause':
    case 'resume':
      await world.reload(op.app, op.op);
      return undefined;
    case 'wait':
      await sleep(op.until === 'settled' ? settleMs(world) : noticeMs(world));
      return undefined;
    case 'flood':
      await flood(world, op.app);
      return undefined;
    case 'lose-record': {
      const file = path.join(stateFolderPath(world.statePlace(op.app)), INDEX_FILE);
      if (op.how === 'delete') fs.rmSync(file, { force: true });
      else if (fs.existsSync(file)) fs.writeFileSync(file, 'not an index');
      return undefined;
    }
    case 'late-folder':
      if (world.spec.late) applyEdit(world, { at: 'late', cls: 'S1', v: op.v });
      return undefined;
    case 'root-log':
      fs.appendFileSync(path.join(world.root, 'app.log'), 'a line\n');
      return undefined;
  }
}

/** A class whose package folder the package ops move: the module's own. */
function packageKey(module: Module): ClassKey {
  return module === 'svc-a' ? 'A1' : module === 'svc-b' ? 'B1' : 'S1';
}

/** {@link FLOOD} new classes in the app's own module, reloaded by its watcher, then removed (the agent ignores deletions). */
async function flood(world: World, app: App): Promise<void> {
  const agent = world.agent(app);
  if (agent === undefined) return;
  const folder = path.join(world.dir(app === 'a' ? 'svc-a' : 'svc-b'), 'com', 'acme', 'gen');
  fs.mkdirSync(folder, { recursive: true });
  const before = agent.captures;
  for (let i = 0; i < FLOOD; i += 1) fs.writeFileSync(path.join(folder, `G${i}.class`), `gen-${i}`);
  // Paused, or a hold kept: the watcher captures nothing, and the classes stay, pending.
  await waitFor(() => agent.captures > before, 'the flood to be captured', { timeoutMs: 5000 }).catch(() => undefined);
  await sleep(50);
  fs.rmSync(folder, { recursive: true, force: true });
}

/**
 * Plays `scenario` in a world of its own, checking the property after every run.
 * @throws FalseCheck at the first run that ended 0 with a proof while a class it covered runs other bytes.
 */
export async function play(scenario: Scenario): Promise<{ runs: number; proven: number }> {
  const world = await World.open(scenario.world);
  let runs = 0;
  let proven = 0;
  try {
    for (const [step, op] of scenario.ops.entries()) {
      const result = await perform(world, op);
      if (result === undefined) continue;
      runs += 1;
      if (result.exitCode !== 0 || !result.provenLive) continue;
      proven += 1;
      const claims = world.falseClaims(result);
      if (claims.length > 0) throw new FalseCheck(claims, step, result);
    }
    return { runs, proven };
  } finally {
    await world.close();
  }
}

/** A scenario written out to read: the world on one line, then each op on its own. */
export function describeScenario(scenario: Scenario): string {
  return `{\n  world: ${JSON.stringify(scenario.world)},\n  ops: [\n${scenario.ops.map((op) => `    ${JSON.stringify(op)},`).join('\n')}\n  ],\n}`;
}

const weighted = <T>(...pairs: Array<[number, fc.Arbitrary<T>]>): fc.Arbitrary<T> =>
  fc.oneof(...pairs.map(([weight, arbitrary]) => ({ weight, arbitrary })));

const moduleArb: fc.Arbitrary<Module> = weighted(
  [4, fc.constant('shared' as const)],
  [4, fc.constant('svc-a' as const)],
  [2, fc.constant('svc-b' as const)],
  [1, fc.constant('extra' as const)],
  [1, fc.constant('late' as const)],
);
const classArb: fc.Arbitrary<ClassKey> = fc.constantFrom(...(Object.keys(CLASSES) as ClassKey[]));
const appArb: fc.Arbitrary<App> = fc.constantFrom('a' as const, 'b' as const);
/** Where a class is mostly built: its own module (a copy elsewhere now and then). */
const HOME: Record<ClassKey, Module> = { S1: 'shared', S2: 'shared', A1: 'svc-a', AGen: 'svc-a', B1: 'svc-b' };
const editArb: fc.Arbitrary<Edit> = fc
  .record({
    cls: classArb,
    home: weighted([5, fc.constant(true)], [1, fc.constant(false)]),
    at: moduleArb,
    v: weighted<number | 'delete'>([6, fc.integer({ min: 0, max: 3 })], [1, fc.constant('delete' as const)]),
  })
  .map(({ cls, home, at, v }) => ({ at: home ? HOME[cls] : at, cls, v }));
const editsArb = fc.array(editArb, { minLength: 0, maxLength: 3 });

/** One op, weighted toward builds and outside compiles. */
const opArb: fc.Arbitrary<Op> = weighted<Op>(
  [
    12,
    fc.record({
      op: fc.constant('build' as const),
      edits: editsArb,
      exit: weighted<0 | 1>([5, fc.constant(0 as const)], [1, fc.constant(1 as const)]),
    }),
  ],
  [
    6,
    fc.record({
      op: fc.constant('outside' as const),
      edits: fc.array(editArb, { minLength: 1, maxLength: 3 }),
      keepTime: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
      loadStamp: weighted<App | undefined>([4, fc.constant(undefined)], [1, appArb]),
    }),
  ],
  [
    6,
    fc.record({
      op: fc.constant('wait' as const),
      until: weighted([3, fc.constant('settled' as const)], [1, fc.constant('noticed' as const)]),
    }),
  ],
  [2, fc.record({ op: fc.constant('rename' as const), at: moduleArb, from: classArb, to: classArb })],
  [2, fc.record({ op: fc.constant('swap-dir' as const), at: moduleArb, edits: editsArb })],
  [1, fc.record({ op: fc.constant('rename-package' as const), at: moduleArb })],
  [1, fc.record({ op: fc.constant('swap-package' as const), at: moduleArb })],
  [2, fc.constant({ op: 'flip-link' as const })],
  [
    2,
    fc.record({ op: fc.constant('jar' as const), holds: fc.subarray(['S1', 'S2', 'A1'] as ClassKey[]), v: fc.integer({ min: 0, max: 2 }) }),
  ],
  [
    6,
    fc.record({
      op: fc.constantFrom('restart' as const, 'kill' as const, 'revive' as const, 'pause' as const, 'resume' as const),
      app: appArb,
    }),
  ],
  [1, fc.record({ op: fc.constant('flood' as const), app: appArb })],
  [2, fc.record({ op: fc.constant('lose-record' as const), app: appArb, how: fc.constantFrom('delete' as const, 'corrupt' as const) })],
  [1, fc.record({ op: fc.constant('late-folder' as const), v: fc.integer({ min: 0, max: 2 }) })],
  [1, fc.constant({ op: 'root-log' as const })],
);

const worldArb: fc.Arbitrary<WorldSpec> = fc.record({
  twoApps: fc.boolean(),
  jar: weighted<ClassKey[]>([3, fc.constant([])], [2, fc.subarray(['S1', 'S2', 'A1'] as ClassKey[], { minLength: 1 })]),
  linked: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
  aWatchesShared: weighted([4, fc.constant(true)], [1, fc.constant(false)]),
  bWatchesShared: fc.boolean(),
  extra: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
  late: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
  debounceMs: weighted([3, fc.constant(20)], [1, fc.constant(300)]),
  watcherStartMs: weighted([3, fc.constant(0)], [1, fc.constant(400)]),
  // A slow boot leaves the JVM's start, as its process shows it, well before the load: a write just after the load is later.
  jvmBootMs: weighted([3, fc.constant(20)], [1, fc.constant(200)]),
  linkedPackage: weighted([4, fc.constant(false)], [1, fc.constant(true)]),
  captureDelayMs: weighted([3, fc.constant(5)], [1, fc.constant(300)]),
  copy: weighted([3, fc.constant(false)], [1, fc.constant(true)]),
});

const buildArb: fc.Arbitrary<Op> = fc.record({ op: fc.constant('build' as const), edits: editsArb, exit: fc.constant(0 as const) });

/** Scenarios: a world and 1 to 7 ops, most of them runs, the last one always a build that exits 0 (a sequence with no run proves nothing). */
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  world: worldArb,
  ops: fc.tuple(fc.array(opArb, { minLength: 0, maxLength: 6 }), buildArb).map(([ops, last]) => [...ops, last]),
});

/** One of the two apps killed, started again or restarted, mostly. */
const lifeArb: fc.Arbitrary<Op> = fc.record({ op: fc.constantFrom('kill' as const, 'revive' as const, 'restart' as const), app: appArb });
/** A class of the shared module, built there. */
const sharedEditArb: fc.Arbitrary<Edit> = fc.record({
  at: fc.constant('shared' as const),
  cls: fc.constantFrom('S1' as const, 'S2' as const),
  v: weighted<number | 'delete'>([6, fc.integer({ min: 0, max: 3 })], [1, fc.constant('delete' as const)]),
});

/**
 * Two apps that both load, and mostly both watch, the shared class output directory, while one of
 * them is killed, started again or restarted between builds and outside compiles of shared classes.
 */
const twoAppsArb: fc.Arbitrary<Scenario> = fc.record({
  world: worldArb.chain((world) =>
    fc
      .record({
        aWatchesShared: weighted([4, fc.constant(true)], [1, fc.constant(false)]),
        bWatchesShared: weighted([4, fc.constant(true)], [1, fc.constant(false)]),
      })
      .map((watches) => ({ ...world, ...watches, twoApps: true })),
  ),
  ops: fc
    .tuple(
      fc.array(
        weighted<Op>(
          [4, lifeArb],
          [
            4,
            fc.record({
              op: fc.constant('build' as const),
              edits: fc.array(sharedEditArb, { maxLength: 2 }),
              exit: weighted<0 | 1>([5, fc.constant(0 as const)], [1, fc.constant(1 as const)]),
            }),
          ],
          [
            2,
            fc.record({
              op: fc.constant('outside' as const),
              edits: fc.array(sharedEditArb, { minLength: 1, maxLength: 2 }),
              loadStamp: weighted<App | undefined>([3, fc.constant(undefined)], [1, appArb]),
            }),
          ],
          [3, opArb],
        ),
        { maxLength: 7 },
      ),
      buildArb,
    )
    .map(([ops, last]) => [...ops, last]),
});

/** Where the search looks: everywhere, or two apps sharing a class output directory while one of them dies and comes back. */
export type Focus = 'all' | 'two-apps';
const SCENARIOS: Record<Focus, fc.Arbitrary<Scenario>> = { all: scenarioArb, 'two-apps': twoAppsArb };

/** A scenario the property failed on, shrunk, with what replays it. */
export interface Counterexample {
  /** The seed and path fast-check replays it with. */
  seed: number;
  path: string;
  scenario: Scenario;
  error: string;
}

/** What {@link runTruthFuzz} did. */
export interface FuzzReport {
  ran: number;
  runs: number;
  proven: number;
  ms: number;
  failures: Counterexample[];
}

/**
 * Plays `count` scenarios, `workers` at a time, each worker a fast-check run of its own seed
 * (`seed + i`): a failing scenario is shrunk within its worker, which then stops. With `path`,
 * replays the one scenario `seed` and `path` name.
 */
export async function runTruthFuzz(options: {
  seed: number;
  count: number;
  workers: number;
  path?: string;
  /** Where to look (default `all`). */
  focus?: Focus;
  onProgress?: (ran: number) => void;
  /** Told of each counterexample as soon as its worker has shrunk it. */
  onFailure?: (failure: Counterexample) => void;
}): Promise<FuzzReport> {
  const started = performance.now();
  const tally = { ran: 0, runs: 0, proven: 0 };
  const property = fc.asyncProperty(SCENARIOS[options.focus ?? 'all'], async (scenario) => {
    const done = await play(scenario);
    tally.ran += 1;
    tally.runs += done.runs;
    tally.proven += done.proven;
    options.onProgress?.(tally.ran);
  });
  const workers = options.path === undefined ? options.workers : 1;
  const failures: Counterexample[] = [];
  await Promise.all(
    Array.from({ length: workers }, async (_, i) => {
      const seed = (options.seed + i) | 0;
      const numRuns = options.path === undefined ? Math.ceil((options.count - i) / workers) : 1;
      if (numRuns <= 0) return;
      const details = await fc.check(property, {
        seed,
        numRuns,
        ...(options.path === undefined ? {} : { path: options.path, endOnFailure: true }),
      });
      if (details.failed && details.counterexample !== null) {
        const failure = {
          seed,
          path: details.counterexamplePath ?? '',
          scenario: details.counterexample[0],
          error: String(details.errorInstance),
        };
        failures.push(failure);
        options.onFailure?.(failure);
      }
    }),
  );
  return { ...tally, ms: performance.now() - started, failures };
}
