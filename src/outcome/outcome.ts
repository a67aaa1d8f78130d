/**
 * Why a build, `verify` or a subcommand ended: one union of reasons, each with the facts that
 * explain it (wireit's `src/event.ts` is the model). The rooms return these; `exit.ts` gives
 * each its exit status, and report/ gives each its words and its `next:` hint.
 */
import type {
  AgentAfterLoss,
  AppStartUnknown,
  BuildGroup,
  HoldKeptCause,
  BuildRun,
  JarRun,
  LeftProcess,
  LockHolder,
  PortPlace,
  ReloadAction,
  ReloadState,
  StopSignal,
  ToolKind,
} from './facts.js';

/** What a usage error was about (exit 2, nothing was sent). */
export type UsageProblem =
  /** Commander, a class path, or the build tool's arguments: `text` names the input and the fix. */
  | { kind: 'input'; text: string; forBuild?: boolean }
  /** The config file (`reclazz.config.json`, package.json "reclazz", --config): `text` names the file, the key and the shape. */
  | { kind: 'config'; text: string }
  /** Gradle's continuous mode never finishes, so no BUILD ok could follow. */
  | { kind: 'never-ending'; argument: string }
  /** `verify` was given a path it cannot use (missing, not a `.class`, a class it cannot name): `text` says which. */
  | { kind: 'class-path'; text: string }
  /** `verify` found no class file in what it was given. */
  | { kind: 'no-class-files'; paths: string[] }
  /** The working directory was deleted (or moved away) before the command started: there is no project to look at. */
  | { kind: 'no-working-dir' }
  /** `watch` found no source folder in `projectDir` or its modules, and no `--watch` entry was given: no save could start a build. */
  | { kind: 'no-sources'; projectDir: string };

/** What was wrong with a port file or with `RECLAZZ_PORT` (protocol.md "Finding the agent"). */
export type PortFault =
  | { input: 'file'; file: string; problem: 'missing' | 'directory' | 'not-regular' }
  | { input: 'file'; file: string; problem: 'cannot-stat' | 'unreadable'; code: string }
  /** Holds more than `limit` bytes: only that much was read. */
  | { input: 'file'; file: string; problem: 'too-large'; limit: number }
  | { input: 'file'; file: string; problem: 'empty' | 'not-a-number' | 'out-of-range'; text: string }
  | { input: 'RECLAZZ_PORT'; problem: 'empty' | 'not-a-number' | 'out-of-range'; text: string };

/** Another app's agent on a port this project's port file names: what DOCTOR says of it (paths as seen here). */
interface ForeignAgent {
  pid: string;
  workingDirectory: string;
  /** Its watched directories (translated by --path-map). */
  watched: string[];
}

/** What a build or `verify` could prove, when it ended well. */
export type Proof =
  /**
   * Every class file is live by evidence; of those asked, `applied` are VERIFY applied and
   * `unchanged` were rewritten with the bytes the app has (asked once, the agent saw no change).
   * `skipped`: changed class files besides them whose names VERIFY does not accept, so they were not asked about.
   * `recorded` (`verify`): of the `unchanged`, those live by this agent session's record of evidence other than their age;
   * `newToJvm`: of the `unchanged`, those live as not loaded by the JVM yet (DIAGNOSE, asked now).
   */
  | { kind: 'proven'; applied: number; unchanged?: number; recorded?: number; newToJvm?: number; files?: boolean; skipped?: number }
  /**
   * Every class file is live by evidence already recorded, or new: nothing to ask; but for
   * `skipped` whose names VERIFY does not accept. `added`: new classes asked once that the JVM
   * has not loaded (DIAGNOSE), so they load on first use.
   */
  | { kind: 'nothing-to-prove'; skipped?: number; added?: number }
  /** `--no-verify`: `changed` classes were not asked about. */
  | { kind: 'not-verified'; changed: number }
  /** `verify`: none of the files has a name VERIFY accepts. */
  | { kind: 'none-verifiable'; files: number }
  /**
   * A change that needed a restart, proven after it: `classes` live in the new agent session
   * `sessionId` (seen `at`, ISO), `preStart` of them by bytes there before the new JVM started.
   */
  | { kind: 'restarted'; classes: number; preStart: number; sessionId: string; at: string };

