/**
 * reclazz-build as a library: `runSafeBuild` runs one build under the agent's named hold; the
 * others are the subcommands' cores. None prints or exits: results are data (outcome, exit status, facts);
 * `describeResult` gives their words.
 */
import { processHost } from './cli/host.js';
import { runSafeBuild as runOn, type SafeBuildHooks, type SafeBuildOptions } from './run.js';
import type { RunResult } from './outcome/result.js';

export { NESTED_ENV, DEFAULTS, type SafeBuildOptions, type SafeBuildHooks, type Host, type Clock } from './run.js';
export { openSession, openSessions, type OpenPlan, type Opening, type Openings } from './session/open.js';
export { closeSessions, runCycle, runCycles, type SessionGroup } from './session/group.js';
export type { BuildSession } from './session/options.js';
export { prepareBuild } from './session/options.js';
export { closeSession, type Session } from './session/options.js';
export type { CycleOptions, SessionOptions, SessionHooks } from './session/options.js';
export { processHost };

/**
 * Runs one safe build in this process (see `src/run.ts`): open a session, one cycle, close.
 * @param host the process it runs in (default: this one; `options` may override cwd, env, platform, terminal).
 */
export function runSafeBuild(options: SafeBuildOptions, hooks: SafeBuildHooks = {}, host = processHost()): Promise<RunResult> {
  return runOn(options, hooks, host);
}
export type { RunEvent, Warning, Waiting } from './outcome/events.js';
export type { Outcome, Reason, Proof, Done, Shortfall, UsageProblem, PortFault, InterruptPoint, Need } from './outcome/outcome.js';
export {
  EXIT_REFUSED,
  EXIT_NOT_SAFE,
  EXIT_UNPROVEN,
  EXIT_USAGE,
  EXIT_COMMAND_NOT_FOUND,
  EXIT_NOT_EXECUTABLE,
  EXIT_SIGNALLED,
  REASON_EXIT,
  exitStatus,
} from './outcome/exit.js';
export type {
  AgentInfo,
  AgentEndpoint,
  AgentAfterLoss,
  BuildRun,
  ClassChange,
  ClassVerdict,
  VerdictWhy,
  DirCoverage,
  HoldLeft,
  ReloadAction,
  ReloadState,
  VerdictStatus,
  VerifyReport,
  ToolKind,
} from './outcome/facts.js';
export type { DoctorObserved } from './outcome/facts.js';
export type {
  RunResult,
  AgentRunResult,
  AgentAction,
  CommandResult,
  DoctorResult,
  EventsResult,
  ReloadResult,
  ScanResult,
  Words,
  JsonAction,
} from './outcome/result.js';
export { describeOutcome } from './report/words.js';
export { describeResult } from './report/words.js';
export { verdictWords } from './report/verdict-words.js';
export { warningWords, waitingWords } from './report/step-words.js';
export { discoverAgent, discoverAgents, type AgentLocation, type Discovery, type Discoveries } from './agent/discover.js';
export { AgentConnection, AgentConnectionError } from './agent/connection.js';
export { agentView, watchCoverage, type AgentView, type WatchedHere } from './classes/coverage.js';
export { parsePathMap, type PathMapEntry } from './agent/path-map.js';
export type { AgentTarget } from './agent/handshake.js';
export {
  resultToJson,
  resultClasses,
  finalLines,
  commandResultToJson,
  type JsonResult,
  type JsonAgentResult,
  type JsonClass,
} from './report/json.js';
export { jsonLineSchema, agentLineSchema, resultLineSchema, classLineSchema, type JsonLine } from './report/schema.js';
export { loadConfig, ConfigError, CONFIG_FILE, PACKAGE_KEY, type LoadedConfig } from './cli/config.js';
export type { ReclazzConfig } from './cli/options.js';
export { runDoctor, type DoctorOptions } from './commands/doctor.js';
export { runReload } from './commands/reload.js';
export { runScan } from './commands/scan.js';
export { followEvents, type FollowOptions } from './commands/events.js';
export { verifyClassFiles, collectClassFiles, ClassPathError, type VerifyFilesOptions } from './commands/verify.js';
export type { AgentEvent } from './agent/protocol.js';
