/**
 * Opening sessions: discover the agent (or every agent, for a build), take the checkout's run lock (a
 * session that builds), then per agent connect, ask DOCTOR, check what the session needs and choose the
 * owner token. The first refusal ends the opening. An agent not there or not ready yet is waited out
 * first (agent/handshake.ts).
 */
import type { AgentLocation } from '../agent/discover.js';
import {
  type AgentTarget,
  checkAgentWaiting,
  connectWaiting,
  findAgent,
  findAgents,
  findWaiting,
  type OnAgentWait,
  type Requirements,
  type Step,
} from '../agent/handshake.js';
import { agentView } from '../classes/coverage.js';
import { agentWatchOf, notOurs, otherPortFiles, whoseAgent } from './identity.js';
import {
  type Host,
  type Session,
  type SessionHooks,
  type SessionHost,
  type SessionOptions,
  type SessionSettings,
  settle,
} from './options.js';
import { chooseOwner, type OwnerChoice } from '../hold/owner.js';
import { BuildHold } from '../hold/hold.js';
import { type AgentEndpoint, type AgentInfo, SHOWN_AGENT_LEVELS } from '../outcome/facts.js';
import type { RememberedWhy, RunEvent } from '../outcome/events.js';
import { signalOf } from '../outcome/exit.js';
import type { Outcome } from '../outcome/outcome.js';
import { acquireRunLock, type LockProcess } from '../state/lock.js';
import { agentStatePlace, checkoutRoot, moveEarlierState, type StatePlace } from '../state/folder.js';
import { isGroupAlive, processStartTime, startsMatch } from '../tool/proc.js';
import path from 'node:path';
import { otherRecordPlace, type RememberedAgent, rememberedBehind, rememberedInCheckout } from '../state/store.js';

/** What kind of session to open. */
export interface OpenPlan {
  /** What DOCTOR must show; without it no DOCTOR is asked. */
  requires?: Requirements;
  /** A session that builds: the run lock, the owner token and the hold. */
  builds?: boolean;
  /** A session that builds takes the run lock per cycle (watch mode: {@link lockCheckout}), not for the whole session. */
  lockPerCycle?: boolean;
  /** Emit an `agent` event once DOCTOR described the agent (a build and `verify` show it). */
  announce?: boolean;
  /** Name `--allow-no-agent` in the advice when no agent is found. */
  offerNoAgent?: boolean;
  /** Every event the agent sends after CONNECTED (default: the levels a build shows, as `agent-event`). */
  onAgentEvent?: (event: { level: string; message: string; timestamp?: string | undefined }) => void;
}

/** An open session, or the outcome that ended the opening (with what was known by then). */
export type Opening<H extends SessionHost = Host> =
  | { kind: 'open'; session: Session<H> }
  | {
      kind: 'refused';
      outcome: Outcome;
      endpoint?: AgentEndpoint;
      agent?: AgentInfo;
      releaseLock?: () => Promise<void>;
      /** With several agents: the one that refused, and every one found (their `source`). */
      among?: { source: string; sources: string[] };
    };

/**
 * Opens a session with one agent (several port files refuse as `ambiguous-agent`; {@link openSessions}
 * holds them all). Never throws for the agent's behaviour.
 * @throws StateError when the run lock or owner.json cannot be read or written (a session that builds).
 */
export async function openSession<H extends SessionHost>(
  options: SessionOptions,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan = {},
): Promise<Opening<H>> {
  const opened = await findAndOpen(
    (target, offer) => {
      const found = findAgent(target, offer);
      return found.kind === 'ok' ? { kind: 'ok', locations: [found.location] } : found;
    },
    settle(options, plan.builds === true),
    host,
    hooks,
    plan,
  );
  return opened.kind === 'open' ? { kind: 'open', session: opened.sessions[0]! } : opened;
}