/**
 * Why a restart did not prove a change that needed one (session/group.ts); `not-again` (watch
 * mode): an earlier restart could not prove these classes, so the app is not restarted again.
 */
export type RestartFailure =
  /** `lastLines`: the last lines of its output in `log`. */
  | { kind: 'command-failed'; command: string; exitCode: number; log: string; lastLines: string[] }
  /** The command could not be started at all (its log file could not be opened): `why`. */
  | { kind: 'not-started'; command: string; why: string }
  /**
   * `portFileGone`: the app's port file, deleted during the wait and not written again. `oldRunning`:
   * the JVM of the agent session before the restart (DOCTOR's `pid`) still ran or answered on its port
   * at the end: whatever answered in a new agent session meanwhile was never taken for the app restarted;
   * `stopping`: its agent no longer answered there but its process still ran (the old app was ending);
   * `newBeside`: a JVM of the app answered in a new agent session while the old one still ran.
   */
  | {
      kind: 'not-back';
      waitedMs: number;
      command?: string;
      portFileGone?: string;
      oldRunning?: { pid: string; sessionId: string; stopping?: true; newBeside?: true };
    }
  | { kind: 'not-provable'; sessionId: string; why: AppStartUnknown }
  /** `jarRun`: the new JVM loads one of them from a jar, not from the class output directory the build wrote. */
  | { kind: 'not-proven'; sessionId: string; classes: number; jarRun?: JarRun }
  | { kind: 'not-again'; classes: number };

/** What a subcommand that ended well found. */
export type Done =
  /**
   * `foreign`: the agent's working directory, when by its evidence it is another app's (coverage.ts
   * isForeignAgent). `paused`: its reloads are paused (RELOAD status), with that many class files pending.
   */
  /**
   * `hold`: the agent holds a build: this checkout's by its owner.json (`ours`: a build here running,
   * or one that failed or stopped before BUILD ok; files stay held until a build here succeeds), one
   * it does not record as its own (`not-ours`: the IDE's, another checkout's, or a killed run's whose
   * token is lost), or a legacy (unowned) one. `watcher`: the agent's watcher state when it is not `watching`.
   */
  | {
      kind: 'doctor';
      dirs: number;
      watched: number;
      unwatched: number;
      unknown: number;
      foreign?: string;
      paused?: number;
      hold?: 'ours' | 'not-ours' | 'legacy';
      watcher?: string;
      /** The app's JVM loads a class of a class output directory here from a jar instead. */
      jarRun?: JarRun;
    }
  | { kind: 'reload'; action: ReloadAction; state: ReloadState }
  | { kind: 'scan'; delivered: boolean; hold: string };

export type { HoldKeptCause };

