/**
 * Apps of one checkout, each a fake agent in its app folder, that a test can kill as `kill -9`
 * kills a JVM and start again; two services sharing a module, and a watch of them. The agent writes its port file when it starts and deletes it when
 * it stops normally; after `kill -9` the file stays behind, naming a port nothing listens on
 * (protocol.md "Finding the agent"; agent `agent/StatusServer.java` start and stop). Here the test
 * keeps the port file as the agent would, so that a kill leaves it in place at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { sha256Hex, startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { jvmTruth } from '../../src/fake-agent/truth.js';
import { appStartsLater } from './agents.js';
import { afterThisTest } from './cleanup.js';
import { startCli, tempDir, writeClass } from './cli.js';
import { waitFor } from './wait.js';

/** One app: its folder, its port file, and its agent while it runs. */
interface App {
  /** The app's folder: its JVM runs there, and its port file is `<dir>/.reclazz/agent.port`. */
  dir: string;
  portFile: string;
  /** The agent of the app's JVM now, or undefined while it is not running. */
  readonly agent: FakeAgent | undefined;
  /** Every agent it ran so far, oldest first (each a JVM of its own). */
  readonly runs: readonly FakeAgent[];
  /** Starts a new JVM (a new agent session, a new port written to the port file) once the last one is gone; `extra` for its agent. */
  start(extra?: FakeAgentOptions): Promise<FakeAgent>;
  /** `kill -9`: the JVM and its connections end at once, and the port file stays, naming a port nothing listens on. */
  kill(): Promise<void>;
  /** A normal stop: the JVM ends, and its agent deletes the port file. */
  stop(): Promise<void>;
  /** Deletes the port file (a stale one, as a start script may before it starts the app). */
  removePortFile(): void;
  /**
   * A restart command that restarts this app alone: it asks (a file in the app folder), and the
   * app stops normally and starts again ({@link App.stop}, {@link App.start}), a new JVM loading the
   * class files on disk. Asked again, it restarts again. No longer heard after the test.
   */
  restartCommand(): string;
}

/**
 * An app in `dir` whose agents get `options` (fast capture and reload, no heartbeat, then those);
 * not started yet. Whatever runs at the end of the test is stopped.
 */
function appIn(dir: string, options: FakeAgentOptions): App {
  const portFile = path.join(dir, '.reclazz', 'agent.port');
  const runs: FakeAgent[] = [];
  let agent: FakeAgent | undefined;
  afterThisTest(() => agent?.stop());
  return {
    dir,
    portFile,
    get agent() {
      return agent;
    },
    runs,
    async start(extra = {}) {
      if (agent !== undefined) throw new Error(`the app in ${dir} is running`);
      await appStartsLater();
      const started = await startFakeAgent({ appDir: dir, captureDelayMs: 20, reloadMs: 20, heartbeatMs: 0, ...options, ...extra });
      agent = started;
      runs.push(started);
      writePortFile(portFile, started.port);
      return started;
    },
    async kill() {
      const killed = agent;
      agent = undefined;
      await killed?.stop();
    },
    async stop() {
      const stopped = agent;
      agent = undefined;
      await stopped?.stop();
      fs.rmSync(portFile, { force: true });
    },
    removePortFile: () => fs.rmSync(portFile, { force: true }),
    restartCommand() {
      const asked = path.join(dir, 'restart-asked');
      let restarting = false;
      const timer = setInterval(() => {
        if (restarting || !fs.existsSync(asked)) return;
        restarting = true;
        fs.rmSync(asked);
        void (async () => {
          await this.stop();
          await this.start();
          restarting = false;
        })();
      }, 20);
      afterThisTest(() => clearInterval(timer));
      return `touch '${asked}'`;
    },
  };
}

/** Writes `port` to `file` as the agent does: a temporary file renamed into place. */
function writePortFile(file: string, port: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, String(port));
  fs.renameSync(temp, file);
}

/** Two services of one checkout (svc-a, svc-b), each an app whose agent watches its own classes and the shared module's. */
export interface TwoServices {
  root: string;
  /** svc-a's app, then svc-b's. */
  apps: [App, App];
  /** The shared class file com.acme.shared.Money, and its source, which the build copies into it. */
  money: string;
  source: string;
  /** The build command (after `--`): copies the source; while `hold()` is on it waits, once started, for `release()`. */
  build: string[];
  /** Builds started from now on wait at their start until `release()`; resolves when one has started. */
  hold(): { started: () => Promise<void>; release: () => void };
  /** Saves `text` as Money's source. */
  save(text: string): void;
  /** Whether the app's JVM runs Money with the bytes `text`; `dead` while it does not run. */
  runs(app: App, text: string): boolean | 'dead';
}

