/**
 * The one handshake every command uses: find the agent (discover.ts), connect and read
 * CONNECTED (connection.ts), then, for the commands that need it, DOCTOR and its checks
 * (protocol.md "Finding the agent", "The stream", "DOCTOR"). Every way this can fail comes back
 * as the outcome that explains it; nothing here throws for the agent's behaviour.
 *
 * And waiting, around it, for an agent that is not there or not ready yet ({@link findWaiting},
 * {@link connectWaiting}, {@link checkAgentWaiting}, {@link awaitWatcher}): each wait is bounded and
 * reported through `onWait`, and at the end the last refusal stands with how long was waited.
 * `--wait-for-agent` (default 0) is for CI, where the app may still be starting: no port file
 * yet, or a port nothing answers on. Within `--wait`: a closed client's slot can stay taken for
 * about two heartbeats (protocol.md "Slots linger"), and early in start-up the agent answers
 * before its handlers are wired (protocol.md "Commands").
 */
import type { AgentEndpoint, AgentInfo, AgentWait, DoctorObserved } from '../outcome/facts.js';
import { signalOf } from '../outcome/exit.js';
import type { InterruptPoint, Need, Outcome } from '../outcome/outcome.js';
import { AgentConnection, AgentConnectionError, requestFailure } from './connection.js';
import { type AgentLocation, discoverAgent, discoverAgents } from './discover.js';
import type { AgentEvent, ConnectedEvent } from './protocol.js';
import { askDoctor, type DoctorAnswer } from './requests.js';
import { pause } from '../util/wait.js';

/** Where to look for the agent and how long to wait. */
export interface AgentTarget {
  /** Folder the search starts from (absolute). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  port?: number;
  portFile?: string;
  /** More than one `--port-file` (a build holds each). */
  portFiles?: string[];
  /** Bound for connecting and for each receipt, in ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Every event after CONNECTED, from the first one on. */
  onEvent?: (event: AgentEvent) => void;
}

/** An open connection whose first line was a valid CONNECTED event. */
export interface OpenAgent {
  connection: AgentConnection;
  connected: ConnectedEvent;
  location: AgentLocation;
  endpoint: AgentEndpoint;
}

/** A handshake step's result: what it found, or the outcome that ends the command. */
export type Step<T> = ({ kind: 'ok' } & T) | { kind: 'refused'; outcome: Outcome };

/** Discovery (discover.ts) with the advice a build or a subcommand gives when no agent is found. */
export function findAgent(
  target: Pick<AgentTarget, 'cwd' | 'env' | 'port' | 'portFile'>,
  offerNoAgent: boolean,
): Step<{ location: AgentLocation }> {
  const found = discoverAgent(target);
  if (found.kind === 'found') return { kind: 'ok', location: found.location };
  return { kind: 'refused', outcome: found.outcome.reason === 'no-agent' ? { ...found.outcome, offerNoAgent } : found.outcome };
}

/** {@link findAgent} for a build that holds every agent found (discover.ts `discoverAgents`). */
export function findAgents(
  target: Pick<AgentTarget, 'cwd' | 'env' | 'port' | 'portFile' | 'portFiles'>,
  offerNoAgent: boolean,
): Step<{ locations: AgentLocation[] }> {
  const found = discoverAgents(target);
  if (found.kind === 'found') return { kind: 'ok', locations: found.locations };
  return { kind: 'refused', outcome: found.outcome.reason === 'no-agent' ? { ...found.outcome, offerNoAgent } : found.outcome };
}

/** Connects to the agent at `location` and reads CONNECTED. */
async function connectAgent(location: AgentLocation, target: AgentTarget): Promise<Step<OpenAgent>> {
  try {
    const { connection, connected } = await AgentConnection.open(location.port, {
      timeoutMs: target.timeoutMs,
      ...(target.signal === undefined ? {} : { signal: target.signal }),
      ...(target.onEvent === undefined ? {} : { onEvent: target.onEvent }),
    });
    return { kind: 'ok', connection, connected, location, endpoint: endpointOf(location, connected) };
  } catch (error) {
    if (!(error instanceof AgentConnectionError) && target.signal?.aborted !== true) throw error;
    return { kind: 'refused', outcome: connectOutcome(error, location, target.signal) };
  }
}