/** Why not every changed class is proven live. */
export type Shortfall =
  | { kind: 'restarted' }
  | { kind: 'connection-lost'; found: AgentAfterLoss }
  | { kind: 'capacity'; capacity: number }
  /**
   * Some classes ended without proof; `timedOut` when any was still unanswered at the deadline;
   * `writtenAfterStart` of them were written after the app started with no run recording the bytes before.
   */
  | { kind: 'not-proven'; timedOut: boolean; writtenAfterStart?: number }
  /**
   * `classes` changed classes never reload: they lie in `dirs`, class output directories the
   * agent does not watch, or their file names match its `excludePatterns` globs `excludedBy`, or
   * they lie in `unseen`, where the agent attempted nothing once its capture of this build was
   * over. `watchDirs`: the value of the agent's `watchDirs=` option that adds `dirs` (the class
   * output directories it watches and these, in its paths, `;`-separated), only when all it
   * watches is known.
   */
  | { kind: 'not-watched'; classes: number; dirs: string[]; watchDirs?: string; excludedBy?: string[]; unseen?: string[] }
  /**
   * The agent's capture of this build failed (`cause`), so it reloaded nothing and still holds the
   * build for `owner`, although `ok` was acknowledged.
   */
  | { kind: 'hold-kept'; cause: HoldKeptCause; owner: string }
  /**
   * The agent compiles the sources itself (`autoCompile=true`), outside the hold, and loads its
   * own bytes, not the build's: known `from` its options on its JVM's command line, or from
   * `receipts`, every one of which names other bytes than the build's.
   */
  | { kind: 'auto-compile'; from: 'options' | 'receipts' }
  /** Automatic reload is paused (by `reclazz-build pause`, the IDE, anyone): `classes` classes wait as pending until resume. */
  | { kind: 'paused'; classes: number }
  /**
   * The agent's file watcher had not started `waitedMs` after the build (the bound: `option`), so BUILD
   * ok was not sent: nothing of the build reloaded, and the agent still holds it for `owner`.
   */
  | { kind: 'watcher-starting'; owner: string; waitedMs: number; option: '--wait-for-agent' | '--verify-timeout' }
  /** `classes` classes need an app restart: the agent lists a change it cannot apply (a hierarchy change). */
  | { kind: 'restart-required'; classes: number }
  /**
   * `classes` classes needed an app restart, and the restart did not prove them live (`failure`);
   * `appBack` (watch mode): they changed while the app's agent was gone, and the app came back.
   */
  | { kind: 'restart'; classes: number; failure: RestartFailure; appBack?: true }
  /**
   * Watch mode: the agent of the app of `source` (its port file `portFile`) went away `since` (ISO)
   * and is not back, so `classes` changed classes that app runs are not proven in its JVM.
   */
  | { kind: 'app-gone'; classes: number; source: string; since: string; portFile?: string }
  /** Every class asked about is live, but `unreadable` class files and `folders` folders could not be read. */
  | { kind: 'unreadable'; unreadable: number; folders: number }
  /**
   * Every class asked about is live, but `classes` changed class files have names VERIFY does
   * not accept (a control character, `META-INF/versions/...`) and may still be loaded: unproven.
   */
  | { kind: 'not-verifiable'; classes: number }
  /** No class output directory was found, so nothing was checked. */
  | { kind: 'no-class-dirs'; searchRoot: string }
  /** The class output directories hold no class file, so nothing was checked. */
  | { kind: 'no-class-files'; dirs: number }
  /** Processes the build started still ran after it, outside its session: they may write class files after the check (tool/build-group.ts). */
  | { kind: 'detached'; processes: LeftProcess[] };

/** Where a run or subcommand was when SIGINT or SIGTERM came. */
export type InterruptPoint =
  | 'waiting-for-lock'
  | 'connecting'
  | 'doctor'
  | 'waiting-for-hold'
  | 'started-receipt'
  | 'before-build'
  | 'build'
  /** After the build ended ok, waiting for the agent's file watcher to start before BUILD ok. */
  | 'watcher'
  | 'ok-receipt'
  | 'failed-receipt'
  | 'verify'
  | 'reload-receipt'
  | 'after-scan'
  | 'following'
  /** Watch mode, between cycles. */
  | 'watching'
  /** Running the restart command, or waiting for the app to come back after it. */
  | 'restart';

/** What the agent must support for what was asked. */
export type Need = 'owned builds' | 'DOCTOR' | 'RELOAD' | 'VERIFY';