/** The shared class both apps run. */
export const MONEY = 'com.acme.shared.Money';

/** {@link TwoServices}, both apps started: their JVMs loaded Money `money-v1`; `options` for both apps' agents. */
export async function twoServices(options: FakeAgentOptions = {}): Promise<TwoServices> {
  const root = tempDir();
  const shared = path.join(root, 'shared', 'target', 'classes');
  const money = writeClass(shared, MONEY, 'money-v1');
  const apps = ['a', 'b'].map((svc) => {
    const dir = path.join(root, `svc-${svc}`);
    const classes = path.join(dir, 'target', 'classes');
    writeClass(classes, `com.acme.${svc}.Service`, `${svc}-v1`);
    return appIn(dir, { watchDirs: [classes, shared], ...options });
  }) as [App, App];
  const source = path.join(root, 'shared', 'src', 'main', 'java', 'com', 'acme', 'shared', 'Money.java');
  fs.mkdirSync(path.dirname(source), { recursive: true });
  fs.writeFileSync(source, 'money-v1');
  fs.writeFileSync(path.join(root, 'shared', 'pom.xml'), '<project/>');
  const [held, started, go] = ['build-held', 'build-started', 'build-go'].map((name) => path.join(root, name)) as [string, string, string];
  const script = `if [ -e ${held} ]; then touch ${started}; while [ ! -e ${go} ]; do sleep 0.02; done; rm -f ${held} ${go}; fi; cp ${source} ${money}`;
  for (const app of apps) await app.start();
  return {
    root,
    apps,
    money,
    source,
    build: ['sh', '-c', script],
    hold() {
      fs.rmSync(started, { force: true });
      fs.writeFileSync(held, '');
      return { started: () => waitFor(() => fs.existsSync(started), 'the build to start'), release: () => fs.writeFileSync(go, '') };
    },
    save: (text) => fs.writeFileSync(source, text),
    // The truth oracle (src/fake-agent/truth.ts): the bytes the app's JVM runs, beside the wire.
    runs: (app, text) => {
      if (app.agent === undefined) return 'dead';
      const truth = jvmTruth(app.agent, MONEY);
      return truth.loaded && truth.sha256 === sha256Hex(Buffer.from(text));
    },
  };
}

/** A `cycle` line of a watch's `--json`. */
export interface WatchCycle {
  cycle: number;
  /** Source paths changed: 0 for the proof in an app that came back. */
  changed: number;
  line: string;
  result: {
    reason: string;
    exitCode: number;
    provenLive: boolean;
    message: string;
    classes: { className: string; status: string; detail: string; agentSource?: string }[];
    agents?: { agentSource: string; reason: string; exitCode: number; provenLive: boolean }[];
  };
}

/** `reclazz-build watch --json` in `root` building `build`, its stdout's JSON lines and stderr's lines collected; stopped after the test. */
export function watchIn(root: string, build: string[], args: string[] = []) {
  const cli = startCli(['watch', '--json', '--debounce', '100', ...args, '--', ...build], { cwd: root, timeoutMs: 600_000 });
  const json: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  readline.createInterface({ input: cli.stdout! }).on('line', (line) => json.push(JSON.parse(line) as Record<string, unknown>));
  readline.createInterface({ input: cli.stderr! }).on('line', (line) => stderr.push(line));
  afterThisTest(async () => {
    if (cli.exitCode === null) cli.kill('SIGKILL');
    await cli;
  });
  const cycles = () => json.filter((j) => j.type === 'cycle') as unknown as WatchCycle[];
  /** News kinds and `cycle` for each cycle, in the order written. */
  const told = () => json.flatMap((j) => (j.type === 'cycle' ? ['cycle'] : j.type === 'news' ? [String(j.news)] : []));
  const dump = () => `\n${stderr.join('\n')}`;
  return {
    cli,
    json,
    stderr,
    cycles,
    told,
    /** The news lines of `kind`. */
    news: (kind: string) => json.filter((j) => j.type === 'news' && j.news === kind).map((j) => String(j.line)),
    /** Waits until `n` cycles have ended, and returns them all. */
    async cyclesEnded(n: number): Promise<WatchCycle[]> {
      await waitFor(
        () => cycles().length >= n || cli.exitCode !== null,
        () => `${n} cycles${dump()}`,
      );
      if (cycles().length < n) throw new Error(`the watch ended after ${cycles().length} cycles${dump()}`);
      return cycles();
    },
    /** Waits until news of `kind` has come `n` times. */
    async newsCame(kind: string, n = 1): Promise<void> {
      await waitFor(
        () => told().filter((t) => t === kind).length >= n,
        () => `news ${kind} (${n})${dump()}`,
      );
    },
    async stop(): Promise<void> {
      cli.kill('SIGINT');
      await cli;
    },
  };
}
