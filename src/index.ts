/**
 * reclazz-build as a library: `runSafeBuild(options, hooks)` runs one build under the agent's
 * named hold and returns what is proven live; `runDoctor`, `runReload`, `runScan`,
 * `verifyClassFiles` and `followEvents` are the subcommands' cores. None of them prints or
 * exits: results are data. The CLI is a thin face over the same core.
 */
export { runSafeBuild, DEFAULTS, NESTED_ENV, type SafeBuildOptions, type SafeBuildHooks } from './run.js';
export type { RunEvent, RunResult, RunReason, AgentInfo, HoldLeft } from './events.js';
export { EXIT_REFUSED, EXIT_NOT_SAFE, EXIT_UNPROVEN, EXIT_USAGE, EXIT_COMMAND_NOT_FOUND } from './events.js';
export type { ClassVerdict, VerdictStatus, VerifyReport } from './verify/verify.js';
export type { ClassChange } from './classes/snapshot.js';
export type { BuildRun } from './build/run.js';
export { discoverAgent, DiscoveryError, type AgentLocation } from './agent/discover.js';
export { AgentConnection, AgentConnectionError } from './agent/connection.js';
export {
  resultToJson,
  resultClasses,
  finalLines,
  commandResultToJson,
  type JsonResult,
  type JsonClass,
  type JsonAction,
} from './report/json.js';
export { jsonLineSchema, agentLineSchema, resultLineSchema, classLineSchema, type JsonLine } from './report/schema.js';
export { loadConfig, ConfigError, CONFIG_FILE, PACKAGE_KEY, type ReclazzConfig, type LoadedConfig } from './config.js';
export { runDoctor, watchCoverage, type DoctorOptions } from './commands/doctor.js';
export { runReload } from './commands/reload.js';
export { runScan } from './commands/scan.js';
export { followEvents, type FollowOptions } from './commands/events.js';
export { verifyClassFiles, collectClassFiles, ClassPathError, type VerifyFilesOptions } from './commands/verify.js';
export type { AgentTarget } from './commands/connect.js';
export type {
  AgentAction,
  AgentEndpoint,
  CommandReason,
  CommandResult,
  DirCoverage,
  DoctorResult,
  EventsResult,
  ReloadResult,
  ScanResult,
} from './commands/types.js';
export type { ReloadState, ReloadAction, DoctorObserved, AgentEvent } from './agent/protocol.js';
