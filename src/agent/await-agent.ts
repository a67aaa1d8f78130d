/**
 * Waiting for an agent that is not there or not ready yet, around the one handshake (handshake.ts);
 * each wait is bounded and reported through `onWait`, and at the end the last refusal stands with
 * how long was waited. `--wait-for-agent` (default 0) is for CI, where the app may still be starting:
 * no port file yet, or a port nothing answers on. Within `--wait`: a closed client's slot can stay
 * taken for about two heartbeats (protocol.md "Slots linger"), and early in start-up the agent
 * answers before its handlers are wired (protocol.md "Commands").
 */
import { signalOf } from '../outcome/exit.js';
import type { AgentInfo, AgentWait, DoctorObserved } from '../outcome/facts.js';
import type { InterruptPoint, Outcome } from '../outcome/outcome.js';
import type { AgentLocation } from './discover.js';
import { askDoctor } from './requests.js';
import { pause } from '../util/wait.js';
import {
  type AgentTarget,
  checkAgent,
  type CheckedAgent,
  connectAgent,
  type OpenAgent,
  type Requirements,
  type Step,
} from './handshake.js';

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
