/**
 * Results: an outcome with its exit status and the facts of the command that ended with it, no
 * words (report/words.ts `describeResult` makes them). {@link buildResult} is the one place
 * a result is made.
 */
import type {
  AgentEndpoint,
  AgentInfo,
  BuildRun,
  ChangeSummary,
  ClassVerdict,
  DirCoverage,
  DoctorObserved,
  HoldLeft,
  ReloadAction,
  ReloadState,
  VerifyReport,
} from './facts.js';
import { exitStatus, provesLive } from './exit.js';
import type { Outcome, Reason } from './outcome.js';

/** What a user reads about an outcome: one plain sentence, and what to do next when there is something to do. */
export interface Words {
  message: string;
  hint?: string;
}

/** What every result has. */
export interface ResultBase {
  outcome: Outcome;
  reason: Reason;
  /** What the CLI exits with (see outcome/exit.ts). */
  exitCode: number;
  durationMs: number;
}

/** How a build (or `verify`) ended. */
export interface RunResult extends ResultBase {
  agent?: AgentInfo;
  owner?: string;
  command?: string;
  build?: BuildRun;
  changes?: ChangeSummary;
  verify?: Omit<VerifyReport, 'verdicts'>;
  verdicts: ClassVerdict[];
  hold: HoldLeft;
  /** True when every changed class that existed before is proven applied (or there was nothing to prove). */
  provenLive: boolean;
  /** The app was restarted (or restarted by the user) for a change that needed it, and came back in agent session `sessionId`. */
  restart?: { sessionId: string };
  /**
   * With several agents: each agent's result, in hold order. The result is then the deciding one's
   * ({@link decidingAgent}), with `verdicts` for all, no `changes`, and `provenLive` only when
   * every agent proved its classes.
   */
  agents?: AgentRunResult[];
  /** One of several agents refused the run before anything was held: `source` is its port file, `sources` every agent found. */
  among?: { source: string; sources: readonly string[] };
  /** A watch with several apps: this result is the own one of the agent of `ofAgent` (its port file), ended before its build. */
  ofAgent?: string;
}

/** Of several agents' results, the one that decides the run: the first not exiting 0, else the first not proven live, else the first. */
export function decidingAgent<R extends Pick<RunResult, 'exitCode' | 'provenLive'>>(agents: readonly R[]): R {
  return agents.find((a) => a.exitCode !== 0) ?? agents.find((a) => !a.provenLive) ?? agents[0]!;
}

/** One agent's result in a run with several: `agentSource` names the agent (its `source`, the port file's path). */
export type AgentRunResult = Omit<RunResult, 'agents'> & { agentSource: string };

/** The subcommands that talk to the agent without building. */
export type AgentAction = 'doctor' | ReloadAction | 'scan' | 'events';

interface CommandBase extends ResultBase {
  endpoint?: AgentEndpoint;
}

/** `reclazz-build doctor`. */
export interface DoctorResult extends CommandBase {
  action: 'doctor';
  /** The agent's DOCTOR evidence (status observed). */
  doctor?: DoctorObserved;
  /** The class output directories of the project here and whether the agent watches them. */
  classDirs: DirCoverage[];
  /**
   * What the agent watches, as seen here: its class output directories when they are known (read
   * from its JVM's options, or DOCTOR's whole list), else the folders DOCTOR lists (a sample).
   */
  watched: WatchedDirFact[];
  /** Where `watched` comes from (see coverage.ts `AgentView`); `none` while the watcher starts. */
  watchedFrom: 'options' | 'doctor' | 'sample' | 'none';
  /** RELOAD status: whether reloads are paused and what waits (null when not asked or no receipt came). */
  reload: ReloadState | null;
}

/** One of the agent's watched directories, as seen here. */
export interface WatchedDirFact {
  /** As DOCTOR reported it. */
  dir: string;
  /** Translated by --path-map. */
  local: string;
  /** Not here, here without class files, or holding class files. */
  here: 'missing' | 'empty' | 'classes';
  /** In this project (its folders or one of its class output directories). */
  ours: boolean;
}

/** `reclazz-build status|pause|resume`. */
export interface ReloadResult extends CommandBase {
  action: ReloadAction;
  /** The exact RELOAD_STATE receipt; absent when none came (outcome uncertain). */
  state?: ReloadState;
}

/** `reclazz-build scan`. */
export interface ScanResult extends CommandBase {
  action: 'scan';
  /** True once the SCAN line was written to the socket. */
  sent: boolean;
  /** True when the agent answered a DOCTOR sent after SCAN on the same connection: it has read the SCAN line. */
  delivered: boolean;
}

/** `reclazz-build events`. */
export interface EventsResult extends CommandBase {
  action: 'events';
  /** Events received after CONNECTED. */
  events: number;
}

/** A subcommand's result. */
export type CommandResult = DoctorResult | ReloadResult | ScanResult | EventsResult;

/** Which command a `result` line ends. */
export type JsonAction = 'build' | 'verify' | AgentAction;

/** The facts of a run result, before it ends (`provenLive` follows from the outcome). */
export type RunFacts = Omit<RunResult, keyof ResultBase | 'provenLive' | 'verdicts' | 'hold' | 'agents' | 'among' | 'ofAgent'> & {
  verdicts?: ClassVerdict[];
  hold?: HoldLeft;
};

/**
 * Makes the result of `outcome`: its reason and exit status and `facts`; for a build or `verify`
 * also whether it is proven live.
 * @param durationMs how long the command took, in ms.
 */
export function buildResult<F extends object>(outcome: Outcome, facts: F, durationMs: number): F & ResultBase {
  return {
    ...facts,
    outcome,
    reason: outcome.reason,
    exitCode: exitStatus(outcome),
    durationMs: Math.max(0, Math.round(durationMs)),
  };
}

/** {@link buildResult} for a build or `verify`. */
export function buildRunResult(outcome: Outcome, facts: RunFacts, durationMs: number): RunResult {
  return buildResult(outcome, { verdicts: [], hold: 'none' as HoldLeft, ...facts, provenLive: provesLive(outcome) }, durationMs);
}
