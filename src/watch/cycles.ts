/**
 * The running watch (loop.ts starts it): the apps in view (apps.ts), the source watch, the scheduler,
 * the class hints. Each cycle takes the run lock (session/begin.ts `beginCycle`) and releases it;
 * between cycles nothing is held. Cycles, looks for gone agents and the proof in an app that came
 * back run one at a time; news is told as it happens.
 */
import { signalOf } from '../outcome/exit.js';
import type { ToolKind } from '../outcome/facts.js';
import { errorFact, type RunEvent } from '../outcome/events.js';
import type { Outcome } from '../outcome/outcome.js';
import type { RunResult } from '../outcome/result.js';
import type { CycleEnd, WatchNews } from '../outcome/watch.js';
import {
  type BuildCommand,
  type BuildSession,
  type CycleOptions,
  failureOutcome,
  type Host,
  type HostOverrides,
  runResult,
  type SessionOptions,
} from '../session/options.js';
import type { AgentView } from '../classes/coverage.js';
import type { AwayApp } from '../session/away.js';
import { staleFolders } from '../session/detect.js';
import { beginCycle } from '../session/begin.js';
import { closeSessions, proveReturn, restartIfNeeded, type RestartOptions, type RestartPlace, runCycles } from '../session/group.js';
import { type App, AppView, awayOf, findNew, type Look, lookAt, reachAgents, type Reached, RECONNECT_MS } from './apps.js';
import { classHints, type ClassHints } from './hints.js';
import { createCycleScheduler, type CycleScheduler, DEFAULT_DEBOUNCE_MS } from './scheduler.js';
import type { WatchSources } from './sources.js';
import { type SourceWatcher, watchSources } from './watcher.js';
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
  /** Cycles run so far (builds, and proofs in an app that came back), and the last build's result. */
  count = 0;
  last: RunResult | undefined;
  private readonly apps = new AppView();
  /** Changes seen while no agent was there: they start a cycle once one is back. */
  private readonly deferred = new Set<string>();
  private readonly stopper = new AbortController();
  private readonly hints: ClassHints;
  private readonly scheduler: CycleScheduler;
  private endWith: (outcome: Outcome) => void = () => undefined;
  /** The cycle or look running now: the next waits for it. */
  private turn: Promise<void> = Promise.resolve();
  private looking = false;
  /** True from the news that no agent is there until one is. */
  private away = false;
  /** Several apps have been in view: news names the app. */
  private several = false;
  private stopping = false;
  /** Saves seen so far: a save during a wait for the app's restart ends it early (the cycle starts over). */
  private saves = 0;
  /** Each app's classes an earlier restart could not prove there (group.ts `RestartPlace.notAgain`): that app is not restarted again for them. */
  private readonly notAgain = new Set<string>();
  /** The restart command a superseded cycle left running (group.ts `RestartPlace.carried`): the next restart waits for it. */
  private readonly carried: NonNullable<RestartPlace['carried']> = {};

  constructor(private readonly setup: WatchSetup) {
    const signal = setup.hooks.signal;
    // Sessions opened later stop with the watch's own signal, which follows the caller's.
    signal?.addEventListener('abort', () => this.stopper.abort(signal.reason), { once: true });
    this.hints = classHints({
      stalePass: (dirs) => staleFolders(setup.host.cwd, dirs, (problem) => this.emit({ type: 'warning', kind: 'state-file', problem })),
      onError: (error) => this.watchFailed(error),
    });
    this.scheduler = createCycleScheduler({
      runCycle: (changed) => this.exclusive(() => this.cycle(changed)),
      ...(setup.options.debounceMs === undefined ? {} : { debounceMs: setup.options.debounceMs }),
      onError: (error) => this.emit({ type: 'warning', kind: 'internal-error', error: errorFact(error) }),
    });
  }

  /**
   * Runs until the end: the signal, an agent lost with `exitOnAgentLoss`, or a refusal.
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
    if (first.kind === 'open') for (const session of first.sessions) this.adopt(session);
    else {
      this.away = true;
      this.news({ kind: 'no-agent-yet', at: host.clock.date(), why: first.outcome });
      this.look();
    }
    await watcher.ready;
    this.news({
      kind: 'watching',
      at: host.clock.date(),
      folders: sources.roots,
      from: host.cwd,
      debounceMs: this.setup.options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    });
    const outcome = await ended;
    this.stopping = true;
    this.stopper.abort(outcome.reason === 'interrupted' ? outcome.signal : 'end');
    hooks.signal?.removeEventListener('abort', onSignal);
    await this.scheduler.stop();
    await this.turn;
    // A restart command a superseded cycle kept for the next one: the watch is done with it.
    this.carried.run?.leave();
    await watcher.close();
    await this.hints.close();
    await closeSessions({ sessions: this.apps.present() });
    return outcome;
  }

  /** Runs `step` once the cycle or look before it has ended. */
  private exclusive(step: () => Promise<void>): Promise<void> {
    const next = this.turn.then(step);
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** One cycle for `changed`, with the apps whose agent is there; without any, the changes wait for one. */
  private async cycle(changed: readonly string[]): Promise<void> {
    if (this.stopping) return;
    // Apps back or found since the last cycle are in it.
    if (this.apps.size > 0 && !(await this.lookSafely())) return;
    const sessions = this.apps.present();
    if (sessions.length === 0 || this.stopping) {
      for (const path of changed) this.deferred.add(path);
      return;
    }
    const { host, hooks } = this.setup;
    const cycle = (this.count += 1);
    hooks.onCycleStart?.({ cycle, changed, at: host.clock.date() });
    const result = await this.build(sessions, changed);
    const end = { at: host.clock.date(), heldBefore: this.last?.hold === 'held' };
    this.last = result;
    this.keepOwed(result, sessions.length === 1 ? sessions[0]!.location.source : undefined);
    hooks.onCycleEnd?.({ cycle, changed, result, end });
    await this.afterRestart(result);
  }

  /** The lock, DOCTOR and owner.json again, the build on the sessions of the agents still there, the lock released. */
  private async build(sessions: BuildSession[], changed: readonly string[]): Promise<RunResult> {
    const { host, command, options, hooks } = this.setup;
    const first = sessions[0]!;
    const startedMs = host.clock.now();
    // With several agents, an early end about one of them (`about`) names it.
    const early = (outcome: Outcome, about?: BuildSession) => {
      const result = runResult({ session: about ?? first, command, startedMs, now: () => host.clock.now() }, outcome);
      return about !== undefined && this.apps.size > 1 ? { ...result, ofAgent: about.location.source } : result;
    };
    let start;
    try {
      start = await beginCycle(sessions);
    } catch (error) {
      return early(failureOutcome(error, first.emit));
    }
    if (start.kind === 'refused') return early(start.outcome, start.session);
    for (const session of start.lost) this.closed(session);
    const present = sessions.filter((s) => !start.lost.includes(s));
    try {
      if (present.length === 0) {
        // Every agent went away since the last cycle: these changes are built once one is back.
        for (const path of changed) this.deferred.add(path);
        const gone = start.lost[0]!;
        return early({ reason: 'agent-disconnected', port: gone.agent.port, during: { kind: 'doctor' } }, gone);
      }
      this.hints.startCycle();
      const changedFolders = (dirs: readonly string[], full: boolean) => this.hints.changedFolders(dirs, full);
      const saves = this.saves;
      const group = { sessions: present, emit: hooks.onEvent ?? (() => undefined), away: await this.apps.awayApps() };
      const result = await runCycles(group, command, { ...options, changedFolders }, startedMs);
      // A change that needs a restart: restart the app once for it, unless a save comes first (session/group.ts).
      const restarting = (restarted: readonly BuildSession[]) =>
        restarted.forEach((s) => this.apps.of(s) && (this.apps.of(s)!.restarting = true));
      const place = { group, options, superseded: () => this.saves !== saves, notAgain: this.notAgain, restarting, carried: this.carried };
      return await restartIfNeeded(result, place);
    } finally {
      await start.releaseLock();
    }
  }

  /**
   * After a cycle whose restart the apps marked `restarting` went through: each is taken back in the
   * session the restart proved the change in, with no more to prove; any other is looked at as gone.
   */
  private async afterRestart(result: RunResult): Promise<void> {
    for (const app of this.apps.all().filter((a) => a.restarting === true)) {
      app.restarting = false;
      if (app.session !== undefined) continue;
      const look = await this.lookAtSafely(app);
      const proven = (result.agents?.find((a) => a.agentSource === app.key) ?? (result.agents === undefined ? result : undefined))?.restart;
      if (look?.kind === 'new' && look.session.agent.sessionId === proven?.sessionId) this.adopt(look.session, 'new-app-session', true);
      else if (look !== undefined) {
        // The restart did not bring it back as proven: gone as of now.
        if (look.kind === 'away' || look.kind === 'stopped')
          this.news({ kind: 'agent-lost', at: this.setup.host.clock.date(), ...this.named(app) });
        await this.settle(app, look);
      }
    }
    if (this.apps.away().length > 0) this.look();
  }

  /** A look at every gone app and for apps found later, each acted on; false when that ended the watch. */
  private async lookSafely(): Promise<boolean> {
    try {
      await this.lookOnce();
      return true;
    } catch (error) {
      this.endWith(failureOutcome(error, (event) => this.emit(event)));
      return false;
    }
  }

  private async lookOnce(): Promise<void> {
    const { options, host } = this.setup;
    for (const app of this.apps.away()) {
      if (this.stopping) return;
      if (app.restarting !== true) await this.settle(app, await lookAt(app, options, host, this.sessionHooks()));
    }
    if (this.stopping) return;
    const known = new Set(this.apps.all().map((a) => a.key));
    const found =
      known.size === 0 ? await reachAgents(options, host, this.sessionHooks()) : await findNew(known, options, host, this.sessionHooks());
    if (found.kind === 'refused') this.endWith(found.outcome);
    else if (found.kind === 'open') for (const session of found.sessions) this.adopt(session, this.away ? 'agent-back' : 'agent-found');
  }

  private async lookAtSafely(app: App): Promise<Look | undefined> {
    try {
      return await lookAt(app, this.setup.options, this.setup.host, this.sessionHooks());
    } catch (error) {
      this.endWith(failureOutcome(error, (event) => this.emit(event)));
      return undefined;
    }
  }

  /** Acts on what a look at gone `app` found: back (in a new JVM, the change proven there), stopped, or still away. */
  private async settle(app: App, look: Look): Promise<void> {
    const at = this.setup.host.clock.date();
    switch (look.kind) {
      case 'same':
        return this.adopt(look.session, 'agent-back');
      case 'new': {
        const away = await awayOf(app);
        this.adopt(look.session, 'new-app-session');
        return this.proveBack(away, look.session, look.view);
      }
      case 'stopped':
        this.apps.drop(app);
        this.news({ kind: 'agent-stopped', at, source: app.key });
        if (this.apps.size === 0) this.away = true;
        return;
      case 'refused':
        return this.endWith(look.outcome);
      case 'away':
        return;
    }
  }

  /**
   * Each app's part of a cycle's `result`: what it left not proven in its JVM, with the agent session
   * that was, or nothing once all it ran there is proven. `sole`: the app a result naming no agent is of.
   */
  private keepOwed(result: RunResult, sole: string | undefined): void {
    for (const app of this.apps.all()) {
      const part =
        result.agents?.find((a) => a.agentSource === app.key) ?? (result.agents === undefined && app.key === sole ? result : undefined);
      if (part === undefined) continue;
      if (part.provenLive) delete app.owes;
      else app.owes = { sessionId: part.agent?.sessionId ?? '', part: { ...part, agentSource: app.key } };
    }
  }

  /** The proof in the new JVM of an app that came back (`away`: as it was), told as a cycle of its own when it owed classes. */
  private async proveBack(away: AwayApp, session: BuildSession, view: AgentView): Promise<void> {
    const { command, options, hooks, host } = this.setup;
    // Under the run lock, as a cycle: the proof writes the app's record. Refused or gone again: the next build proves it.
    const start = await beginCycle([session]);
    if (start.kind === 'refused') return;
    // What the other apps still owe in the agent sessions they run now: the proof here is no ✔ for it.
    const others = this.apps
      .all()
      .filter((o) => o.key !== session.location.source && o.owes !== undefined && o.owes.sessionId === o.session?.agent.sessionId)
      .map((o) => o.owes!.part);
    let proven;
    try {
      proven = start.lost.length > 0 ? undefined : await proveReturn(away, session, view, command, options, others);
    } finally {
      await start.releaseLock();
    }
    if (start.lost.length > 0) this.closed(session);
    if (proven === undefined || this.stopping) return;
    this.keepOwed(proven, session.location.source);
    const several = this.apps.size > 1;
    // A result of several apps names each already.
    const result = several && proven.agents === undefined ? { ...proven, ofAgent: session.location.source } : proven;
    const end = { at: host.clock.date(), heldBefore: false, returned: several ? session.location.source : 'the app' };
    hooks.onCycleEnd?.({ cycle: (this.count += 1), changed: [], result, end });
  }

  /**
   * Takes `session` into the view, with news of `how` it came (none at the start), and hands the
   * changes that waited for an agent to the scheduler.
   */
  private adopt(session: BuildSession, how?: 'agent-back' | 'new-app-session' | 'agent-found', restarted = false): void {
    if (this.stopping) {
      void closeSessions({ sessions: [session] });
      return;
    }
    const app = this.apps.take(session);
    if (this.apps.size > 1) this.several = true;
    session.connection.onClose(() => this.closed(session));
    const pid = Number(session.agent.pid);
    const known = Number.isSafeInteger(pid) ? { pid } : {};
    const at = this.setup.host.clock.date();
    if (how === 'agent-found') this.news({ kind: how, at, source: app.key, ...known });
    else if (how !== undefined) this.news({ kind: how, at, ...known, ...this.named(app), ...(restarted ? { restarted } : {}) });
    this.away = false;
    if (this.deferred.size > 0) {
      this.scheduler.notify([...this.deferred]);
      this.deferred.clear();
    }
  }

  /**
   * The agent of `session` went away (its connection closed, or DOCTOR showed another agent
   * session): its app is gone as of now, told now unless its app restarts for the running cycle.
   */
  private closed(session: BuildSession): void {
    const app = this.apps.of(session);
    if (this.stopping || app === undefined) return;
    this.apps.gone(app, this.setup.host.clock.date());
    if (app.restarting === true) return;
    this.news({ kind: 'agent-lost', at: app.awaySince!, ...this.named(app) });
    if (this.setup.options.exitOnAgentLoss) {
      this.endWith({ reason: 'agent-disconnected', port: session.agent.port, during: { kind: 'watch' } });
      return;
    }
    this.look();
  }

  /** Looks for gone agents and new ones with a growing pause, until none is gone and one is there. */
  private look(): void {
    if (this.looking || this.stopping) return;
    this.looking = true;
    const { first, max } = this.setup.options.reconnect ?? RECONNECT_MS;
    void (async () => {
      for (let pauseMs = first; ; pauseMs = Math.min(pauseMs * 2, max)) {
        if (!(await pause(pauseMs, this.stopper.signal))) return;
        await this.exclusive(async () => void (this.stopping || (await this.lookSafely())));
        if (this.stopping || (this.apps.size > 0 && this.apps.away().length === 0)) return;
      }
    })().finally(() => (this.looking = false));
  }

  /** The app named in news when the watch has several. */
  private named(app: App): { source?: string } {
    return this.several ? { source: app.key } : {};
  }

  private sessionHooks() {
    const { onEvent } = this.setup.hooks;
    return { ...(onEvent === undefined ? {} : { onEvent }), signal: this.stopper.signal };
  }

  /** A file watch's error: the watch goes on (hints.ts runs a full pass soon after one). */
  private watchFailed(error: Error): void {
    const code = (error as NodeJS.ErrnoException).code;
    this.emit({ type: 'warning', kind: 'watch-failed', problem: error.message, ...(code === undefined ? {} : { code }) });
  }

  private emit(event: RunEvent): void {
    this.setup.hooks.onEvent?.(event);
  }

  private news(news: WatchNews): void {
    this.setup.hooks.onNews?.(news);
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
  /** Pauses between looks for a gone agent (default apps.ts RECONNECT_MS). */
  reconnect?: { first: number; max: number };
}

/** What a watch tells as it goes, and who may stop it. */
export interface WatchHooks {
  /** The events of each cycle, as a single run emits them. */
  onEvent?: (event: RunEvent) => void;
  /** A cycle starts: its number, the source paths that changed, and when. */
  onCycleStart?: (start: { cycle: number; changed: readonly string[]; at: Date }) => void;
  /** A cycle ended: its whole result, and how it ended besides (report/watch-lines.ts makes its end line of both). */
  onCycleEnd?: (end: { cycle: number; changed: readonly string[]; result: RunResult; end: CycleEnd }) => void;
  /** News between cycles (the agent lost or back, the watch started), as facts. */
  onNews?: (news: WatchNews) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop (a running build is stopped and `failed` sent). */
  signal?: AbortSignal;
}
