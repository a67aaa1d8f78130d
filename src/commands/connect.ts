/**
 * Finding and opening the agent for a subcommand: discovery (`agent/discover.ts`), the TCP
 * connection and its CONNECTED line (`agent/connection.ts`), and every way that can fail, as a
 * refusal with the same words and exit status (69) as a build's refusal.
 */
import { AgentConnection, AgentConnectionError } from '../agent/connection.js';
import { discoverAgent, DiscoveryError, type AgentLocation } from '../agent/discover.js';
import type { AgentEvent, ConnectedEvent, DoctorObserved } from '../agent/protocol.js';
import { EXIT_REFUSED, type AgentInfo } from '../events.js';
import type { AgentEndpoint, CommandReason } from './types.js';

/** Where to look for the agent and how long to wait. */
export interface AgentTarget {
  /** Folder the search starts from (absolute). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  port?: number;
  portFile?: string;
  /** Bound for connecting and for each receipt, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Every event after CONNECTED, from the first one on. */
  onEvent?: (event: AgentEvent) => void;
}

/** A refusal: nothing was asked of the agent, or nothing could be. */
export interface Refusal<R extends CommandReason = CommandReason> {
  kind: 'refused';
  reason: R;
  exitCode: number;
  message: string;
  hint?: string;
  endpoint?: AgentEndpoint;
}

/** An open connection whose first line was a valid CONNECTED event. */
export interface OpenAgent {
  kind: 'open';
  connection: AgentConnection;
  connected: ConnectedEvent;
  location: AgentLocation;
  endpoint: AgentEndpoint;
}

/** Why connecting can fail: each is also a build's refusal reason. */
export type ConnectReason = Extract<
  CommandReason,
  'no-agent' | 'ambiguous-agent' | 'bad-port-file' | 'stale-port' | 'handshake' | 'interrupted'
>;

/** A refusal with exit status 69. */
export function refusal<R extends CommandReason>(reason: R, message: string, hint?: string, endpoint?: AgentEndpoint): Refusal<R> {
  return {
    kind: 'refused',
    reason,
    exitCode: EXIT_REFUSED,
    message,
    ...(hint === undefined ? {} : { hint }),
    ...(endpoint === undefined ? {} : { endpoint }),
  };
}

/** Exit status after an interrupt: 143 for SIGTERM, else 130 (SIGINT). */
export function interruptExit(signal: AbortSignal | undefined): number {
  return signal?.reason === 'SIGTERM' ? 143 : 130;
}

/** The result for an interrupt `when` something happened. */
export function interrupted(signal: AbortSignal | undefined, when: string, endpoint?: AgentEndpoint): Refusal<'interrupted'> {
  const name = signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
  return { ...refusal('interrupted', `interrupted (${name}) ${when}`, undefined, endpoint), exitCode: interruptExit(signal) };
}

/** True when the CONNECTED line names an agent recent enough for owned builds, DOCTOR, VERIFY and RELOAD. */
export function isCurrentAgent(connected: ConnectedEvent): boolean {
  return connected.agent !== undefined && connected.agent.trim() !== '' && connected.version >= 1;
}

/** Finds the agent, connects and reads CONNECTED; never throws for the agent's behaviour. */
export async function openAgent(target: AgentTarget): Promise<OpenAgent | Refusal<ConnectReason>> {
  let location: AgentLocation;
  try {
    location = discoverAgent({
      cwd: target.cwd,
      env: target.env,
      ...(target.port === undefined ? {} : { port: target.port }),
      ...(target.portFile === undefined ? {} : { portFile: target.portFile }),
    });
  } catch (error) {
    if (!(error instanceof DiscoveryError)) throw error;
    const reason: ConnectReason =
      error.kind === 'ambiguous' ? 'ambiguous-agent' : error.kind === 'not-found' ? 'no-agent' : 'bad-port-file';
    // The discovery message suggests --allow-no-agent, which only a build has.
    return refusal(reason, error.message.replace(/ \(or run the build without a hold: --allow-no-agent\)/, ''));
  }
  try {
    const { connection, connected } = await AgentConnection.open(location.port, {
      timeoutMs: target.timeoutMs,
      ...(target.signal === undefined ? {} : { signal: target.signal }),
      ...(target.onEvent === undefined ? {} : { onEvent: target.onEvent }),
    });
    const endpoint: AgentEndpoint = {
      port: location.port,
      source: location.source,
      portFile: location.portFile ?? null,
      agentVersion: connected.agent === undefined || connected.agent.trim() === '' ? null : connected.agent,
      protocolVersion: connected.version,
    };
    return { kind: 'open', connection, connected, location, endpoint };
  } catch (error) {
    if (target.signal?.aborted) return interrupted(target.signal, 'while connecting to the agent');
    if (!(error instanceof AgentConnectionError)) throw error;
    return connectRefusal(error, location);
  }
}

/** The refusal for a failed connect or handshake, naming the port, where it came from, and the fix. */
export function connectRefusal(error: AgentConnectionError, location: AgentLocation): Refusal<ConnectReason> {
  const where =
    location.portFile === undefined ? `port ${location.port} (${location.source})` : `port ${location.port} from ${location.portFile}`;
  switch (error.kind) {
    case 'refused':
      return refusal(
        'stale-port',
        `nothing is listening on ${where}: the agent is not running`,
        location.portFile === undefined
          ? 'check the port'
          : `the port file is stale (left by a killed app): start the app with the agent, or delete ${location.portFile}`,
      );
    case 'closed-before-connected':
      return refusal(
        'handshake',
        `the agent on ${where} closed the connection before CONNECTED`,
        'it already serves 5 clients (close an IDE window or an `events` follower) or this port is not the agent',
      );
    case 'handshake-timeout':
    case 'connect-timeout':
      return refusal(
        'handshake',
        `${error.message} (${where})`,
        'is the agent still starting, or is this port another program? try again, or raise --timeout',
      );
    default:
      return refusal('handshake', `${error.message} (${where})`, 'check that the port belongs to the reclazz agent');
  }
}

/** The agent as a build reports it (`agent` events and results), from its port and DOCTOR evidence. */
export function agentInfo(location: AgentLocation, connected: ConnectedEvent, doctor: DoctorObserved): AgentInfo {
  return {
    port: location.port,
    source: location.source,
    agentVersion: doctor.agentVersion || connected.agent || 'unknown',
    sessionId: doctor.sessionId,
    pid: doctor.pid,
    javaVersion: doctor.javaVersion,
    workingDirectory: doctor.workingDirectory,
    watchedDirectories: doctor.watchedDirectories,
    watchSampleTruncated: doctor.watchSampleTruncated,
    verifySupported: doctor.verifySupported,
  };
}