/** Every session of a build, in the order their holds are taken, sharing the checkout's run lock; or the refusal. */
export type Openings<H extends SessionHost = Host> = { kind: 'open'; sessions: Session<H>[] } | Extract<Opening<H>, { kind: 'refused' }>;

/**
 * Opens a session with every agent found, one per port file, sorted by path so that two runs take their
 * holds in one order. The run lock is taken once, before any connection; the first refusal closes the
 * sessions opened so far (the lock is left to `releaseLock`).
 * @throws StateError when the run lock or an owner.json cannot be read or written (a session that builds).
 */
export async function openSessions<H extends SessionHost>(
  options: SessionOptions,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan = {},
): Promise<Openings<H>> {
  return findAndOpen(findAgents, settle(options, plan.builds === true), host, hooks, plan);
}

/**
 * Discovery by `find` (waiting up to `waitForAgentMs` for a port file), then {@link openAll} of
 * what it found; what is left of `waitForAgentMs` bounds the connects.
 */
async function findAndOpen<H extends SessionHost>(
  find: (target: AgentTarget, offerNoAgent: boolean) => Step<{ locations: AgentLocation[] }>,
  options: SessionSettings,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan,
): Promise<Openings<H>> {
  const agentDeadline = performance.now() + options.waitForAgentMs;
  const target = targetOf(options, host, hooks, plan);
  const found = await findWaiting(() => find(target, plan.offerNoAgent === true), options.waitForAgentMs, hooks, onWaitOf(hooks.onEvent));
  if (found.kind === 'refused') {
    // The app's port file deleted by a test JVM's agent: the agent this checkout last used, when it is the only one recorded.
    const warn = (problem: string) => hooks.onEvent?.({ type: 'warning', kind: 'state-file', problem });
    const remembered = found.outcome.reason === 'no-agent' && plan.requires !== undefined ? rememberedInCheckout(host.cwd, warn) : [];
    if (remembered.length !== 1) return found;
    const fallback = { ...remembered[0]!, instead: found, why: { kind: 'missing' as const } };
    return openAll([fallback.location], options, host, hooks, plan, agentDeadline, fallback);
  }
  return openAll(found.locations, options, host, hooks, plan, agentDeadline);
}

/**
 * Opens a session with the agent at `location` alone (a watch's app found later, or back): as
 * {@link openSessions} opens each agent it finds, without discovery and without waiting for a port file.
 * @throws StateError when owner.json cannot be read or written (a session that builds).
 */
export function openSessionAt<H extends SessionHost>(
  location: AgentLocation,
  options: SessionOptions,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan,
): Promise<Openings<H>> {
  return openAll([location], settle(options, plan.builds === true), host, hooks, plan, performance.now());
}

/** The agent this checkout last used, and the refusal that stands when it is not that agent any more. */
type Fallback = RememberedFallback<Extract<Opening<never>, { kind: 'refused' }>>;

/** Takes the run lock (a session that builds), then opens a session at each location in turn. */
async function openAll<H extends SessionHost>(
  locations: AgentLocation[],
  options: SessionSettings,
  host: H,
  hooks: SessionHooks,
  plan: OpenPlan,
  agentDeadline: number,
  fallback?: Fallback,
): Promise<Openings<H>> {
  const checkout = checkoutRoot(host.cwd, locations);
  const lock = plan.builds && !plan.lockPerCycle ? await lockCheckout(checkout, lockProcessOf(host), options, hooks) : undefined;
  if (lock !== undefined && 'kind' in lock) return lock;
  const releaseLock = lock?.release;
  const sessions: Session<H>[] = [];
  const place: OpenPlace<H> = { checkout, options, host, hooks, plan, several: locations.length > 1, agentDeadline };
  for (const location of locations) {
    const opened = fallback === undefined ? await openAt(location, place) : await openRemembered(fallback, place);
    if (opened.kind === 'refused') {
      for (const session of sessions) session.connection.close();
      const among = locations.length > 1 ? { among: { source: location.source, sources: locations.map((l) => l.source) } } : {};
      return { ...opened, ...among, ...(releaseLock === undefined ? {} : { releaseLock }) };
    }
    sessions.push(opened.session);
  }
  // One lock for the run: the first session releases it when the sessions close.
  if (lock !== undefined) Object.assign(sessions[0]!, { releaseLock: lock.release, recordBuild: lock.recordBuild });
  return { kind: 'open', sessions };
}

