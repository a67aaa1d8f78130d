/**
 * A fake of the reclazz agent's status socket, as the running agent implements it, for tests, the
 * demo and integration work (docs/fake-agent.md). It imports nothing from the client, on purpose.
 * @example
 * ```ts
 * import { startFakeAgent } from 'reclazz-build/fake-agent';
 * const agent = await startFakeAgent({ portFile: '.reclazz/agent.port', watchDirs: ['target/classes'] });
 * // ... run `reclazz-build` against it, then inspect agent.received / agent.holdLog / agent.captures
 * await agent.stop();
 * ```
 */
export { startFakeAgent } from './server.js';
export { HOSTILE_PAYLOAD } from './hostile.js';
export { STAND_IN_MARKER } from './jvm.js';
export type {
  ClientInfo,
  DoctorStringField,
  FakeAgent,
  FakeAgentOptions,
  FinalStatus,
  HoldEvent,
  HoldKind,
  HoldLogEntry,
  HoldSnapshot,
  HostileOptions,
  InterceptAction,
  InterceptCommand,
  JavaFacts,
  ReceivedLine,
  SuperclassChange,
  VerifyStatus,
} from './types.js';
export type { VerifyResult } from './ledger.js';
export { parseCommand, parseBuild, type ParsedCommand, type BuildState, type ReloadAction } from './wire.js';
export { binaryName, sha256Hex } from './capture.js';
export { writePortFile } from './paths.js';
export {
  formatEvent,
  isBinaryClassName,
  isSha256,
  isToken,
  MAX_COMMAND_CHARS,
  MAX_MESSAGE_CHARS,
  TRUNCATION_SUFFIX,
} from './wire.js';
