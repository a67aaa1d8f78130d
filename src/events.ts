/**
 * What a safe build reports while it runs (events) and how it ends (a result with a reason
 * and an exit status). The core never prints: renderers in `report/` turn these into text or
 * JSON lines.
 */
import type { BuildRun } from './build/run.js';
import type { ClassChange } from './classes/snapshot.js';
import type { ClassVerdict, VerifyReport } from './verify/verify.js';

/** The agent as seen at connect time (CONNECTED and DOCTOR). */
export interface AgentInfo {
  port: number;
  /** Where the port came from: `--port`, `RECLAZZ_PORT`, or a port file path. */
  source: string;
  agentVersion: string;
  sessionId: string;
  pid: string;
  javaVersion: string;
  workingDirectory: string;
  watchedDirectories: string[];
  watchSampleTruncated: boolean;
  verifySupported: boolean;
}

/** The agent's own event levels a run shows while it waits (marked as the agent's; `--quiet` hides them). */
export const SHOWN_AGENT_LEVELS: ReadonlySet<string> = new Set(['RELOAD', 'STRUCTURAL_RELOAD', 'COMPILE', 'WARN', 'ERROR']);

/** Events in the order a run emits them. Times in ms. */
export type RunEvent =
  | { type: 'agent'; agent: AgentInfo }
  | { type: 'warning'; message: string }
  | { type: 'waiting'; what: string; elapsedMs: number }
  | { type: 'hold'; owner: string; ownerSource: 'option' | 'saved' | 'new' }
  | { type: 'build-start'; command: string; wrapper: boolean; cwd: string; classDirs: string[]; held: boolean }
  | { type: 'build-end'; exitCode: number; durationMs: number; signal?: string }
  | { type: 'finish'; state: 'ok' | 'failed'; acknowledged: boolean }
  | { type: 'changes'; changed: number; added: number; removed: number; notVerifiable: number; total: number }
  | { type: 'verify-progress'; final: number; applied: number; total: number }
  | { type: 'agent-event'; level: string; message: string };

/**
 * Why a run ended. Exit statuses (README "Exit status"):
 * ok 0; build-failed the build tool's own; usage 2; refused reasons 69; not-safe 70;
 * verify-incomplete 75; interrupted 130/143; command-not-found 127.
 */
export type RunReason =
  | 'ok'
  | 'no-agent-build'
  | 'build-failed'
  | 'usage'
  | 'nested'
  | 'command-not-found'
  | 'command-not-executable'
  | 'no-agent'
  | 'bad-port-file'
  | 'ambiguous-agent'
  | 'lock-busy'
  | 'stale-port'
  | 'handshake'
  | 'old-agent'
  | 'agent-not-ready'
  | 'unsupported'
  | 'hold-busy'
  | 'receipt-timeout'
  | 'agent-disconnected'
  | 'not-safe'
  | 'verify-incomplete'
  | 'interrupted'
  | 'state-error'
  | 'internal-error';

/** Exit status for refusals: the build never ran (EX_UNAVAILABLE). */
export const EXIT_REFUSED = 69;
/** Exit status when the build ran but the hold was not completed safely (EX_SOFTWARE). */
export const EXIT_NOT_SAFE = 70;
/** Exit status when the build is ok but not every changed class was proven applied (EX_TEMPFAIL). */
export const EXIT_UNPROVEN = 75;
/** Exit status for a usage error; nothing was sent. */
export const EXIT_USAGE = 2;
/** Exit status when the build command does not exist (the shell's convention). */
export const EXIT_COMMAND_NOT_FOUND = 127;
/** Exit status when the build command exists but may not be executed (the shell's convention). */
export const EXIT_NOT_EXECUTABLE = 126;

/** What the hold was left as: released (or never taken), held by our owner token, or unknown. */
export type HoldLeft = 'none' | 'held' | 'unknown';

/** How a run ended; `exitCode` is what the CLI exits with. */
export interface RunResult {
  reason: RunReason;
  exitCode: number;
  /** One plain sentence: what happened. */
  message: string;
  /** What to do next, when there is something to do. */
  hint?: string;
  agent?: AgentInfo;
  owner?: string;
  command?: string;
  build?: BuildRun;
  changes?: { changed: ClassChange[]; added: ClassChange[]; removed: ClassChange[]; notVerifiable: ClassChange[]; total: number };
  verify?: Omit<VerifyReport, 'verdicts'>;
  verdicts: ClassVerdict[];
  hold: HoldLeft;
  /** True when every changed class that existed before is proven applied (or there was nothing to prove). */
  provenLive: boolean;
  durationMs: number;
}