/**
 * Opens a session with the agent `fallback` remembers, when it answers DOCTOR with the recorded
 * agent session (a warning says why it is used); else `fallback.instead`, as without it.
 */
async function openRemembered<H extends SessionHost>(fallback: Fallback, place: OpenPlace<H>): Promise<Opening<H>> {
  const opened = await openAt(fallback.location, { ...place, fallback });
  return opened.kind === 'open' ? opened : fallback.instead;
}

/** What opening a session at one location needs besides it: the same for every agent of one opening. */
interface OpenPlace<H extends SessionHost> {
  /** The checkout root (its `.reclazz/` holds the run lock). */
  checkout: string;
  options: SessionSettings;
  host: H;
  hooks: SessionHooks;
  plan: OpenPlan;
  /** Several agents are opened: every event of a session names its agent. */
  several: boolean;
  /** `performance.now()` by which a port file must answer (--wait-for-agent). */
  agentDeadline: number;
  /** The agent this checkout last used, tried in place of a refusal. */
  fallback?: Fallback;
}

/** Connects to the agent at `location`, asks DOCTOR when the plan requires it, and chooses the owner token (a session that builds). */
async function openAt<H extends SessionHost>(location: AgentLocation, place: OpenPlace<H>): Promise<Opening<H>> {
  const { checkout, options, host, hooks, plan, several, agentDeadline, fallback } = place;
  const base = hooks.onEvent ?? (() => undefined);
  // With several agents every event of a session names its agent.
  const emit = several ? (event: RunEvent) => base({ ...event, agentSource: location.source }) : base;
  const { timeoutMs, waitMs } = options;
  const target = targetOf(options, host, { ...hooks, onEvent: emit }, plan);
  const onWait = onWaitOf(emit);
  const waitForAgentMs = options.waitForAgentMs ? Math.max(Math.round(agentDeadline - performance.now()), 1) : 0;
  const opened = await connectWaiting(location, target, { waitForAgentMs, waitMs }, onWait);
  if (opened.kind === 'refused')
    return opened.outcome.reason === 'stale-port'
      ? { ...opened, outcome: { ...opened.outcome, ...otherPortFiles(host.cwd, location.portFile) } }
      : opened;
  const state = agentStatePlace(checkout, location);
  const fields = { host, options, timeoutMs, emit, signal: hooks.signal, checkout, state };
  if (plan.requires === undefined) return fallback === undefined ? { kind: 'open', session: sessionOf(opened, fields) } : fallback.instead;
  let described: { agent?: AgentInfo } = {};
  const onAgent = (agent: AgentInfo) => {
    described = { agent };
    // A remembered agent is announced only once its session is checked.
    if (plan.announce && fallback === undefined) emit({ type: 'agent', agent });
  };
  // Start-up is waited out within --wait, or --wait-for-agent when that is longer.
  const startingMs = Math.max(waitMs, waitForAgentMs);
  const checked = await checkAgentWaiting(opened, plan.requires, { timeoutMs, waitMs: startingMs }, hooks.signal, onAgent, onWait);
  if (checked.kind === 'refused') {
    opened.connection.close();
    return { kind: 'refused', outcome: checked.outcome, endpoint: opened.endpoint, ...described };
  }
  if (fallback !== undefined && !sameSession(fallback, checked, emit, plan.announce === true)) {
    opened.connection.close();
    return fallback.instead;
  }
  const { doctor } = checked;
  const warn = (problem: string) => emit({ type: 'warning', kind: 'state-file', problem });
  const watch = await agentWatchOf(doctor, options.pathMap, host.proc);
  const view = agentView(doctor, options.pathMap, watch);
  const known = { ...fields, ...described, doctor, view };
  if (!plan.builds) return { kind: 'open', session: sessionOf(opened, known) };
  const foreign = whoseAgent(view, watch, [host.cwd, location.projectDir]);
  if (foreign === 'foreign' || foreign === 'test-jvm') {
    opened.connection.close();
    const outcome = notOurs(foreign, doctor.pid, view, watch, location, host.cwd);
    const refused = { kind: 'refused' as const, outcome, endpoint: opened.endpoint, agent: checked.agent };
    // The port file a test JVM's agent overwrote: the agent this checkout last used through it, if it still answers.
    const remembered = foreign === 'test-jvm' && fallback === undefined ? rememberedBehind(state, location, host.cwd, warn) : undefined;
    if (remembered === undefined) return refused;
    return openRemembered({ ...remembered, instead: refused, why: { kind: 'test-jvm', pid: doctor.pid } }, place);
  }
  if (foreign === 'maybe') emit({ type: 'warning', kind: 'maybe-foreign', workingDirectory: view.workingDirectory });
  for (const { from, to } of moveEarlierState(location.projectDir, state)) emit({ type: 'warning', kind: 'state-moved', from, to });
  const record = ownerRecord(state, checked.agent, options.owner, warn);
  const hold = new BuildHold(opened.connection, record.owner.owner, timeoutMs);
  return { kind: 'open', session: sessionOf(opened, { ...known, ...record, hold }) };
}

