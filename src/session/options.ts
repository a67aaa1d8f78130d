/**
 * What a session and its cycles are given: where to find the agent and how long to wait
 * (session), what to build and check (cycle), and the host they run on (env, cwd, platform,
 * clock, terminal, signals), which cli/ fills from the real process. Times in ms.
 */
import type { PathMapEntry } from '../agent/path-map.js';
import type { AgentEndpoint, AgentInfo, BuildGroup, DoctorObserved } from '../outcome/facts.js';
import { errorFact, type RunEvent } from '../outcome/events.js';
import type { LockProcess } from '../state/lock.js';
import type { BuildHost, BuildOptions } from '../tool/build.js';
import type { AgentConnection } from '../agent/connection.js';
import type { AgentView } from '../classes/coverage.js';
import type { AgentLocation } from '../agent/discover.js';
import type { OpenAgent } from '../agent/handshake.js';
import { type BuildHold, holdLeft, mayBeOurs } from '../hold/hold.js';
import type { OwnerChoice, OwnerRecord } from '../hold/owner.js';
import type { StatePlace } from '../state/folder.js';
import path from 'node:path';
import { type HoldKeptCause, type InterruptPoint, type Outcome, unprovenWhileDetached } from '../outcome/outcome.js';
import { StateError } from '../state/store.js';
import { type BuildCommand, describeCommand } from '../tool/resolve.js';
import { type AgentRunResult, buildRunResult, decidingAgent, type RunFacts, type RunResult } from '../outcome/result.js';
import { signalOf } from '../outcome/exit.js';
import { findAppStart } from '../tool/proc.js';

/** Default bounds of a build and the subcommands, in ms: the command line's, the config's and the library's. */
export const DEFAULTS = { timeoutMs: 5000, verifyTimeoutMs: 30000, waitMs: 30000, restartTimeoutMs: 120_000 } as const;

/** A clock: `now` for durations (monotonic, ms), `date` for timestamps saved in state files. */
export interface Clock {
  now(): number;
  date(): Date;
}

/**
 * The process a session runs in: what its build needs (`cwd`, where the search for the agent starts
 * too; `env`, which discovery reads for RECLAZZ_PORT*; `proc`, where the app's JVM is read too), its
 * clock, and what the run lock needs.
 */
export interface Host extends BuildHost, LockProcess {
  clock: Clock;
}

/** Where the agent is and how long to wait for it. */
export interface SessionOptions {
  port?: number;
  portFile?: string;
  /** Several port files (`--port-file` repeated): a build holds each agent; `portFile` joins them. */
  portFiles?: string[];
  /** Owner token; default: the one saved for this agent session, else a fresh one. */
  owner?: string;
  /** Bound per receipt and for the connection (default 5000). */
  timeoutMs?: number;
  /** How long to wait for a run lock, another owner's hold, a client slot, the agent's start (default 30000 when building, else 0). */
  waitMs?: number;
  /** How long to wait for a port file to appear and its port to answer (default 0: refused at once). */
  waitForAgentMs?: number;
  /** False: the agent need not support VERIFY (default true). */
  verify?: boolean;
  /** `--path-map`: how the agent's paths (an app in a container) read here. */
  pathMap?: PathMapEntry[];
}

/** {@link SessionOptions} with their bounds resolved, once, where a session opens ({@link settle}). */
export type SessionSettings = SessionOptions & Required<Pick<SessionOptions, 'timeoutMs' | 'waitMs' | 'waitForAgentMs' | 'pathMap'>>;

/** `options` with each bound it leaves unset at its default ({@link DEFAULTS}; `waitMs` 0 for a session that does not build). */
export function settle(options: SessionOptions, builds: boolean): SessionSettings {
  return {
    ...options,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    waitMs: options.waitMs ?? (builds ? DEFAULTS.waitMs : 0),
    waitForAgentMs: options.waitForAgentMs ?? 0,
    pathMap: options.pathMap ?? [],
  };
}

/** What one cycle builds and checks. */
export interface CycleOptions extends BuildOptions {
  /** One deadline for all VERIFY polling (default 30000). */
  verifyTimeoutMs?: number;
  /** False skips VERIFY (default true). */
  verify?: boolean;
  /** Extra class output directories, added to the discovered ones. */
  classDirs?: string[];
  /**
   * Watch mode, once per cycle after the build: the folders (absolute) of the class output directories
   * that may have changed since the last call, or undefined for a full pass (the default). `full`: the cycle scans every file anyway.
   */
  changedFolders?: (dirs: readonly string[], full: boolean) => Promise<ReadonlySet<string> | undefined>;
}