/** One reason and its facts. */
export type Outcome =
  | { reason: 'ok'; proof: Proof }
  | { reason: 'ok'; done: Done }
  /** `doctor` found what will keep a build's classes from being proven (see {@link doctorBlocks}). */
  | { reason: 'doctor-findings'; done: Extract<Done, { kind: 'doctor' }> }
  | { reason: 'no-agent-build' }
  /** `owner`: the hold stays with that owner; `released`: the build wrote nothing, so BUILD ok released the hold (it captures nothing). */
  | { reason: 'build-failed'; status: number; owner?: string; released?: boolean }
  | { reason: 'usage'; problem: UsageProblem }
  | { reason: 'nested'; variable: string }
  | { reason: 'command-not-found'; file: string; tool: ToolKind }
  | { reason: 'command-not-executable'; path: string }
  /** `waitedMs`: how long `--wait-for-agent` waited for a port file (there, and on the next reasons). */
  | { reason: 'no-agent'; cwd: string; depth: number; offerNoAgent: boolean; waitedMs?: number }
  /**
   * `named`: the port files were given (--port-file more than once to a command that talks to one
   * agent). `otherCheckouts`: `cwd` is in no checkout, and these port files found below it are in
   * other checkouts (folders with their own `.git`), whose agents a run from here does not take.
   */
  | { reason: 'ambiguous-agent'; cwd: string; portFiles: string[]; named?: boolean; otherCheckouts?: true }
  | { reason: 'bad-port-file'; fault: PortFault; waitedMs?: number }
  /** `orphan`: the lock's run is gone, but the build it started still runs; `holder`: the run that holds it, as its holder file says. */
  | { reason: 'lock-busy'; lockPath: string; waitedMs: number; orphan?: BuildGroup; holder?: LockHolder }
  /**
   * The port file names no agent of this project: nothing listens on the port (`waitedMs`: how
   * long `--wait-for-agent` waited for it to answer), or (`foreign`) the agent there is, by its
   * own DOCTOR evidence, another app's. `portFiles`: every other port file found around the
   * working directory, for the advice.
   */
  /** `testJvm`: the agent answering there runs in a test JVM (`runner`, in words), never held or asked. */
  | {
      reason: 'stale-port';
      place: PortPlace;
      waitedMs?: number;
      foreign?: ForeignAgent;
      testJvm?: { pid: string; runner: string };
      portFiles?: string[];
    }
  | {
      reason: 'handshake';
      place: PortPlace;
      failure: 'closed-before-connected' | 'timeout' | 'bad-handshake' | 'closed';
      /** The connection's own account of it (what came, or what did not within how long). */
      detail: string;
      /** How long a closed-before-connected was tried again (`--wait`: a lingering slot). */
      waitedMs?: number;
    }
  | { reason: 'old-agent'; port: number; need: Need; evidence: 'connected' | 'unowned-receipt' }
  | {
      reason: 'agent-not-ready';
      port: number;
      why:
        | {
            kind: 'doctor-timeout';
            agent: string;
            timeoutMs: number;
            /**
             * The agent answered DOCTOR before on this connection (a watch's later cycle): it is
             * not starting, its JVM (DOCTOR's `pid`) is stopped or hung; `stopped` when the
             * process state says stopped, `false` when it says otherwise or cannot tell.
             */
            answered?: { pid: string; stopped: boolean };
          }
        | { kind: 'doctor-unavailable'; detail: string }
        | { kind: 'no-session' }
        /** DOCTOR's starting shape: `sessionId` "", `watcherState` "unavailable", every `*Supported` false. */
        | { kind: 'starting' }
        /** VERIFY wired, the owned BUILD listener not yet: a session, `buildOwnershipSupported` false, hold and watcher "unavailable". */
        | { kind: 'wiring' };
      /** How long it was asked again (`--wait`). */
      waitedMs?: number;
    }
  | {
      reason: 'unsupported';
      agentVersion: string;
      flag: 'buildOwnershipSupported' | 'verifySupported' | 'scanSupported';
      offerNoVerify?: boolean;
    }
  /**
   * Another client holds the build. `legacy`: an unowned hold (buildHold "legacy": a client that
   * names no owner took it), which an unowned `BUILD ok` releases (protocol.md "Legacy holds");
   * `port` is the agent's.
   */
  | { reason: 'hold-busy'; waitedMs: number; legacy?: { port: number } }
  /** An awaited receipt did not come in time: the outcome of what it answers is uncertain. */
  | {
      reason: 'no-receipt';
      awaited:
        | { kind: 'build-started'; owner: string; detail: string }
        | { kind: 'reload'; action: ReloadAction; timeoutMs: number }
        | { kind: 'doctor-after-scan'; why: string };
    }
  /** The agent closed the connection while an answer was awaited. */
  | {
      reason: 'agent-disconnected';
      port: number;
      during:
        | { kind: 'doctor' }
        | { kind: 'build-started'; owner: string; detail: string }
        | { kind: 'reload'; action: ReloadAction }
        /** Watch mode with `--exit-on-agent-loss`, between cycles. */
        | { kind: 'watch' };
    }
  | { reason: 'unexpected-receipt'; action: ReloadAction; paused: boolean }
  | {
      reason: 'not-safe';
      owner: string;
      what:
        | { kind: 'lost-during-build'; found: AgentAfterLoss }
        | { kind: 'finish'; succeeded: boolean; receipt: 'rejected' | 'lost'; found?: AgentAfterLoss };
    }
  /**
   * Not every class file is proven live. `applied` (VERIFY applied) and `unchanged` (identical
   * bytes) of the `total` asked are; `checked` of those asked were there before this build.
   */
  | {
      reason: 'verify-incomplete';
      applied: number;
      total: number;
      shortfall: Shortfall;
      files?: boolean;
      noneChanged?: boolean;
      unchanged?: number;
      checked?: number;
    }
  /** `holdKept`: BUILD failed was acknowledged, so the agent keeps the hold for `holdOwner` (else it may be left). */
  | {
      reason: 'interrupted';
      signal: StopSignal;
      at: InterruptPoint;
      holdOwner?: string;
      holdKept?: true;
      events?: number;
      action?: ReloadAction;
    }
  | { reason: 'state-error'; problem: string; dir: string; file: string; holdOwner?: string }
  | { reason: 'internal-error'; problem: string; holdOwner?: string }
  /** `events`: the agent ended the stream (the app stopped or restarted). */
  | { reason: 'stream-ended'; port: number; events: number };