/**
 * The owner token of a session that builds, and where its record lives: this agent's state
 * folder, or the one whichever form (port file, port number) found it before, when that one has
 * its record and no owner was named.
 */
function ownerRecord(
  state: StatePlace,
  agent: AgentInfo,
  named: string | undefined,
  warn: (problem: string) => void,
): Pick<Session, 'state'> & { owner: OwnerChoice } {
  const owner = chooseOwner(state, agent.sessionId, named, warn);
  const own = owner.source !== 'saved' ? 'none' : owner.saved?.held === true ? 'held' : 'released';
  const other = named === undefined ? otherRecordPlace(state, agent, own, warn) : undefined;
  return other === undefined ? { state, owner } : { state: other, owner: chooseOwner(other, agent.sessionId, named, warn) };
}

/** A session with the agent `opened` connected to, with what the opening learnt of it (`fields`). */
function sessionOf<H extends SessionHost>(
  opened: Session<H>['open'],
  fields: Pick<Session<H>, 'host' | 'options' | 'timeoutMs' | 'emit' | 'signal' | 'checkout' | 'state'> &
    Partial<Pick<Session<H>, 'agent' | 'doctor' | 'view' | 'owner' | 'hold'>>,
): Session<H> {
  return {
    ...fields,
    location: opened.location,
    connection: opened.connection,
    endpoint: opened.endpoint,
    open: opened,
    nestedWarned: new Set(),
  };
}

/** Where to look for the agent, and how its events are told. */
function targetOf(options: SessionSettings, host: SessionHost, hooks: SessionHooks, plan: OpenPlan): AgentTarget {
  const emit = hooks.onEvent ?? (() => undefined);
  return {
    cwd: host.cwd,
    env: host.env,
    timeoutMs: options.timeoutMs,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.portFile === undefined ? {} : { portFile: options.portFile }),
    ...(options.portFiles === undefined ? {} : { portFiles: options.portFiles }),
    ...(hooks.signal === undefined ? {} : { signal: hooks.signal }),
    onEvent: plan.onAgentEvent ?? ((event: { level: string; message: string }) => showAgentEvent(emit, event)),
  };
}

/** Tells a wait for the agent as a `waiting` event. */
function onWaitOf(emit: SessionHooks['onEvent']): OnAgentWait {
  return (wait, elapsedMs) => emit?.({ type: 'waiting', ...wait, elapsedMs });
}

