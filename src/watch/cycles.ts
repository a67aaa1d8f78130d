/**
 * The running watch (loop.ts starts it): the agent's sessions while they stay, the source watch, the
 * scheduler, the class hints. Each cycle takes the run lock (session/open.ts `beginCycle`) and releases
 * it; between cycles nothing is held.
 */
import { signalOf } from '../outcome/exit.js';
import type { RunEvent, ToolKind } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import type { RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import { describeOutcome } from '../report/words.js';
import {
  type BuildCommand,
  type BuildSession,
  type CycleOptions,
  failureOutcome,
  type Host,
  type HostOverrides,
  ofAgent,
  runResult,
  type SessionHooks,
  type SessionOptions,
} from '../session/options.js';
import { staleFolders } from '../session/check.js';
import { closeSessions, restartIfNeeded, type RestartOptions, runCycles, type SessionGroup } from '../session/group.js';
import { cycleEndLine, cycleStartLine, type EndLine, endLineOf, newsLine, type NewsLine } from './lines.js';
import { classHints, type ClassHints } from './hints.js';
import { createCycleScheduler, type CycleScheduler, DEFAULT_DEBOUNCE_MS } from './scheduler.js';
import type { WatchSources } from './sources.js';
import { type SourceWatcher, watchErrorHint, watchSources } from './watcher.js';
import { beginCycle, openSessions } from '../session/open.js';
import { pause } from '../util/wait.js';

/** What {@link WatchCycles} is given. */
interface WatchSetup {
  options: WatchOptions;
  host: Host;
  hooks: WatchHooks;
  command: BuildCommand;
  /** The class output directories to watch before the first cycle. */
  classDirs: string[];
}

/** One watch's state, from its start to its end. */
export class WatchCycles {
  /** Cycles run so far, and the last one's result. */
  count = 0;
  last: RunResult | undefined;
  private group: SessionGroup<BuildSession> | undefined;
  /** The agent sessions of the last group, to tell a return from an app restart. */
  private lastSessionIds: ReadonlySet<string> | undefined;
  /**
   * The group of the cycle running now, and the first of its agents that went away meanwhile: the
   * others stay open until the cycle ends, so each agent's part is told as it happened.
   */
  private running: { group: SessionGroup<BuildSession>; lost?: BuildSession } | undefined;
  /** Changes seen while no agent was there: they start a cycle once it is back. */
  private readonly deferred = new Set<string>();
  private readonly stopper = new AbortController();
  private readonly hints: ClassHints;
  private readonly scheduler: CycleScheduler;
  private endWith: (outcome: Outcome) => void = () => undefined;
  private reconnecting = false;
  /** True from the news that the agent is not there until it is back. */
  private away = false;
  private stopping = false;
  /** Saves seen so far: a save during a wait for the app's restart ends it early (the cycle starts over). */
  private saves = 0;
  /** Classes (binary names) an earlier restart could not prove: the app is not restarted again for them. */
  private readonly notAgain = new Set<string>();

  constructor(private readonly setup: WatchSetup) {
    const signal = setup.hooks.signal;
    // Sessions opened on a reconnect stop with the watch's own signal, which follows the caller's.
    signal?.addEventListener('abort', () => this.stopper.abort(signal.reason), { once: true });
    const warn = (message: string) => this.emit({ type: 'warning', message });
    this.hints = classHints({
      stalePass: (dirs) => staleFolders(setup.host.cwd, dirs, warn),
      onError: (error) => this.watchFailed(error),
    });
    this.scheduler = createCycleScheduler({
      runCycle: (changed) => this.cycle(changed),
      ...(setup.options.debounceMs === undefined ? {} : { debounceMs: setup.options.debounceMs }),
      onError: (error) => warn(warningText.internalError(error)),
    });
  }

  /**
   * Runs until the end: the signal, the agent lost with `exitOnAgentLoss`, or a refusal.
   * @returns the outcome that ended it (for a signal, an interrupt between cycles).
   */
  async run(first: Reached, sources: WatchSources): Promise<Outcome> {
    const { hooks, host } = this.setup;
    const ended = new Promise<Outcome>((resolve) => (this.endWith = resolve));
    const onSignal = () => this.endWith({ reason: 'interrupted', signal: signalOf(hooks.signal), at: 'watching' });
    if (hooks.signal?.aborted) onSignal();
    hooks.signal?.addEventListener('abort', onSignal, { once: true });
    const watcher: SourceWatcher = watchSources({
      roots: sources.roots,
      ignoreDirs: [...sources.outputDirs, ...this.setup.classDirs],
      onChange: (changed) => {
        this.saves += 1;
        this.scheduler.notify(changed);
      },
      onError: (error) => this.watchFailed(error),
    });
    await this.hints.watch(this.setup.classDirs);
    if (first.kind === 'open') this.adopt(first.sessions);
    else this.lost(undefined, describeOutcome(first.outcome).message.replace(/\.\s*$/, ''));
    await watcher.ready;
    this.news({
      kind: 'watching',
      at: host.clock.date(),
      folders: sources.roots.length,
      debounceMs: this.setup.options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    });
    const outcome = await ended;
    this.stopping = true;
    this.stopper.abort(outcome.reason === 'interrupted' ? outcome.signal : 'end');
    hooks.signal?.removeEventListener('abort', onSignal);
    await this.scheduler.stop();
    await watcher.close();
    await this.hints.close();
    if (this.group !== undefined) await closeSessions(this.group);
    return outcome;
  }

  /** One cycle for `changed`; without an agent the changes wait for it. */
  private async cycle(changed: readonly string[]): Promise<void> {
    const group = this.group;
    if (group === undefined || this.stopping) {
      for (const path of changed) this.deferred.add(path);
      return;
    }
    const { host, hooks } = this.setup;
    const cycle = (this.count += 1);
    hooks.onCycleStart?.({ cycle, changed, line: cycleStartLine({ at: host.clock.date(), changed: changed.length }) });
    this.running = { group };
    let result: RunResult;
    try {
      result = await this.build(group, changed);
    } catch (error) {
      this.settle(group);
      throw error;
    }
    const end = endLineOf(result, host.clock.date(), this.last?.hold === 'held');
    this.last = result;
    hooks.onCycleEnd?.({ cycle, changed, result, end, line: cycleEndLine(end) });
    this.settle(group);
  }

  /** The cycle on `group` has ended: the news of an agent that went away during it comes now, after its end line. */
  private settle(group: SessionGroup<BuildSession>): void {
    const lost = this.running?.lost;
    this.running = undefined;
    if (lost !== undefined) this.lost(group, undefined, lost);
  }

  /** The lock, DOCTOR and owner.json again, the build on the sessions, the lock released. */
  private async build(group: SessionGroup<BuildSession>, changed: readonly string[]): Promise<RunResult> {
    const { host, command, options } = this.setup;
    const first = group.sessions[0]!;
    const startedMs = host.clock.now();
    // With several agents, an early end about one of them (`about`) names it.
    const early = (outcome: Outcome, about?: BuildSession) => {
      const result = runResult({ session: about ?? first, command, startedMs, now: () => host.clock.now() }, outcome);
      return about !== undefined && group.sessions.length > 1 ? ofAgent(result, about.location.source) : result;
    };
    let start;
    try {
      start = await beginCycle(group.sessions);
    } catch (error) {
      return early(failureOutcome(error, first.emit));
    }
    if (start.kind === 'lost') {
      // An agent went away since the last cycle: these changes are built once it is back.
      for (const path of changed) this.deferred.add(path);
      this.lost(group, undefined, start.session);
      return early({ reason: 'agent-disconnected', port: start.session.agent.port, during: { kind: 'doctor' } }, start.session);
    }
    if (start.kind === 'refused') return early(start.outcome, start.session);
    try {
      this.hints.startCycle();
      const changedFolders = (dirs: readonly string[], full: boolean) => this.hints.changedFolders(dirs, full);
      const saves = this.saves;
      const result = await runCycles(group, command, { ...options, changedFolders }, startedMs);
      // A change that needs a restart: restart the app once for it, unless a save comes first (session/group.ts).
      return await restartIfNeeded(result, { group, options, superseded: () => this.saves !== saves, notAgain: this.notAgain });
    } finally {
      await start.releaseLock();
    }
  }

  /** Takes the sessions: news when it is a return, and the changes that waited for them. */
  private adopt(sessions: BuildSession[]): void {
    const { host, hooks } = this.setup;
    const ids = new Set(sessions.map((s) => s.agent.sessionId));
    // A new app session is news about that app: its pid, not another agent's that stayed.
    const fresh = this.lastSessionIds === undefined ? undefined : sessions.find((s) => !this.lastSessionIds!.has(s.agent.sessionId));
    const pid = Number((fresh ?? sessions[0]!).agent.pid);
    const known = Number.isSafeInteger(pid) ? { pid } : {};
    if (this.away) this.news({ kind: fresh === undefined ? 'agent-back' : 'new-app-session', at: host.clock.date(), ...known });
    this.away = false;
    const group: SessionGroup<BuildSession> = { sessions, emit: hooks.onEvent ?? (() => undefined) };
    this.group = group;
    this.lastSessionIds = ids;
    // Any agent going away ends the group: every cycle holds them all, so all are opened again.
    for (const session of sessions) session.connection.onClose(() => this.lost(group, undefined, session));
    if (this.deferred.size > 0) {
      this.scheduler.notify([...this.deferred]);
      this.deferred.clear();
    }
  }

  /**
   * An agent (`session`'s) went away, or none was there at the start (`why`): news, then the end or
   * a reconnect. During a cycle on `group`, once that cycle has ended.
   */
  private lost(group: SessionGroup<BuildSession> | undefined, why?: string, session?: BuildSession): void {
    if (this.stopping || this.group !== group) return;
    if (group !== undefined && this.running?.group === group) {
      this.running.lost ??= session ?? group.sessions[0];
      return;
    }
    this.group = undefined;
    this.away = true;
    if (group !== undefined) void closeSessions(group);
    const at = this.setup.host.clock.date();
    const gone = session ?? group?.sessions[0];
    const which = group !== undefined && group.sessions.length > 1 && gone !== undefined ? { source: gone.location.source } : {};
    this.news(why === undefined ? { kind: 'agent-lost', at, ...which } : { kind: 'no-agent-yet', at, why });
    if (this.setup.options.exitOnAgentLoss) {
      this.endWith({ reason: 'agent-disconnected', port: gone?.agent.port ?? 0, during: { kind: 'watch' } });
      return;
    }
    this.reconnect();
  }

  private reconnect(): void {
    if (this.reconnecting) return;
    this.reconnecting = true;
    const { options, host, hooks } = this.setup;
    const sessionHooks = { ...(hooks.onEvent === undefined ? {} : { onEvent: hooks.onEvent }), signal: this.stopper.signal };
    awaitAgent(options, host, sessionHooks, options.reconnect)
      .then((reached) => {
        this.reconnecting = false;
        if (reached === undefined || this.stopping) {
          if (reached?.kind === 'open') void closeSessions(reached);
          return;
        }
        if (reached.kind === 'refused') this.endWith(reached.outcome);
        else this.adopt(reached.sessions);
      })
      .catch((error: unknown) => this.endWith(failureOutcome(error, (event) => this.emit(event))));
  }

  /** A file watch's error: the watch goes on (hints.ts runs a full pass soon after one). */
  private watchFailed(error: Error): void {
    this.emit({ type: 'warning', message: warningText.watchFailed(error.message, watchErrorHint(error)) });
  }

  private emit(event: RunEvent): void {
    this.setup.hooks.onEvent?.(event);
  }

  private news(news: NewsLine): void {
    this.setup.hooks.onNews?.(news, newsLine(news));
  }
}

/** What a watch is given (watch/loop.ts `runWatch`) and what it tells as it goes. */

/** Options of `runWatch`. Times in ms. */
export interface WatchOptions extends SessionOptions, Omit<CycleOptions, 'changedFolders'>, HostOverrides, RestartOptions {
  tool: ToolKind;
  /** The quiet period after a change before a cycle starts (default 300). */
  debounceMs?: number;
  /** More folders or files to watch (`--watch`), relative to the project unless absolute. */
  watch?: readonly string[];
  /** End the watch when the agent goes away (default: keep watching and reconnect). */
  exitOnAgentLoss?: boolean;
  /** Pauses between tries to reach the agent again (default cycles.ts RECONNECT_MS). */
  reconnect?: { first: number; max: number };
}

/** What a watch tells as it goes, and who may stop it. */
export interface WatchHooks {
  /** The events of each cycle, as a single run emits them. */
  onEvent?: (event: RunEvent) => void;
  /** A cycle starts: its number, the source paths that changed, and its start line. */
  onCycleStart?: (start: { cycle: number; changed: readonly string[]; line: string }) => void;
  /** A cycle ended: its whole result, its end line. */
  onCycleEnd?: (end: { cycle: number; changed: readonly string[]; result: RunResult; end: EndLine; line: string }) => void;
  /** News between cycles (the agent lost or back, the watch started). */
  onNews?: (news: NewsLine, line: string) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop (a running build is stopped and `failed` sent). */
  signal?: AbortSignal;
}

/**
 * The first and the longest pause between two tries to reach a gone agent again, in ms. A watch keeps
 * one session while the agent stays: it keeps only 5 clients, and a closed slot lingers (protocol.md "Slots linger").
 */
const RECONNECT_MS = { first: 250, max: 5000 } as const;

/**
 * Refusals that mean "the agent is not there (yet)" (no port file, nothing listening, clients full,
 * still starting): a watch keeps trying; any other refusal (an old agent, no VERIFY) ends it.
 */
const AWAY: ReadonlySet<Outcome['reason']> = new Set([
  'no-agent',
  'stale-port',
  'bad-port-file',
  'handshake',
  'agent-not-ready',
  'agent-disconnected',
]);

/** What a try to reach the agent gave. */
export type Reached =
  { kind: 'open'; sessions: BuildSession[] } | { kind: 'away'; outcome: Outcome } | { kind: 'refused'; outcome: Outcome };

/**
 * One try: opens a build session with every agent of the checkout (without the run lock).
 * @throws StateError when owner.json cannot be read.
 */
export async function reachAgent(options: SessionOptions, host: Host, hooks: SessionHooks): Promise<Reached> {
  const opening = await openSessions(options, host, hooks, {
    builds: true,
    lockPerCycle: true,
    announce: true,
    requires: { need: 'owned builds', ownedBuilds: true, verify: options.verify !== false, offerNoVerify: true, session: true },
  });
  if (opening.kind === 'open') return { kind: 'open', sessions: opening.sessions as BuildSession[] };
  return { kind: AWAY.has(opening.outcome.reason) ? 'away' : 'refused', outcome: opening.outcome };
}

/**
 * Tries, with a doubling pause, until the agent is reached, a refusal other than "away" comes, or
 * `signal` aborts (then undefined).
 * @throws StateError when owner.json cannot be read.
 */
async function awaitAgent(
  options: SessionOptions,
  host: Host,
  hooks: SessionHooks,
  backoff: { first: number; max: number } = RECONNECT_MS,
): Promise<Exclude<Reached, { kind: 'away' }> | undefined> {
  let backoffMs = backoff.first;
  for (;;) {
    if (!(await pause(backoffMs, hooks.signal))) return undefined;
    const reached = await reachAgent(options, host, hooks);
    if (hooks.signal?.aborted) {
      if (reached.kind === 'open') await closeSessions(reached);
      return undefined;
    }
    if (reached.kind !== 'away') return reached;
    backoffMs = Math.min(backoffMs * 2, backoff.max);
  }
}