function endpointOf(location: AgentLocation, connected: ConnectedEvent): AgentEndpoint {
  return {
    port: location.port,
    source: location.source,
    portFile: location.portFile ?? null,
    agentVersion: connected.agent === undefined || connected.agent.trim() === '' ? null : connected.agent,
    protocolVersion: connected.version,
  };
}

/** The outcome of a failed connect or handshake: interrupted, nothing listening, or not the agent's CONNECTED. */
function connectOutcome(error: unknown, location: AgentLocation, signal: AbortSignal | undefined): Outcome {
  const place = {
    port: location.port,
    source: location.source,
    ...(location.portFile === undefined ? {} : { portFile: location.portFile }),
  };
  const kind = error instanceof AgentConnectionError ? error.kind : 'aborted';
  if (kind === 'aborted' || signal?.aborted) return { reason: 'interrupted', signal: signalOf(signal), at: 'connecting' };
  if (kind === 'refused') return { reason: 'stale-port', place };
  const detail = (error as Error).message;
  if (kind === 'closed-before-connected') return { reason: 'handshake', place, failure: 'closed-before-connected', detail };
  if (kind === 'handshake-timeout' || kind === 'connect-timeout') return { reason: 'handshake', place, failure: 'timeout', detail };
  return { reason: 'handshake', place, failure: kind === 'bad-handshake' ? 'bad-handshake' : 'closed', detail };
}

/** True when the CONNECTED line names an agent recent enough for owned builds, DOCTOR, VERIFY and RELOAD. */
export function isCurrentAgent(connected: ConnectedEvent): boolean {
  return connected.agent !== undefined && connected.agent.trim() !== '' && connected.version >= 1;
}

/** The old-agent refusal for `need`, when CONNECTED shows an agent from before build ownership. */
export function requireCurrentAgent(open: OpenAgent, need: Need): Outcome | undefined {
  return isCurrentAgent(open.connected) ? undefined : { reason: 'old-agent', port: open.location.port, need, evidence: 'connected' };
}

/** What a command needs DOCTOR to show before it goes on. */
export interface Requirements {
  need: Need;
  /** `buildOwnershipSupported` (a build). */
  ownedBuilds?: boolean;
  /** `verifySupported` (a build that verifies, or `verify`); `offerNoVerify` names --no-verify in the advice. */
  verify?: boolean;
  offerNoVerify?: boolean;
  /** A non-empty `sessionId` (VERIFY receipts are matched to it). */
  session?: boolean;
}

/** The agent as DOCTOR described it. */
export interface CheckedAgent {
  doctor: DoctorObserved;
  agent: AgentInfo;
}

/**
 * Asks DOCTOR and checks what `requires` asks for. A DOCTOR that does not answer in time, or
 * answers "unavailable", means "not ready" (protocol.md "Commands": the socket may answer
 * before its handlers are wired).
 * @param onAgent called with the agent's description once DOCTOR answered, before the checks.
 */
async function checkAgent(
  open: OpenAgent,
  requires: Requirements,
  timeoutMs: number,
  signal?: AbortSignal,
  onAgent: (agent: AgentInfo) => void = () => undefined,
): Promise<Step<CheckedAgent> & { agent?: AgentInfo }> {
  const old = requireCurrentAgent(open, requires.need);
  if (old !== undefined) return { kind: 'refused', outcome: old };
  const port = open.location.port;
  let answer: DoctorAnswer;
  try {
    answer = await askDoctor(open.connection, timeoutMs, signal);
  } catch (error) {
    const failure = requestFailure(error, signal);
    if (failure === 'aborted') return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(signal), at: 'doctor' } };
    if (failure === 'timeout') {
      return {
        kind: 'refused',
        outcome: { reason: 'agent-not-ready', port, why: { kind: 'doctor-timeout', agent: open.connected.agent!, timeoutMs } },
      };
    }
    return { kind: 'refused', outcome: { reason: 'agent-disconnected', port, during: { kind: 'doctor' } } };
  }
  if (answer.kind === 'unavailable') {
    return { kind: 'refused', outcome: { reason: 'agent-not-ready', port, why: { kind: 'doctor-unavailable', detail: answer.detail } } };
  }
  const doctor = answer.doctor;
  if (isStarting(doctor)) return { kind: 'refused', outcome: { reason: 'agent-not-ready', port, why: { kind: 'starting' } } };
  if (requires.ownedBuilds === true && isWiringOwnership(doctor))
    return { kind: 'refused', outcome: { reason: 'agent-not-ready', port, why: { kind: 'wiring' } } };
  const agent = agentInfo(open, doctor);
  onAgent(agent);
  const refused = (outcome: Outcome) => ({ kind: 'refused' as const, outcome, agent });
  if (requires.ownedBuilds && !doctor.buildOwnershipSupported) {
    return refused({ reason: 'unsupported', agentVersion: agent.agentVersion, flag: 'buildOwnershipSupported' });
  }
  if (requires.verify && !doctor.verifySupported) {
    return refused({
      reason: 'unsupported',
      agentVersion: agent.agentVersion,
      flag: 'verifySupported',
      offerNoVerify: requires.offerNoVerify === true,
    });
  }
  if (requires.session && doctor.sessionId === '') return refused({ reason: 'agent-not-ready', port, why: { kind: 'no-session' } });
  return { kind: 'ok', doctor, agent };
}

