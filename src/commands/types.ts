/**
 * Results of the agent subcommands (doctor, status, pause, resume, scan, events). Like a
 * build's {@link RunResult}, they are data: renderers turn them into text or JSON, and the CLI
 * exits with `exitCode`. The `verify` subcommand returns a {@link RunResult}, as a build does.
 */
import type { DoctorObserved, ReloadAction, ReloadState } from '../agent/protocol.js';
import type { RunReason } from '../events.js';

/** The subcommands that talk to the agent without building. */
export type AgentAction = 'doctor' | ReloadAction | 'scan' | 'events';

/**
 * Why a subcommand ended. The build's refusal reasons keep their meaning; in addition:
 * `no-receipt` (the awaited receipt did not come: the outcome is uncertain),
 * `unexpected-receipt` (the receipt contradicts the command), `agent-closed` (`events`: the
 * agent ended the stream).
 */
export type CommandReason =
  | Extract<
      RunReason,
      | 'ok'
      | 'usage'
      | 'no-agent'
      | 'bad-port-file'
      | 'ambiguous-agent'
      | 'stale-port'
      | 'handshake'
      | 'old-agent'
      | 'agent-not-ready'
      | 'unsupported'
      | 'agent-disconnected'
      | 'interrupted'
    >
  | 'no-receipt'
  | 'unexpected-receipt'
  | 'agent-closed';

/** The agent as seen on connect (CONNECTED), before or without DOCTOR. */
export interface AgentEndpoint {
  port: number;
  /** Where the port came from: `--port`, `RECLAZZ_PORT`, or the port file path. */
  source: string;
  /** The port file read, when one was. */
  portFile: string | null;
  /** CONNECTED's `agent` field; null for an agent from before build ownership. */
  agentVersion: string | null;
  /** CONNECTED's `version` field. */
  protocolVersion: number;
}

/** What every subcommand result has. */
export interface CommandResultBase {
  action: AgentAction;
  reason: CommandReason;
  exitCode: number;
  /** One plain sentence: what happened. */
  message: string;
  /** What to do next, when there is something to do. */
  hint?: string;
  endpoint?: AgentEndpoint;
  durationMs: number;
}

/** Whether the agent watches one class output directory of the project here. */
export interface DirCoverage {
  dir: string;
  /** true: a watched directory is it, contains it or lies inside it; false: not watched; null: unknown (the agent's sample is truncated or empty). */
  watched: boolean | null;
}

/** `reclazz-build doctor`. */
export interface DoctorResult extends CommandResultBase {
  action: 'doctor';
  /** The agent's DOCTOR evidence (status observed). */
  doctor?: DoctorObserved;
  /** The class output directories of the project here and whether the agent watches them. */
  classDirs: DirCoverage[];
}

/** `reclazz-build status|pause|resume`. */
export interface ReloadResult extends CommandResultBase {
  action: ReloadAction;
  /** The exact RELOAD_STATE receipt; absent when none came (outcome uncertain). */
  state?: ReloadState;
}

/** `reclazz-build scan`. */
export interface ScanResult extends CommandResultBase {
  action: 'scan';
  /** True once the SCAN line was written to the socket. */
  sent: boolean;
  /** True when the agent answered a DOCTOR sent after SCAN on the same connection: it has read the SCAN line. */
  delivered: boolean;
}

/** `reclazz-build events`. */
export interface EventsResult extends CommandResultBase {
  action: 'events';
  /** Events received after CONNECTED. */
  events: number;
}

export type CommandResult = DoctorResult | ReloadResult | ScanResult | EventsResult;
