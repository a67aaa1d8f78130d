/**
 * The world of the truth fuzz (test/fuzz/truth.test.ts): a checkout with a shared module and the
 * modules of one or two apps, each app a fake agent in this process whose stand-in JVM loads its
 * class path, and the file operations a developer, a build and an IDE do to it. After a run that
 * ends 0 with a proof, {@link World.falseClaims} asks each JVM's truth oracle
 * (src/fake-agent/truth.ts) whether every class the run covered runs, or would load first,
 * exactly the bytes on disk. The oracle reads the fake's JVM, never the client's conclusions.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { jvmLoadedAtMs, jvmTruth } from '../../src/fake-agent/truth.js';
import { EVIDENCE } from '../../src/classes/evidence.js';
import { agentStatePlace, type StatePlace } from '../../src/state/folder.js';
import { readClassIndex } from '../../src/state/store.js';
import type { RunResult } from '../../src/outcome/result.js';
import { runSafeBuild } from '../../src/index.js';
import { LineClient } from '../fake-agent/line-client.js';
import { sleep } from './wait.js';
import { writeJar } from './zip.js';

/** The modules of the checkout: the shared one, each app's own, one an app watches but never loads, one that comes late. */
export type Module = 'shared' | 'svc-a' | 'svc-b' | 'extra' | 'late';

/** The classes a file may hold, by a short key; `AGen` is a name app A's agent excludes (`*Gen.class`). */
export const CLASSES = {
  S1: 'com.acme.shared.S1',
  S2: 'com.acme.shared.S2',
  A1: 'com.acme.a.A1',
  AGen: 'com.acme.a.AGen',
  B1: 'com.acme.b.B1',
} as const;
export type ClassKey = keyof typeof CLASSES;

/** The apps: A loads its own module and the shared one; B (in two-app worlds) its own and the shared one. */
export type App = 'a' | 'b';

/** How a world is laid out and its apps set up. */
export interface WorldSpec {
  /** A second app, B, loading the shared module too. */
  twoApps: boolean;
  /** Classes an old jar first on A's class path holds copies of (none: no jar). */
  jar: ClassKey[];
  /** svc-a's class output directory is a symbolic link to `classes-1` (its flips go to `classes-2`). */
  linked: boolean;
  /** Whether A's and B's agents watch the shared module (else they load more than they watch). */
  aWatchesShared: boolean;
  bWatchesShared: boolean;
  /** A's agent also watches `extra/`, which its JVM does not load from. */
  extra: boolean;
  /** `late/` is on A's class path and watched, but made only after A started. */
  late: boolean;
  /** The agents' watcher debounce, in ms: short, or a slow watcher. */
  debounceMs: number;
  /** How long after its JVM starts each agent's watcher arms (its `startupDelaySec`), in ms. */
  watcherStartMs: number;
  /** How long each app's JVM boots before it loads its classes, in ms (the fake's `jvmBootMs`). */
  jvmBootMs: number;
  /** The shared module's package folder is a symbolic link to a folder outside it (the JVM follows it; the agent's watcher does not). */
  linkedPackage: boolean;
  /** How long after a `BUILD ok` each agent captures the build, in ms: quick, or the real agent's (its debounce and batch, ~600 ms). */
  captureDelayMs: number;
  /** svc-a starts with a copy of the shared class S1 too (a stale output beside the real one): A's JVM loads that copy, first on its class path. */
  copy: boolean;
}

/** What each module starts with. */
const START: Record<Module, ClassKey[]> = { shared: ['S1', 'S2'], 'svc-a': ['A1', 'AGen'], 'svc-b': ['B1'], extra: ['S2'], late: [] };

/** The version of the bytes in the staged package folders ({@link World.swapPackage}). */
const STAGED_VERSION = 9;

/** One false claim: a class a ✔ run covered, whose JVM runs (or would load) other bytes than the file's. */
export interface FalseClaim {
  app: App;
  file: string;
  className: string;
  onDisk: string | undefined;
  jvm: { loaded: boolean; sha256: string | undefined; source?: string | undefined };
  inRun: boolean;
}

