/**
 * reclazz-build as a library: `runSafeBuild(options, hooks)` runs one build under the agent's
 * named hold and returns what is proven live; `runDoctor`, `runReload`, `runScan`,
 * `verifyClassFiles` and `followEvents` are the subcommands' cores. None of them prints or
 * exits: results are data, each with its `outcome` (a reason and the facts behind it), exit
 * status and words. The CLI is a thin face over the same core.
 */
export { runSafeBuild, NESTED_ENV, type SafeBuildOptions, type SafeBuildHooks } from './run.js';
export { DEFAULTS } from './defaults.js';
export type { RunEvent } from './outcome/events.js';
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
  DirCoverage,
  HoldLeft,
  ReloadAction,
  ReloadState,
  VerdictStatus,
  VerifyReport,
  ToolKind,
} from './outcome/facts.js';
export type { DoctorObserved } from './outcome/doctor.js';
export type {
  RunResult,
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
export { discoverAgent, type AgentLocation, type Discovery } from './agent/discover.js';
export { AgentConnection, AgentConnectionError } from './agent/connection.js';
export { watchCoverage } from './agent/coverage.js';
export type { AgentTarget } from './agent/handshake.js';
export { resultToJson, resultClasses, finalLines, commandResultToJson, type JsonResult, type JsonClass } from './report/json.js';
export { jsonLineSchema, agentLineSchema, resultLineSchema, classLineSchema, type JsonLine } from './report/schema.js';
export { loadConfig, ConfigError, CONFIG_FILE, PACKAGE_KEY, type ReclazzConfig, type LoadedConfig } from './config.js';
export { runDoctor, type DoctorOptions } from './commands/doctor.js';
export { runReload } from './commands/reload.js';
export { runScan } from './commands/scan.js';
export { followEvents, type FollowOptions } from './commands/events.js';
export { verifyClassFiles, collectClassFiles, ClassPathError, type VerifyFilesOptions } from './commands/verify.js';
export type { AgentEvent } from './agent/protocol.js';
