/**
 * reclazz-build as a library: `runSafeBuild(options, hooks)` runs one build under the agent's
 * named hold and returns what is proven live. The CLI is a thin face over the same core.
 */
export { runSafeBuild, DEFAULTS, NESTED_ENV, type SafeBuildOptions, type SafeBuildHooks } from './run.js';
export type { RunEvent, RunResult, RunReason, AgentInfo, HoldLeft } from './events.js';
export { EXIT_REFUSED, EXIT_NOT_SAFE, EXIT_UNPROVEN, EXIT_USAGE, EXIT_COMMAND_NOT_FOUND } from './events.js';
export type { ClassVerdict, VerdictStatus, VerifyReport } from './verify/verify.js';
export type { ClassChange } from './classes/snapshot.js';
export type { BuildRun } from './build/run.js';
export { discoverAgent, DiscoveryError, type AgentLocation } from './agent/discover.js';
export { AgentConnection, AgentConnectionError } from './agent/connection.js';
export { resultToJson, type JsonResult } from './report/json.js';
