/**
 * Opening a session: discover the agent, take the checkout's run lock (a session that builds),
 * connect and read CONNECTED, ask DOCTOR and check what the session needs, and choose the owner
 * token (a session that builds). Each step returns data; the first refusal ends the opening
 * with its outcome. A port file not there yet, a port not answering yet (`waitForAgentMs`), a
 * lingering client slot and an agent still starting (`waitMs`) are waited out first
 * (agent/await-agent.ts).
 */
import { checkAgentWaiting, connectWaiting, findAgentWaiting } from '../agent/await-agent.js';
import type { Requirements } from '../agent/handshake.js';
import { chooseOwner } from '../hold/owner.js';
import { BuildHold } from '../hold/hold.js';
import { SHOWN_AGENT_LEVELS } from '../outcome/events.js';
import { signalOf } from '../outcome/exit.js';
import type { AgentEndpoint, AgentInfo, AgentWait } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { WAITING_FOR, waitingForAgent, waitingForOrphan, warningText } from '../report/step-words.js';
import { acquireRunLock, type LockProcess } from '../state/lock.js';
import { isGroupAlive } from '../tool/proc.js';
import { DEFAULTS, type Host, type SessionHooks, type SessionOptions } from './options.js';
import type { Session, SessionHost } from './session.js';
import path from 'node:path';

/** What kind of session to open. */
export interface OpenPlan {
  /** What DOCTOR must show; without it no DOCTOR is asked. */
  requires?: Requirements;
  /** A session that builds: the run lock, the owner token and the hold. */
  builds?: boolean;
  /** Emit an `agent` event once DOCTOR described the agent (a build and `verify` show it). */
  announce?: boolean;
  /** Name `--allow-no-agent` in the advice when no agent is found. */
  offerNoAgent?: boolean;
  /** Every event the agent sends after CONNECTED (default: the levels a build shows, as `agent-event`). */
  onAgentEvent?: (event: { level: string; message: string; timestamp?: string }) => void;
}

/** An open session, or the outcome that ended the opening (with what was known by then). */
export type Opening<H extends SessionHost = Host> =
  | { kind: 'open'; session: Session<H> }
  | { kind: 'refused'; outcome: Outcome; endpoint?: AgentEndpoint; agent?: AgentInfo; releaseLock?: () => Promise<void> };

/**
 * Opens a session. Never throws for the agent's behaviour.
 * @throws StateError when the run lock or owner.json cannot be read or written (a session that builds).
 */