/** The bytes a class file holds: its class, module and version, so equal versions are identical bytes. */
export function bytesOf(key: ClassKey, module: Module, version: number): string {
  return `${CLASSES[key]}@${module}#${version}`;
}

const sha = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** A checkout on disk with its apps running. Always {@link World.close} it. */
export class World {
  readonly root: string;
  private readonly agents = new Map<App, FakeAgent>();
  private readonly killed = new Map<App, number>();
  private linkTarget = 1;

  private constructor(readonly spec: WorldSpec) {
    this.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-truth-')));
  }

  /** Lays out the checkout, waits a little (its files predate the JVMs), and starts the apps. */
  static async open(spec: WorldSpec): Promise<World> {
    const world = new World(spec);
    try {
      world.layOut();
      await sleep(40);
      for (const app of world.apps()) await world.start(app);
      return world;
    } catch (error) {
      await world.close();
      throw error;
    }
  }

  /** The apps of this world. */
  apps(): App[] {
    return this.spec.twoApps ? ['a', 'b'] : ['a'];
  }

  /** A module's class output directory (through svc-a's link, when it is one). */
  dir(module: Module): string {
    return path.join(this.root, module, 'target', 'classes');
  }

  /** The class file of `key` in `module`. */
  file(module: Module, key: ClassKey): string {
    return path.join(this.dir(module), ...CLASSES[key].split('.')) + '.class';
  }

  private layOut(): void {
    const { spec } = this;
    fs.mkdirSync(path.join(this.root, '.git'));
    for (const module of ['shared', 'svc-a', 'svc-b', 'extra'] as const) {
      if ((module === 'svc-b' && !spec.twoApps) || (module === 'extra' && !spec.extra)) continue;
      if (module === 'svc-a' && spec.linked) {
        for (const n of [1, 2]) {
          for (const key of START[module]) this.write(path.join(this.root, module, 'target', `classes-${n}`), key, module, n - 1);
        }
        fs.symlinkSync('classes-1', this.dir(module));
      } else for (const key of START[module]) this.write(this.dir(module), key, module, 0);
    }
    if (spec.copy && !spec.linked) this.write(this.dir('svc-a'), 'S1', 'svc-a', 0);
    // A prepared copy of each module's package folder with changed bytes, to be renamed into place later.
    for (const module of ['shared', 'svc-a', 'svc-b'] as const) {
      for (const key of START[module]) this.write(path.join(this.root, 'staged', module), key, module, STAGED_VERSION);
    }
    if (spec.jar.length > 0) this.writeJar(spec.jar, 0);
    if (spec.linkedPackage) {
      const pkg = path.dirname(this.file('shared', 'S1'));
      const outside = path.join(this.root, 'vendor', 'shared-pkg');
      fs.mkdirSync(path.dirname(outside), { recursive: true });
      fs.renameSync(pkg, outside);
      fs.symlinkSync(outside, pkg);
    }
  }

  /**
   * A changed copy of `module`'s package folder of `key`, laid out beside the checkout's modules before the apps start
   * (its files' stamps older than their JVMs), for {@link World.swapPackage}.
   */
  private staged(module: Module, key: ClassKey): string {
    return path.join(this.root, 'staged', module, ...CLASSES[key].split('.').slice(0, -1));
  }

  /**
   * `module`'s package folder of `key` replaced by its prepared copy renamed into its place (`rm -rf pkg && mv
   * staged/pkg pkg`): its files keep the stamps they had before the apps started. Once per module.
   */
  swapPackage(module: Module, key: ClassKey): void {
    const staged = this.staged(module, key);
    const folder = path.dirname(this.file(module, key));
    if (!fs.existsSync(staged) || !fs.existsSync(folder)) return;
    fs.rmSync(folder, { recursive: true });
    fs.renameSync(staged, folder);
  }