function showAgentEvent(emit: NonNullable<SessionHooks['onEvent']>, event: { level: string; message: string }): void {
  if (SHOWN_AGENT_LEVELS.has(event.level)) emit({ type: 'agent-event', level: event.level, message: event.message });
}

/**
 * The process the run lock names: a session that builds is opened on a whole {@link Host}.
 * @throws Error for a host without it (a bug in the caller).
 */
function lockProcessOf(host: SessionHost): SessionHost & LockProcess {
  if (!('pid' in host) || !('isAlive' in host)) throw new Error('a session that builds needs the whole host (pid, isAlive, clock, ...)');
  return host as SessionHost & LockProcess;
}

/**
 * Takes the checkout's run lock, waiting up to --wait, also for the build a gone run recorded with it
 * (tool/proc.ts tells whether its group still runs); the refusal when it cannot.
 * @throws StateError when the state folder or the lock cannot be created.
 */
export async function lockCheckout(
  checkout: string,
  host: LockProcess & Pick<SessionHost, 'proc'>,
  options: SessionSettings,
  hooks: SessionHooks,
): Promise<(Pick<Session, 'recordBuild'> & { release: () => Promise<void> }) | Extract<Opening<never>, { kind: 'refused' }>> {
  const emit = hooks.onEvent ?? (() => undefined);
  const start = await processStartTime(host.pid, host.proc);
  const lock = await acquireRunLock(
    checkout,
    {
      ...host,
      ...(start === undefined ? {} : { start }),
      startedAt: async (pid, at) => {
        const now = await processStartTime(pid, host.proc);
        return now === undefined ? undefined : startsMatch(now, at);
      },
      isGroupAlive: (group) => isGroupAlive(group.pgid, { startMs: group.leaderStartMs, errorMs: group.leaderErrorMs }, host.proc),
    },
    options.waitMs,
    (elapsedMs, orphan) =>
      emit(
        orphan === undefined ? { type: 'waiting', kind: 'lock', elapsedMs } : { type: 'waiting', kind: 'orphan', group: orphan, elapsedMs },
      ),
    hooks.signal,
    () => emit({ type: 'warning', kind: 'lock-lost', lockPath: path.join(checkout, '.reclazz', 'build.lock') }),
  );
  if (lock.kind === 'aborted')
    return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'waiting-for-lock' } };
  if (lock.kind === 'busy') {
    const orphan = lock.orphan === undefined ? {} : { orphan: lock.orphan };
    const holder = lock.holder === undefined ? {} : { holder: lock.holder };
    return { kind: 'refused', outcome: { reason: 'lock-busy', lockPath: lock.lockPath, waitedMs: lock.waitedMs, ...orphan, ...holder } };
  }
  return { release: lock.release, recordBuild: lock.recordBuild };
}

/** A remembered agent tried in place of what was found, `why`, and `instead`: what stands when it is not that agent any more. */
interface RememberedFallback<R> extends RememberedAgent {
  instead: R;
  why: RememberedWhy;
}

/**
 * Whether the agent `fallback` remembers answered DOCTOR with the recorded session and pid; if
 * so, says why it is used and announces it (`announce`), which session/open.ts left until now.
 */
function sameSession<R>(
  fallback: RememberedFallback<R>,
  checked: { agent: AgentInfo },
  emit: (event: RunEvent) => void,
  announce: boolean,
): boolean {
  const { agent } = checked;
  if (agent.sessionId !== fallback.sessionId || agent.pid !== fallback.pid) return false;
  const { location } = fallback;
  emit({
    type: 'warning',
    kind: 'remembered-agent',
    why: fallback.why,
    portFile: location.portFile ?? location.source,
    port: agent.port,
    pid: agent.pid,
  });
  if (announce) emit({ type: 'agent', agent });
  return true;
}
