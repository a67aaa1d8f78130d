/**
 * Opening a session: discover the agent, take the checkout's run lock (a session that builds),
 * connect and read CONNECTED, ask DOCTOR and check what the session needs, and choose the owner
 * token (a session that builds). Each step returns data; the first refusal ends the opening
 * with its outcome.
 */
import { agentView, isForeignAgent, isProjectDir, type AgentView } from '../classes/coverage.js';
import { portFilesAround } from '../agent/discover.js';
import { checkAgent, connectAgent, findAgent, type Requirements } from '../agent/handshake.js';
import { findClassDirs } from '../classes/dirs.js';
import { chooseOwner } from '../hold/owner.js';
import { BuildHold } from '../hold/hold.js';
import { SHOWN_AGENT_LEVELS } from '../outcome/events.js';
import { signalOf } from '../outcome/exit.js';
import type { AgentEndpoint, AgentInfo } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { WAITING_FOR, warningText } from '../report/step-words.js';
import { acquireRunLock, type LockProcess } from '../state/lock.js';
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
  const found = findAgent(target, plan.offerNoAgent === true);
  if (found.kind === 'refused') return found;
  const releaseLock = plan.builds ? await lockCheckout(found.location.projectDir, lockProcessOf(host), options, hooks) : undefined;
  if (releaseLock !== undefined && typeof releaseLock !== 'function') return releaseLock;
  const refused = (outcome: Outcome, known: { endpoint?: AgentEndpoint; agent?: AgentInfo } = {}): Opening<H> => ({
    kind: 'refused',
    outcome,
    ...known,
    ...(releaseLock === undefined ? {} : { releaseLock }),
  });
  const opened = await connectAgent(found.location, target);
  if (opened.kind === 'refused')
    return refused(
      opened.outcome.reason === 'stale-port' ? { ...opened.outcome, ...otherPortFiles(host.cwd, found.location.portFile) } : opened.outcome,
    );
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
    ...(releaseLock === undefined ? {} : { releaseLock }),
  };
  if (plan.requires === undefined) return { kind: 'open', session };
  const onAgent = (agent: AgentInfo) => {
    session.agent = agent;
    if (plan.announce) emit({ type: 'agent', agent });
  };
  const checked = await checkAgent(opened, plan.requires, timeoutMs, hooks.signal, onAgent);
  if (checked.kind === 'refused') {
    opened.connection.close();
    return refused(checked.outcome, { endpoint: opened.endpoint, ...(session.agent === undefined ? {} : { agent: session.agent }) });
  }
  session.doctor = checked.doctor;
  session.view = agentView(checked.doctor, options.pathMap ?? []);
  if (plan.builds) {
    const foreign = foreignAgent(session.view, [host.cwd, found.location.projectDir]);
    if (foreign === 'foreign') {
      opened.connection.close();
      const { pid } = checked.doctor;
      const agent = { pid, workingDirectory: session.view.workingDirectory, watched: session.view.watched.map((w) => w.local) };
      const place = { port: found.location.port, source: found.location.source, ...portFileOf(found.location.portFile) };
      const outcome: Outcome = { reason: 'stale-port', place, foreign: agent, ...otherPortFiles(host.cwd, found.location.portFile) };
      return refused(outcome, { endpoint: opened.endpoint, agent: checked.agent });
    }
    if (foreign === 'maybe') emit({ type: 'warning', message: warningText.maybeForeign(session.view.workingDirectory) });
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

/** Takes the run lock of the checkout, waiting up to --wait; the refusal when it cannot. */
async function lockCheckout(
  projectDir: string,
  host: LockProcess,
  options: SessionOptions,
  hooks: SessionHooks,
): Promise<(() => Promise<void>) | Opening<never>> {
  const emit = hooks.onEvent ?? (() => undefined);
  const lock = await acquireRunLock(
    projectDir,
    host,
    options.waitMs ?? DEFAULTS.waitMs,
    (elapsedMs) => emit({ type: 'waiting', what: WAITING_FOR.lock, elapsedMs }),
    hooks.signal,
    () => emit({ type: 'warning', message: warningText.lockLost(path.join(projectDir, '.reclazz', 'build.lock')) }),
  );
  if (lock.kind === 'aborted')
    return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'waiting-for-lock' } };
  if (lock.kind === 'busy') return { kind: 'refused', outcome: { reason: 'lock-busy', lockPath: lock.lockPath, waitedMs: lock.waitedMs } };
  return lock.release;
}

/**
 * Whether the agent is another app's by its DOCTOR evidence (coverage.ts {@link isForeignAgent}),
 * `maybe` when its sample is truncated and nothing listed is this project's, else `ours`.
 * `roots`: the project folders (where the run is, and the port file's project).
 */
function foreignAgent(view: AgentView, roots: string[]): 'foreign' | 'maybe' | 'ours' {
  const classDirs = [...new Set(roots)].flatMap((root) => findClassDirs(root, 'command'));
  if (isForeignAgent(view, roots, classDirs)) return 'foreign';
  const listedOurs = view.watched.some((w) => isProjectDir(w.local, roots, classDirs));
  const outside = view.workingDirectory !== '' && !roots.some((root) => isProjectDir(view.workingDirectory, [root], []));
  return !view.complete && !listedOurs && outside ? 'maybe' : 'ours';
}

/** The port files around `cwd` other than `used`, when there are any. */
function otherPortFiles(cwd: string, used: string | undefined): { portFiles?: string[] } {
  const others = portFilesAround(cwd).filter((file) => file !== used);
  return others.length > 0 ? { portFiles: others } : {};
}

function portFileOf(portFile: string | undefined): { portFile?: string } {
  return portFile === undefined ? {} : { portFile };
}