  private write(dir: string, key: ClassKey, module: Module, version: number): void {
    const file = path.join(dir, ...CLASSES[key].split('.')) + '.class';
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytesOf(key, module, version));
  }

  /** Puts a jar holding copies of `keys` (version `version`) in place of the old one, by a rename. */
  writeJar(keys: readonly ClassKey[], version: number): void {
    const jar = path.join(this.root, 'libs', 'dep.jar');
    fs.mkdirSync(path.dirname(jar), { recursive: true });
    const entries = Object.fromEntries(
      keys.map((key) => [`${CLASSES[key].split('.').join('/')}.class`, bytesOf(key, 'shared', 100 + version)]),
    );
    writeJar(`${jar}.tmp`, entries);
    fs.renameSync(`${jar}.tmp`, jar);
  }

  /** The fake agent options of `app`: what its JVM loads, what its agent watches, fast timers. */
  private options(app: App): FakeAgentOptions {
    const { spec } = this;
    const own = this.dir(app === 'a' ? 'svc-a' : 'svc-b');
    const shared = this.dir('shared');
    const late = spec.late && app === 'a' ? [this.dir('late')] : [];
    const jar = spec.jar.length > 0 && app === 'a' ? [path.join(this.root, 'libs', 'dep.jar')] : [];
    const watchesShared = app === 'a' ? spec.aWatchesShared : spec.bWatchesShared;
    return {
      portFile: path.join(this.root, app === 'a' ? 'svc-a' : 'svc-b', '.reclazz', 'agent.port'),
      classPath: [...jar, own, shared, ...late],
      watchDirs: [own, ...(watchesShared ? [shared] : []), ...(spec.extra && app === 'a' ? [this.dir('extra')] : []), ...late],
      excludePatterns: app === 'a' ? ['*Gen.class'] : [],
      autoReload: true,
      watchDebounceMs: spec.debounceMs,
      watcherStartMs: spec.watcherStartMs,
      jvmBootMs: spec.jvmBootMs,
      watchPollMs: 10,
      captureDelayMs: spec.captureDelayMs,
      reloadMs: 5,
      heartbeatMs: 0,
      java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' },
    };
  }

  private async start(app: App): Promise<void> {
    this.agents.set(app, await startFakeAgent(this.options(app)));
    this.killed.delete(app);
  }

  /** The running agent of `app`, if it runs. */
  agent(app: App): FakeAgent | undefined {
    return this.agents.get(app);
  }

  /** When the running `app`'s JVM loaded its classes, epoch ms (undefined: it does not run). */
  loadedAtMs(app: App): number | undefined {
    const agent = this.agents.get(app);
    return agent === undefined ? undefined : jvmLoadedAtMs(agent);
  }

  /** The app's JVM restarts (a new JVM loads what is on disk now). */
  async restart(app: App): Promise<void> {
    await this.agents.get(app)?.restartJvm();
  }

  /** The app is killed: nothing answers, and its port file stays, naming the dead port (kill -9). */
  async kill(app: App): Promise<void> {
    const agent = this.agents.get(app);
    if (agent === undefined) return;
    const { port } = agent;
    await agent.stop();
    this.agents.delete(app);
    this.killed.set(app, port);
    const portFile = this.options(app).portFile!;
    fs.mkdirSync(path.dirname(portFile), { recursive: true });
    fs.writeFileSync(portFile, String(port));
  }

  /** A killed app starts again: a new JVM loads what is on disk now. */
  async revive(app: App): Promise<void> {
    if (this.killed.has(app)) await this.start(app);
  }

  /** RELOAD pause or resume on the app's agent, answered. */
  async reload(app: App, action: 'pause' | 'resume'): Promise<void> {
    const agent = this.agents.get(app);
    if (agent === undefined) return;
    const client = await LineClient.ready(agent.port);
    try {
      await client.ask(`RELOAD ${action} request=f1`, 'RELOAD_STATE', 'f1');
    } finally {
      client.socket.destroy();
    }
  }

  /** svc-a's link is made to point at its other folder (`ln -sfn`: a new link renamed over the old one). */
  flipLink(): void {
    if (!this.spec.linked) return;
    this.linkTarget = 3 - this.linkTarget;
    const link = this.dir('svc-a');
    fs.symlinkSync(`classes-${this.linkTarget}`, `${link}.new`);
    fs.renameSync(`${link}.new`, link);
  }

  /** Where `app`'s agent's record is kept (its class index, `classes.idx`). */
  statePlace(app: App): StatePlace {
    const portFile = this.options(app).portFile!;
    // A port file names the place; the port is read only for an agent given by its number.
    return agentStatePlace(this.root, { port: 0, portFile, projectDir: path.dirname(path.dirname(portFile)) });
  }

  /** One run of reclazz-build in the checkout root, building with `script` (sh). */
  run(script: string): Promise<RunResult> {
    return runSafeBuild({
      tool: 'command',
      args: ['sh', '-c', script],
      cwd: this.root,
      env: { PATH: process.env.PATH },
      sharesTerminal: false,
      timeoutMs: 3000,
      waitMs: 3000,
      verifyTimeoutMs: 1500,
    });
  }

  /**
   * The classes a run that ended 0 with a proof covered and that run other bytes than the file's
   * in a JVM: for each app in the run, every row of its record but those not its JVM's
   * (`elsewhere`), against what its JVM runs of the class, or would load first; for a running app
   * not in the run, each such class whose JVM loads it from that very file.
   */
  falseClaims(result: RunResult): FalseClaim[] {
    const sessions = new Set([result.agent?.sessionId, ...(result.agents ?? []).map((a) => a.agent?.sessionId)]);
    const covered: Array<{ file: string; className: string; onDisk: string | undefined }> = [];
    const found: FalseClaim[] = [];
    const inRun = [...this.agents].filter(([, agent]) => sessions.has(agent.sessionId));
    for (const [app, agent] of inRun) {
      const index = readClassIndex(this.statePlace(app), () => {});
      if (index.sessionId !== agent.sessionId) continue;
      const files = new Map<string, string>();
      const elsewhere = new Set<string>();
      index.paths.forEach((file, row) => {
        const dir = index.dirs[index.dirOf[row]!]!;
        if (index.evidence[row] === EVIDENCE.elsewhere) elsewhere.add(dir);
        else if (index.gone[row] !== 1) files.set(file, dir);
      });
      // A class file reached through a symbolic link folder is covered too, whether the record has it or not.
      for (const dir of index.dirs.filter((d) => !elsewhere.has(d))) for (const file of throughLinks(dir)) files.set(file, dir);
      for (const [file, dir] of files) {
        const className = path.relative(dir, file).slice(0, -'.class'.length).split(path.sep).join('.');
        const onDisk = shaOf(file);
        covered.push({ file, className, onDisk });
        const jvm = jvmTruth(agent, className);
        if (jvm.sha256 !== onDisk) found.push({ app, file, className, onDisk, jvm, inRun: true });
      }
    }
    for (const [app, agent] of this.agents) {
      if (sessions.has(agent.sessionId)) continue;
      for (const claim of covered) {
        const jvm = jvmTruth(agent, claim.className);
        if (jvm.source !== undefined && realOf(jvm.source) === realOf(claim.file) && jvm.sha256 !== claim.onDisk) {
          found.push({ app, ...claim, jvm, inRun: false });
        }
      }
    }
    return found;
  }

  /** Stops the apps and removes the checkout. */
  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.stop()));
    this.agents.clear();
    fs.rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The class files below `dir` whose path goes through a symbolic link to a folder (each link's folder once). */
function throughLinks(dir: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const walk = (folder: string, linked: boolean): void => {
    const real = realOf(folder);
    if (seen.has(real)) return;
    seen.add(real);
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      const isLink = entry.isSymbolicLink();
      const stat = fs.statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(full, linked || isLink);
      else if (linked && stat?.isFile() && entry.name.endsWith('.class')) found.push(full);
    }
  };
  if (fs.existsSync(dir)) walk(dir, false);
  return found;
}

function shaOf(file: string): string | undefined {
  try {
    return sha(fs.readFileSync(file));
  } catch {
    return undefined;
  }
}

function realOf(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