/** What a session tells and who may stop it. */
export interface SessionHooks {
  onEvent?: (event: RunEvent) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop cleanly (exit 130/143). */
  signal?: AbortSignal;
}

/** What a run may set of its host; unset fields are the host's. */
export interface HostOverrides {
  /** Folder the build runs in and the search starts from (absolute). Default: the host's. */
  cwd?: string;
  /** Environment: discovery reads it, the build gets it and finds its tool on its PATH. Default: the host's. */
  env?: NodeJS.ProcessEnv;
  /** Default: the host's. */
  platform?: NodeJS.Platform;
  /** True when the user's terminal delivers Ctrl-C to the build itself. Default: the host's (stdin is a TTY). */
  sharesTerminal?: boolean;
}

/** `base` with what `overrides` sets of it. */
export function hostWith(base: Host, overrides: HostOverrides): Host {
  return {
    ...base,
    ...(overrides.cwd === undefined ? {} : { cwd: overrides.cwd }),
    ...(overrides.env === undefined ? {} : { env: overrides.env }),
    ...(overrides.platform === undefined ? {} : { platform: overrides.platform }),
    ...(overrides.sharesTerminal === undefined ? {} : { sharesTerminal: overrides.sharesTerminal }),
  };
}

/** What every session needs of its host: where to search from and the environment discovery reads. */
export type SessionHost = Pick<Host, 'cwd' | 'env'> & Partial<Pick<Host, 'proc'>>;

/**
 * An open session with one agent; `H` is its host (a session that builds needs the whole {@link Host}).
 * Cycles (cycle.ts) read and advance it; {@link closeSession} ends it.
 */
export interface Session<H extends SessionHost = Host> {
  host: H;
  options: SessionSettings;
  /** Bound per receipt, in ms. */
  timeoutMs: number;
  emit: (event: RunEvent) => void;
  signal: AbortSignal | undefined;
  location: AgentLocation;
  /** The checkout root: its `.reclazz/` holds the run lock (state/folder.ts). */
  checkout: string;
  /** Where this agent's owner token and class index live (state/folder.ts). */
  state: StatePlace;
  connection: AgentConnection;
  open: OpenAgent;
  endpoint: AgentEndpoint;
  /** DOCTOR's evidence and the agent as results report it, when the session asked DOCTOR. */
  doctor?: DoctorObserved;
  agent?: AgentInfo;
  /** What the agent watches and where it runs, seen from here (--path-map applied), when the session asked DOCTOR. */
  view?: AgentView;
  /** The owner token and the hold, for a session that builds. */
  owner?: OwnerChoice;
  hold?: BuildHold;
  /** Releases the run lock of the checkout, for a session that builds. */
  releaseLock?: (() => Promise<void>) | undefined;
  /** The `agent-dirs` event was emitted (once per session). */
  agentDirsTold?: boolean;
  /** Among several apps: its JVM's class path is not known here, and that was said (once per session). */
  classPathTold?: boolean;
  /** Records a build's process group with the run lock (false: not written), for a session that builds. */
  recordBuild?: (group: BuildGroup) => boolean;
  /** Nested class output directories already warned about (each once per session). */
  nestedWarned: Set<string>;
}

/** Closes the connection and releases the run lock. Safe to call twice. */
export async function closeSession(session: Pick<Session, 'connection' | 'releaseLock'>): Promise<void> {
  session.connection.close();
  const release = session.releaseLock;
  session.releaseLock = undefined;
  await release?.();
}

/**
 * The outcome of a thrown `error`: a state file (69), or a bug (70), whose stack goes out as a warning first.
 * @param holdOwner the owner of a hold that may be left, to name it.
 */
export function failureOutcome(error: unknown, emit: (event: RunEvent) => void, holdOwner?: string): Outcome {
  const owner = holdOwner === undefined ? {} : { holdOwner };
  if (error instanceof StateError) {
    return { reason: 'state-error', problem: error.message, dir: path.dirname(error.path), file: path.basename(error.path), ...owner };
  }
  emit({ type: 'warning', kind: 'internal-error', error: errorFact(error) });
  return { reason: 'internal-error', problem: (error as Error).message ?? String(error), ...owner };
}