/**
 * DOCTOR's answer before the handlers are wired (protocol.md "Commands"): no session, watcher
 * unavailable, nothing supported. Only the legacy build listener wired (ownership alone false)
 * is a real agent, not this.
 */
function isStarting(doctor: DoctorObserved): boolean {
  return (
    doctor.sessionId === '' &&
    doctor.watcherState === 'unavailable' &&
    !doctor.buildOwnershipSupported &&
    !doctor.verifySupported &&
    !doctor.scanSupported
  );
}

/**
 * DOCTOR between the agent's wiring of VERIFY and of the owned BUILD listener (protocol.md
 * "Commands"; agent ReclazzAgent.initialize wires them in that order, DoctorReport shows the
 * hold and the watcher "unavailable" until the second): a session and VERIFY, no ownership yet.
 * An agent that lacks ownership for good reports a hold kind, not "unavailable".
 */
function isWiringOwnership(doctor: DoctorObserved): boolean {
  return (
    doctor.sessionId !== '' &&
    doctor.verifySupported &&
    !doctor.buildOwnershipSupported &&
    doctor.buildHold === 'unavailable' &&
    doctor.watcherState === 'unavailable'
  );
}

/** The agent as a build reports it (`agent` events and results), from its port and DOCTOR evidence. */
function agentInfo(open: OpenAgent, doctor: DoctorObserved): AgentInfo {
  return {
    port: open.location.port,
    source: open.location.source,
    agentVersion: doctor.agentVersion || open.connected.agent || 'unknown',
    sessionId: doctor.sessionId,
    pid: doctor.pid,
    javaVersion: doctor.javaVersion,
    workingDirectory: doctor.workingDirectory,
    watchedDirectories: doctor.watchedDirectories,
    watchSampleTruncated: doctor.watchSampleTruncated,
    verifySupported: doctor.verifySupported,
  };
}

/** Called while waiting, with what is awaited and the ms waited so far. */
export type OnAgentWait = (wait: AgentWait, elapsedMs: number) => void;

/** How often a missing port file or a silent port is tried again, in ms. */
const RETRY_MS = 200;
/** Backoff of a connection closed before CONNECTED: first and longest pause, in ms. */
const SLOT_FIRST_MS = 100;
const SLOT_MAX_MS = 2000;

/** Discovery (`find`), tried again every {@link RETRY_MS} ms for up to `waitForAgentMs` ms while no port file exists. */
export async function findWaiting<T>(
  find: () => Step<T>,
  waitForAgentMs: number,
  { signal }: { signal?: AbortSignal | undefined },
  onWait: OnAgentWait,
): Promise<Step<T>> {
  const start = performance.now();
  for (;;) {
    const found = find();
    if (found.kind === 'ok' || !noPortFileYet(found.outcome)) return found;
    const elapsed = Math.round(performance.now() - start);
    if (elapsed >= waitForAgentMs)
      return waitForAgentMs > 0 ? { kind: 'refused', outcome: { ...found.outcome, waitedMs: elapsed } } : found;
    if (!(await pause(RETRY_MS, signal))) return interrupted(signal, 'connecting');
    onWait({ kind: 'port-file' }, elapsed);
  }
}

/** True for a refusal that only says the port file is not there (yet). */
function noPortFileYet(outcome: Outcome): outcome is Extract<Outcome, { reason: 'no-agent' | 'bad-port-file' }> {
  return (
    outcome.reason === 'no-agent' ||
    (outcome.reason === 'bad-port-file' && outcome.fault.input === 'file' && outcome.fault.problem === 'missing')
  );
}