export async function openSession<H extends SessionHost>(
  options: SessionOptions,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan = {},
): Promise<Opening<H>> {
  const emit = hooks.onEvent ?? (() => undefined);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const target = {
    cwd: host.cwd,
    env: host.env,
    timeoutMs,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.portFile === undefined ? {} : { portFile: options.portFile }),
    ...(hooks.signal === undefined ? {} : { signal: hooks.signal }),
    onEvent: plan.onAgentEvent ?? ((event: { level: string; message: string }) => showAgentEvent(emit, event)),
  };
  const onWait = (wait: AgentWait, elapsedMs: number) => emit({ type: 'waiting', what: waitingForAgent(wait), elapsedMs });
  const waitMs = options.waitMs ?? (plan.builds ? DEFAULTS.waitMs : 0);
  const agentDeadline = performance.now() + (options.waitForAgentMs ?? 0);
  const found = await findAgentWaiting(target, plan.offerNoAgent === true, options.waitForAgentMs ?? 0, onWait);
  if (found.kind === 'refused') return found;
  const lock = plan.builds ? await lockCheckout(found.location.projectDir, lockProcessOf(host), options, hooks) : undefined;
  if (lock !== undefined && 'kind' in lock) return lock;
  const releaseLock = lock?.release;
  const refused = (outcome: Outcome, known: { endpoint?: AgentEndpoint; agent?: AgentInfo } = {}): Opening<H> => ({
    kind: 'refused',
    outcome,
    ...known,
    ...(releaseLock === undefined ? {} : { releaseLock }),
  });
  const waitForAgentMs = options.waitForAgentMs ? Math.max(Math.round(agentDeadline - performance.now()), 1) : 0;
  const opened = await connectWaiting(found.location, target, { waitForAgentMs, waitMs }, onWait);
  if (opened.kind === 'refused') return refused(opened.outcome);
  const session: Session<H> = {
    host,
    options,
    timeoutMs,
    emit,
    signal: hooks.signal,
    location: found.location,
    connection: opened.connection,
    open: opened,
    endpoint: opened.endpoint,
    nestedWarned: new Set(),
    ...(lock === undefined ? {} : { releaseLock: lock.release, recordBuild: lock.recordBuild }),
  };
  if (plan.requires === undefined) return { kind: 'open', session };
  const onAgent = (agent: AgentInfo) => {
    session.agent = agent;
    if (plan.announce) emit({ type: 'agent', agent });
  };
  const checked = await checkAgentWaiting(opened, plan.requires, { timeoutMs, waitMs }, hooks.signal, onAgent, onWait);
  if (checked.kind === 'refused') {
    opened.connection.close();
    return refused(checked.outcome, { endpoint: opened.endpoint, ...(session.agent === undefined ? {} : { agent: session.agent }) });
  }
  session.doctor = checked.doctor;
  if (plan.builds) {
    session.owner = chooseOwner(found.location.projectDir, checked.agent.sessionId, options.owner, (message) =>
      emit({ type: 'warning', message }),
    );
    session.hold = new BuildHold(opened.connection, session.owner.owner, timeoutMs);
  }
  return { kind: 'open', session };
}

function showAgentEvent(emit: NonNullable<SessionHooks['onEvent']>, event: { level: string; message: string }): void {
  if (SHOWN_AGENT_LEVELS.has(event.level)) emit({ type: 'agent-event', level: event.level, message: event.message });
}

/**
 * The process the run lock names: a session that builds is opened on a whole {@link Host}.
 * @throws Error for a host without it (a bug in the caller).
 */
function lockProcessOf(host: SessionHost): LockProcess {
  if (!('pid' in host) || !('isAlive' in host)) throw new Error('a session that builds needs the whole host (pid, isAlive, clock, ...)');
  return host as SessionHost & LockProcess;
}

/**
 * Takes the run lock of the checkout, waiting up to --wait (also for the build of a run that
 * is gone, recorded with the lock: tool/proc.ts tells whether its group still runs); the
 * refusal when it cannot.
 */
async function lockCheckout(
  projectDir: string,
  host: LockProcess,
  options: SessionOptions,
  hooks: SessionHooks,
): Promise<(Pick<Session, 'recordBuild'> & { release: () => Promise<void> }) | Extract<Opening<never>, { kind: 'refused' }>> {
  const emit = hooks.onEvent ?? (() => undefined);
  const lock = await acquireRunLock(
    projectDir,
    { ...host, isGroupAlive: (group) => isGroupAlive(group.pgid, { startMs: group.leaderStartMs, errorMs: group.leaderErrorMs }) },
    options.waitMs ?? DEFAULTS.waitMs,
    (elapsedMs, orphan) => emit({ type: 'waiting', what: orphan === undefined ? WAITING_FOR.lock : waitingForOrphan(orphan), elapsedMs }),
    hooks.signal,
    () => emit({ type: 'warning', message: warningText.lockLost(path.join(projectDir, '.reclazz', 'build.lock')) }),
  );
  if (lock.kind === 'aborted')
    return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'waiting-for-lock' } };
  if (lock.kind === 'busy') {
    const orphan = lock.orphan === undefined ? {} : { orphan: lock.orphan };
    return { kind: 'refused', outcome: { reason: 'lock-busy', lockPath: lock.lockPath, waitedMs: lock.waitedMs, ...orphan } };
  }
  return { release: lock.release, recordBuild: lock.recordBuild };
}
