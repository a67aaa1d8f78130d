/**
 * What a build (and `verify`) reports while it runs, as facts: the events, and what a run warns
 * about and waits for (a kind and its fields). report/ makes their words; the core never does.
 */
import type { AgentInfo, AgentWait, AppStartUnknown, BuildGroup, JarRun, LeftProcess } from './facts.js';
import type { Outcome } from './outcome.js';

/** Why the agent this checkout last used is used (session/open.ts): its port file is gone, or names a test JVM's agent. */
export type RememberedWhy = { kind: 'missing' } | { kind: 'test-jvm'; pid: string };

/** A thrown error as a warning carries it: its name and message, and its stack when it has one. */
export interface ErrorFact {
  name: string;
  message: string;
  stack?: string;
}

/** `error` as an {@link ErrorFact} (a thrown value that is not an Error: its text as the message). */
export function errorFact(error: unknown): ErrorFact {
  if (!(error instanceof Error)) return { name: '', message: String(error) };
  return { name: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }) };
}

/** A warning: something the run goes on despite, which the user should know. Paths are local, times in ms. */
export type Warning =
  | { kind: 'lock-lost'; lockPath: string }
  | { kind: 'missing-classes-dir'; dir: string }
  /** `--classes-dir outer` holds the class output directory `inner`, used instead. */
  | { kind: 'given-around-found'; outer: string; inner: string }
  | { kind: 'nested'; inner: string; outer: string }
  | { kind: 'unreadable'; files: string[] }
  | { kind: 'linked-folder'; link: string }
  | { kind: 'unreadable-folders'; folders: string[] }
  | { kind: 'class-path-unknown' }
  | { kind: 'app-start-unknown'; why: AppStartUnknown }
  /** `watched`: the folders the agent watches, undefined when DOCTOR's list is only a sample. */
  | { kind: 'unwatched'; dir: string; watched?: string[] }
  | { kind: 'maybe-foreign'; workingDirectory: string }
  | { kind: 'no-class-dirs'; root: string }
  /** `boundMs`: how long BUILD ok waits for the watcher, set by `option`. */
  | { kind: 'watcher-starting'; boundMs: number; option: string }
  | { kind: 'watcher-stopped' }
  | { kind: 'paused'; pending: number }
  /** `--allow-no-agent`: the build runs without a hold, for the refusal `why`. */
  | { kind: 'no-agent'; why: Outcome }
  | { kind: 'remembered-agent'; why: RememberedWhy; portFile: string; port: number; pid: string }
  | { kind: 'state-moved'; from: string; to: string }
  /** state/'s own words about a state file it ignores (corrupt, unreadable). */
  | { kind: 'state-file'; problem: string }
  | { kind: 'hold-returned'; source: string }
  | { kind: 'hold-not-returned'; source: string; owner: string }
  | { kind: 'hold-kept'; source: string; owner: string }
  | { kind: 'stopped-leftovers'; stopped: LeftProcess[] }
  | { kind: 'group-not-recorded'; pgid: number }
  | { kind: 'same-binary-name'; className: string; paths: string[] }
  | { kind: 'batch-unverified'; count: number; cause: 'not-unique' | 'slow-client' }
  | { kind: 'not-saved'; problem: string }
  | { kind: 'missing-watch'; entry: string }
  /** `code`: the error's code (ENOSPC, EMFILE), when it has one. */
  | { kind: 'watch-failed'; problem: string; code?: string }
  | { kind: 'jar-run'; run: JarRun }
  /** The app's port file `file` is gone: `waiting` while the run asks port `port` directly, else after the app came back on it. */
  | { kind: 'port-file-lost'; file: string; port: number; waiting: boolean }
  | { kind: 'internal-error'; error: ErrorFact };

/** What a run waits for (`waiting` events): the agent, or one of the run's own waits. */
export type Waiting =
  | AgentWait
  /** Another run in this checkout holds the run lock. */
  | { kind: 'lock' }
  /** The build of an earlier run that is gone still runs. */
  | { kind: 'orphan'; group: BuildGroup }
  /** The build hold, held by another owner. */
  | { kind: 'hold' }
  /** The agent's capture of the previous build. */
  | { kind: 'capture' }
  /** The app to come back after a restart; `goneFile`: its port file, gone meanwhile; `oldPid`: the old JVM, still running; `earlierPid`: the restart command an earlier watch cycle started, still running (not started again). */
  | { kind: 'restart'; goneFile?: string; oldPid?: string; earlierPid?: number };

/**
 * Events in the order a run emits them. With several agents, an event of one agent's session
 * names it in `agentSource` (its `source`: the port file's path).
 */
export type RunEvent = RunEventBody & { agentSource?: string };

/** What each event says. */
type RunEventBody =
  | { type: 'agent'; agent: AgentInfo }
  | ({ type: 'warning' } & Warning)
  | ({ type: 'waiting'; elapsedMs: number } & Waiting)
  /** `recovers`: the agent still holds the build an earlier run with this owner token left held (a failed build): this one recovers it. */
  | { type: 'hold'; owner: string; ownerSource: 'option' | 'saved' | 'new'; recovers: boolean }
  /**
   * Class output directories taken from the agent's watched directories (translated by
   * --path-map) because discovery did not find them (`fromAgent`), those taken from the folders
   * of its JVM's class path in the project, watched or not (`fromClassPath`), and its watched
   * directories that do not exist here (`missing`). `--verbose` shows it.
   */
  | { type: 'agent-dirs'; fromAgent: string[]; fromClassPath: string[]; missing: string[] }
  /** `movedFrom`: the folder the run started in, when the build runs in `cwd` instead (`mvn` where the pom.xml is). */
  | { type: 'build-start'; command: string; wrapper: boolean; cwd: string; movedFrom?: string; classDirs: string[]; held: boolean }
  | { type: 'build-end'; exitCode: number; durationMs: number; signal?: string }
  | { type: 'finish'; state: 'ok' | 'failed'; acknowledged: boolean }
  /** `checks`: class files there before this build that no record shows live, asked once. */
  | { type: 'changes'; changed: number; checks: number; added: number; removed: number; notVerifiable: number; total: number }
  | { type: 'verify-progress'; final: number; applied: number; total: number }
  | { type: 'agent-event'; level: string; message: string }
  /**
   * A cycle ended with `classes` (binary names) needing an app restart: the run restarts the app
   * with `command`, its output into `log` (absolute), or (null) waits for the user to, for at most
   * `timeoutMs` (session/group.ts).
   */
  | { type: 'restart-needed'; classes: string[]; command: string | null; log: string | null; timeoutMs: number }
  /** What the restart command (and what it started) wrote to its log since the last such event, shown as it comes while the run waits. */
  | { type: 'restart-output'; text: string }
  /**
   * The restart command ended with `exitCode` (128+N for a signal) after `durationMs`; `appBack`:
   * the app had come back in a new agent session by then (its status then fails nothing).
   */
  | { type: 'restart'; command: string; exitCode: number; durationMs: number; appBack: boolean }
  /** The run is done with the restart while its command (process `pid`) still runs: it is left running (it may be the app), its output going on into `log`. */
  | { type: 'restart-running'; command: string; pid: number; log: string };