/**
 * Connects (handshake.ts `connectAgent`). A port nothing answers on is tried again for up to
 * `waitForAgentMs` ms; a connection closed before CONNECTED (a lingering slot), with backoff
 * for up to `waitMs` ms. Both counted from the call.
 */
export async function connectWaiting(
  location: AgentLocation,
  target: AgentTarget,
  bounds: { waitForAgentMs: number; waitMs: number },
  onWait: OnAgentWait,
): Promise<Step<OpenAgent>> {
  const start = performance.now();
  let backoff = SLOT_FIRST_MS;
  for (;;) {
    const opened = await connectAgent(location, target);
    if (opened.kind === 'ok') return opened;
    const outcome = opened.outcome;
    const elapsed = Math.round(performance.now() - start);
    const silent = outcome.reason === 'stale-port';
    const slot = outcome.reason === 'handshake' && outcome.failure === 'closed-before-connected';
    if (!silent && !slot) return opened;
    const bound = silent ? bounds.waitForAgentMs : bounds.waitMs;
    const delay = silent ? RETRY_MS : backoff;
    if (elapsed >= bound) return bound > 0 ? { kind: 'refused', outcome: { ...outcome, waitedMs: elapsed } } : opened;
    if (!(await pause(Math.min(delay, bound - elapsed), target.signal))) return interrupted(target.signal, 'connecting');
    if (slot) backoff = Math.min(backoff * 2, SLOT_MAX_MS);
    onWait(silent ? { kind: 'port', port: location.port } : { kind: 'slot', port: location.port }, elapsed);
  }
}

/**
 * DOCTOR and its checks (handshake.ts `checkAgent`), asked again every {@link RETRY_MS} ms for up to
 * `waitMs` ms while the agent is not ready; each DOCTOR waits at most `timeoutMs` ms, and no longer than the time left.
 */
export async function checkAgentWaiting(
  open: OpenAgent,
  requires: Requirements,
  bounds: { timeoutMs: number; waitMs: number },
  signal: AbortSignal | undefined,
  onAgent: (agent: AgentInfo) => void,
  onWait: OnAgentWait,
): Promise<Step<CheckedAgent> & { agent?: AgentInfo }> {
  const start = performance.now();
  for (;;) {
    const left = Math.max(bounds.waitMs - (performance.now() - start), 0);
    const timeoutMs = left > 0 ? Math.max(Math.min(bounds.timeoutMs, Math.round(left)), RETRY_MS) : bounds.timeoutMs;
    const checked = await checkAgent(open, requires, timeoutMs, signal, onAgent);
    if (checked.kind === 'ok' || checked.outcome.reason !== 'agent-not-ready') return checked;
    const elapsed = Math.round(performance.now() - start);
    if (elapsed >= bounds.waitMs || open.connection.closed)
      return bounds.waitMs > 0 ? { ...checked, outcome: { ...checked.outcome, waitedMs: elapsed } } : checked;
    if (!(await pause(RETRY_MS, signal))) return interrupted(signal, 'doctor');
    onWait({ kind: 'starting', port: open.location.port }, elapsed);
  }
}

/**
 * Asks DOCTOR every {@link RETRY_MS} ms for up to `waitMs` ms while the agent's file watcher is
 * `starting` (its `startupDelaySec`). Resolves with the last DOCTOR observed, or undefined when
 * DOCTOR did not answer or the wait was interrupted.
 */
export async function awaitWatcher(
  open: OpenAgent,
  bounds: { timeoutMs: number; waitMs: number },
  signal: AbortSignal | undefined,
  onWait: OnAgentWait,
): Promise<DoctorObserved | undefined> {
  const start = performance.now();
  for (;;) {
    let answer;
    try {
      answer = await askDoctor(open.connection, bounds.timeoutMs, signal);
    } catch {
      return undefined;
    }
    if (answer.kind !== 'observed') return undefined;
    const elapsed = Math.round(performance.now() - start);
    if (answer.doctor.watcherState !== 'starting' || elapsed >= bounds.waitMs) return answer.doctor;
    if (!(await pause(Math.min(RETRY_MS, bounds.waitMs - elapsed), signal))) return undefined;
    onWait({ kind: 'watcher', port: open.location.port }, elapsed);
  }
}

function interrupted(signal: AbortSignal | undefined, at: InterruptPoint): { kind: 'refused'; outcome: Outcome } {
  return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(signal), at } };
}