export type { BuildCommand };
/** The app's start, for the subcommands that sit on the session API (tool/proc.ts). */
export { findAppStart };
/** The build command's checks, for the build flow and the watch, which sit on the session API (tool/build.ts). */
export { NESTED_ENV, prepareBuild } from '../tool/build.js';

/** What a result knows of the session and the command, besides its own facts. */
export interface ResultContext {
  session?: Pick<Session, 'agent' | 'owner' | 'hold'>;
  command?: BuildCommand;
  /** `clock.now()` when the run or cycle started. */
  startedMs: number;
  now: () => number;
}

/** The result of `outcome` in `context`. */
export function runResult(context: ResultContext, outcome: Outcome, facts: RunFacts = {}): RunResult {
  const { session, command } = context;
  return buildRunResult(
    outcome,
    {
      hold: session?.hold === undefined ? 'none' : holdLeft(session.hold.state),
      ...(session?.agent === undefined ? {} : { agent: session.agent }),
      ...(session?.owner === undefined ? {} : { owner: session.owner.owner }),
      ...(command === undefined ? {} : { command: describeCommand(command) }),
      ...facts,
    },
    context.now() - context.startedMs,
  );
}

/**
 * The result of a cycle over several agents (see `RunResult.agents`): the deciding agent's
 * outcome and exit status, every agent's part, and every agent's verdicts.
 * @param durationMs how long the run took, in ms.
 */
export function combineResults(agents: AgentRunResult[], durationMs: number): RunResult {
  const { agentSource: _source, changes: _changes, among: _among, ofAgent: _of, ...rest } = decidingAgent(agents);
  return {
    ...rest,
    verdicts: agents.flatMap((a) => a.verdicts),
    provenLive: agents.every((a) => a.provenLive),
    agents,
    durationMs: Math.max(0, Math.round(durationMs)),
  };
}

/** A session that builds: opened with `builds` (owner and hold chosen, DOCTOR asked). */
export type BuildSession = Session & Required<Pick<Session, 'owner' | 'hold' | 'agent' | 'doctor' | 'view'>>;

/** What the steps of one cycle share (cycle.ts, detect.ts, check.ts). */
export interface Cycle {
  session: BuildSession;
  command: BuildCommand;
  /** Its options, `verifyTimeoutMs` resolved when the cycle was made (cycle.ts `cycleOf`). */
  options: CycleOptions & { verifyTimeoutMs: number };
  /** `clock.now()` when the cycle (or the run it belongs to) started. */
  startedMs: number;
  record: OwnerRecord;
  /** With several agents: of the class output directories found, those this agent checks. */
  dirsFor?: (dirs: string[]) => string[];
  /** A hold existed before this cycle took it (ours from a failed build, or named when the session opened): its output is held too. */
  holdBefore?: boolean;
  /** Why the agent's capture of this build failed, if it said so from before `ok` on (check.ts). */
  readFailure?: () => HoldKeptCause | undefined;
}

/** The result of `outcome` at the end of this cycle; no proof while processes of its build may still write (`unprovenWhileDetached`). */
export function end(cycle: Cycle, outcome: Outcome, facts: RunFacts = {}): RunResult {
  return runResult(
    { session: cycle.session, command: cycle.command, startedMs: cycle.startedMs, now: () => cycle.session.host.clock.now() },
    unprovenWhileDetached(outcome, facts.build),
    facts,
  );
}

/** The interrupt outcome at `at`, naming the owner while the hold may be ours. */
export function interrupted(cycle: Cycle, at: InterruptPoint, facts: RunFacts = {}): RunResult {
  const hold = cycle.session.hold;
  const holdOwner = mayBeOurs(hold.state) ? { holdOwner: hold.owner, ...(hold.state === 'left' ? { holdKept: true as const } : {}) } : {};
  return end(cycle, { reason: 'interrupted', signal: signalOf(cycle.session.signal), at, ...holdOwner }, facts);
}

/** Writes state after `BUILD ok` was acknowledged: a failure there only means the next run checks more, so it is a warning. */
export function saveAfterOk(session: Session, write: () => void): void {
  try {
    write();
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    session.emit({ type: 'warning', kind: 'not-saved', problem: error.message });
  }
}