/** Every reason. */
export type Reason = Outcome['reason'];

/** The outcome of one reason. */
export type OutcomeOf<R extends Reason> = Extract<Outcome, { reason: R }>;

/**
 * Whether what `doctor` found keeps a build's classes from being proven: a class output
 * directory here NOT watched, reloads paused, a hold that is not this checkout's, or the
 * agent's watcher not running. This checkout's own hold is told, but the next run here recovers it.
 */
export function doctorBlocks(done: Extract<Done, { kind: 'doctor' }>): boolean {
  return (
    done.unwatched > 0 ||
    done.paused !== undefined ||
    (done.hold !== undefined && done.hold !== 'ours') ||
    done.watcher !== undefined ||
    done.jarRun !== undefined
  );
}

/**
 * `outcome`, or, when it proves classes live while processes `build` started still run outside its
 * session, that proof as a shortfall: what they write after the check was never checked.
 * `--no-verify` proves nothing and says so, so it stays.
 */
export function unprovenWhileDetached(outcome: Outcome, build: BuildRun | undefined): Outcome {
  const processes = build?.detached;
  if (processes === undefined || processes.length === 0 || outcome.reason !== 'ok' || !('proof' in outcome)) return outcome;
  const shortfall = { kind: 'detached' as const, processes };
  const proof = outcome.proof;
  switch (proof.kind) {
    case 'proven': {
      const unchanged = proof.unchanged ?? 0;
      const kept = { ...(unchanged > 0 ? { unchanged } : {}), ...(proof.files === true ? { files: true } : {}) };
      return { reason: 'verify-incomplete', applied: proof.applied, total: proof.applied + unchanged, shortfall, ...kept };
    }
    case 'nothing-to-prove':
      return { reason: 'verify-incomplete', applied: 0, total: 0, shortfall, noneChanged: true };
    case 'restarted':
      return { reason: 'verify-incomplete', applied: proof.classes, total: proof.classes, shortfall };
    default:
      return outcome;
  }
}
