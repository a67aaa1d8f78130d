/**
 * A build cycle over the sessions of one run, one per agent of the checkout: every hold in order, the
 * build once, every finish, then each agent verifies the class output directories it watches. A watch's
 * app whose agent is gone has its part too (session/away.ts). When only a restart is missing,
 * {@link restartIfNeeded} restarts the app and proves the change in the new JVM; {@link proveReturn}
 * proves it the same way in a watch's app that came back.
 */
import { restartRequiredBy } from '../agent/reports.js';
import { type AgentView, jvmPathsOf, runsFrom, watchCoverage } from '../classes/coverage.js';
import { jarRunOf } from '../classes/jar-run.js';
import { saveReleased } from '../hold/owner.js';
import { signalOf } from '../outcome/exit.js';
import { LIVE_VERDICTS, type ClassVerdict } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import { type Outcome, type RestartFailure, unprovenWhileDetached } from '../outcome/outcome.js';
import { buildRunResult, type AgentRunResult, type RunResult } from '../outcome/result.js';
import { findAppStart } from '../tool/proc.js';
import type { BuildCommand } from '../tool/resolve.js';
import { afterBuild, beforeBuild, cycleOf, endWithError, finish, interruptedBeforeBuild, type Ready, takeHold } from './cycle.js';
import { proveInNewJvm } from './proof.js';
import type { AwayApp } from './away.js';
import {
  type BuildSession,
  closeSession,
  combineResults,
  type Cycle,
  type CycleOptions,
  DEFAULTS,
  end,
  saveAfterOk,
  type Session,
} from './options.js';
import { spawnBuild } from '../tool/build.js';
import { checkClassIndexWritable } from '../state/store.js';
import type { Back, RestartRun } from './restart.js';

/** Open sessions of one run, in the order their holds are taken, and where the run's own events go. */
export interface SessionGroup<S extends Session = Session> {
  sessions: S[];
  /** Events of the run itself (the build), not of one agent. */
  emit: (event: RunEvent) => void;
  /** Watch mode: the apps whose agent is gone, each with its part in a cycle (session/away.ts). */
  away?: readonly AwayApp[];
}

/**
 * Runs one cycle on `session`: {@link runCycles} with one session. Never throws.
 */
export function runCycle(
  session: BuildSession,
  command: BuildCommand,
  options: CycleOptions,
  startedMs = session.host.clock.now(),
): Promise<RunResult> {
  return runCycles({ sessions: [session], emit: session.emit }, command, options, startedMs);
}

/**
 * Runs one cycle over every session of `group`; with one session, its result names no agent. Never
 * throws: an error ends every cycle as {@link endWithError} does.
 */
export async function runCycles(
  group: SessionGroup<BuildSession>,
  command: BuildCommand,
  options: CycleOptions,
  startedMs = group.sessions[0]!.host.clock.now(),
): Promise<RunResult> {
  const { sessions } = group;
  const away = group.away ?? [];
  const views = [...sessions, ...away.map((a) => a.session)].map((s) => s.view);
  const cycles = sessions.map((s) => cycleOf(s, command, options, startedMs, (dirs) => dirsFor(s, views, dirs)));
  if (views.length > 1) for (const session of sessions) tellClassPathUnknown(session);
  const combine = (results: RunResult[], gone: AgentRunResult[] = []) =>
    results.length === 1 && gone.length === 0 ? results[0]! : combineAll(cycles, results, gone);
  const held: Cycle[] = [];
  try {
    // Before any hold: a class index that cannot be saved would end the run holding output nothing was built into.
    for (const cycle of cycles) checkClassIndexWritable(cycle.session.state);
    for (const cycle of cycles) {
      const refused = await takeHold(cycle);
      if (refused !== undefined) {
        await giveBack(held);
        if (sessions.length === 1) return end(cycle, refused);
        const sources = sessions.map((s) => s.location.source);
        return { ...end(cycle, refused), among: { source: cycle.session.location.source, sources } };
      }
      held.push(cycle);
    }
    const readies: Ready[] = [];
    for (const cycle of cycles) readies.push(await beforeBuild(cycle));
    if (sessions[0]!.signal?.aborted) return combine(await Promise.all(cycles.map(interruptedBeforeBuild)));
    const dirs = [...new Set(readies.flatMap((r) => r.found.dirs))];
    const first = sessions[0]!;
    const build = await spawnBuild(
      { host: first.host, emit: group.emit, signal: first.signal, recordBuild: first.recordBuild },
      command,
      options,
      dirs,
      true,
    );
    const results = await Promise.all(cycles.map((cycle, i) => afterBuild(cycle, build, readies[i]!)));
    // The apps whose agent is gone are a watch's (session/away.ts, loaded only then), never a build's.
    const gone = away.length === 0 ? [] : await (await import('./away.js')).awayParts(away, command, options, startedMs);
    return combine(results, gone);
  } catch (error) {
    return combine(await Promise.all(cycles.map((cycle) => endWithError(cycle, error))));
  }
}

/** Closes every session and releases the run lock. Safe to call twice. */
export async function closeSessions(group: Pick<SessionGroup, 'sessions'>): Promise<void> {
  for (const session of group.sessions) await closeSession(session);
}

/**
 * Of `dirs`, those `session`'s agent checks: the ones its app runs (coverage.ts `runsFrom`: it watches or may watch them,
 * or they are on its JVM's class path though unwatched: its app runs their old code, whatever another agent
 * proves there), and the ones no agent of `views` (the apps in view, a gone one's too) watches (each
 * names them not watched).
 */
function dirsFor(session: BuildSession, views: readonly AgentView[], dirs: string[]): string[] {
  return dirs.filter((dir) => runsFrom(session.view, dir) || views.every((v) => watchCoverage([dir], v)[0]!.watched === false));
}

/**
 * Once per session among several apps: its JVM's class path cannot be read here (its process is not
 * visible: a container, another host, another user's), so what its app loads is taken to be what its
 * agent watches ({@link dirsFor}), and a folder it loads without watching is not caught.
 */
function tellClassPathUnknown(session: BuildSession): void {
  if (session.view.classPath.length > 0 || session.classPathTold === true) return;
  session.classPathTold = true;
  session.emit({ type: 'warning', kind: 'class-path-unknown' });
}

/**
 * A later agent's hold could not be had: fresh holds get `ok` (nothing was built); a hold recovered
 * from an earlier failed build stays with its owner, never `ok` (its output never compiled).
 */
async function giveBack(held: Cycle[]): Promise<void> {
  for (const cycle of held) {
    const { session, record } = cycle;
    const source = session.location.source;
    if (session.doctor.buildHold === 'named' && !session.owner.releasedBefore) {
      session.emit({ type: 'warning', kind: 'hold-kept', source, owner: record.owner });
      continue;
    }
    const reply = await finish(cycle, 'ok');
    if (reply === 'ack') saveAfterOk(session, () => saveReleased(record, session.host.clock.date()));
    session.emit(
      reply === 'ack'
        ? { type: 'warning', kind: 'hold-returned', source }
        : { type: 'warning', kind: 'hold-not-returned', source, owner: record.owner },
    );
  }
}

/** The results of `cycles`, then the parts of the apps whose agent is gone (`gone`), as one result. */
function combineAll(cycles: Cycle[], results: RunResult[], gone: AgentRunResult[]): RunResult {
  const first = cycles[0]!;
  return combineResults(
    [...results.map((result, i) => ({ ...result, agentSource: cycles[i]!.session.location.source })), ...gone],
    first.session.host.clock.now() - first.startedMs,
  );
}

/* The restart for a change that needs one (`--restart-command`, `--await-restart`): nothing is held across it, it comes after `ok` was acknowledged. */

/** What a run restarts the app with, and how long it waits for it. Times in ms. */
export interface RestartOptions {
  /** A shell command that restarts the app (`systemctl --user restart shop`). */
  restartCommand?: string;
  /** Without a command: wait for the user to restart the app. */
  awaitRestart?: boolean;
  /** How long to wait for the app's agent to come back with a new agent session (default 120000). */
  restartTimeoutMs?: number;
  /** One deadline for the VERIFY polling after the restart (default 30000). */
  verifyTimeoutMs?: number;
}

/** What a restart is given besides the cycle's result. */
export interface RestartPlace {
  group: SessionGroup<BuildSession>;
  options: RestartOptions;
  /** Watch mode: true once a new save arrived, which ends the wait (the cycle starts over). */
  superseded?: () => boolean;
  /**
   * Watch mode: each app's classes an earlier restart could not prove there (its agent's source and
   * the binary name): that app is never restarted again for them (added to here).
   */
  notAgain?: Set<string>;
  /** Watch mode: told the sessions whose app is about to restart, just before (their connections close by design). */
  restarting?: (sessions: readonly BuildSession[]) => void;
  /**
   * Watch mode: the restart command whose wait a save ended while it still ran, kept here; the next
   * restart waits for it rather than start a second one beside it (two new apps, its log emptied under it).
   */
  carried?: { run?: RestartRun | undefined };
}

/** One agent's own result in a run's. */
type PartResult = Omit<RunResult, 'agents'>;

/** One agent's part of the cycle's result, and its session. */
interface Part {
  session: BuildSession;
  result: PartResult;
  /** The classes its app needs a restart for. */
  needs: ClassVerdict[];
  /** A watch's app that came back after its agent was gone (not a restart the run asked for). */
  appBack?: true;
}

/**
 * `result`, or, when only classes that need a restart are unproven and a restart is asked for, the
 * result of restarting the apps that need it and proving the change in each new JVM. Each app is
 * its own part: one that came back is proven in its new JVM, one that did not ends with its own
 * failure, naming its own old JVM; one app's restart proves nothing of another's. Never throws for
 * the command's or the agent's behaviour.
 */
export async function restartIfNeeded(result: RunResult, place: RestartPlace): Promise<RunResult> {
  const { options, group } = place;
  if (options.restartCommand === undefined && options.awaitRestart !== true) return result;
  const parts = partsOf(result, group.sessions);
  if (parts === undefined) return result;
  const { host, signal } = group.sessions[0]!;
  const startedMs = host.clock.now();
  const needing = parts.filter((p) => p.needs.length > 0);
  const notAgain = place.notAgain;
  const restarting = needing.filter((p) => notAgain === undefined || p.needs.some((v) => !notAgain.has(notAgainKey(p, v))));
  // An app an earlier restart could not prove is not restarted again for the same classes.
  const settled = new Map(
    needing
      .filter((p) => !restarting.includes(p))
      .map((p) => [p, resultOf(p, { kind: 'not-again', classes: p.needs.length }, p.result.verdicts)]),
  );
  const resultsOf = (own: (p: Part) => PartResult | undefined) =>
    whole(
      parts,
      parts.map((p) => settled.get(p) ?? own(p) ?? p.result),
      startedMs,
    );
  if (restarting.length === 0) return resultsOf(() => undefined);
  const giveUp = (p: Part, r: PartResult) => {
    if (!r.provenLive) for (const v of p.needs) notAgain?.add(notAgainKey(p, v));
    return r;
  };
  const timeoutMs = options.restartTimeoutMs ?? DEFAULTS.restartTimeoutMs;
  const command = options.restartCommand ?? null;
  const first = group.sessions[0]!;
  // Loaded only for a restart: a build that needs none never reads it.
  const { awaitNewSession, notBackFailure, restartLogOf, sayIfPortFileLost, startRestart } = await import('./restart.js');
  const log = command === null ? null : restartLogOf(first);
  place.restarting?.(restarting.map((p) => p.session));
  // A class several apps need a restart for is one class.
  const classes = [...new Set(restarting.flatMap((p) => p.needs.map((v) => v.className)))];
  group.emit({ type: 'restart-needed', classes, command, log, timeoutMs });
  let run = takeEarlier(place.carried);
  try {
    if (command !== null) run ??= startRestart(command, first, group.emit);
  } catch (error) {
    const failure: RestartFailure = { kind: 'not-started', command: command!, why: (error as Error).message };
    return resultsOf((p) => (restarting.includes(p) ? giveUp(p, resultOf(p, failure, p.result.verdicts)) : undefined));
  }
  const deadline = startedMs + timeoutMs;
  const backs = await Promise.all(restarting.map((p) => awaitNewSession(p.session, deadline, place.superseded, run)));
  try {
    if (backs.some((b) => b === 'interrupted')) return interrupted(parts, startedMs, signal);
    if (backs.some((b) => b === 'superseded')) {
      // Still running, it is the next restart's to wait for (its output still shown): not left, not started again.
      if (place.carried !== undefined && run?.started.exit() === undefined) place.carried.run = run;
      return result;
    }
    run?.stopShowing();
    if (run !== undefined) run.appBack = backs.every((b) => typeof b === 'object');
    const ends = { timeoutMs, command, log, run };
    const own = await Promise.all(
      restarting.map(async (p, i) => {
        const back = backs[i]!;
        if (typeof back !== 'object') return giveUp(p, resultOf(p, await notBackFailure(p.session, back, ends), p.result.verdicts));
        const kept = p.result.verdicts.filter((v) => mayRestart(v, p.needs));
        const proven = await proveAfterRestart(p, back, options, kept);
        sayIfPortFileLost(p.session, back);
        return giveUp(p, proven);
      }),
    );
    return resultsOf((p) => own[restarting.indexOf(p)]);
  } finally {
    if (run !== place.carried?.run) run?.leave();
    for (const back of backs) if (typeof back === 'object') back.connection.close();
  }
}

/** The restart command kept in `carried` while it still runs, marked `earlier`; else undefined (one that ended is left). Empties `carried`. */
function takeEarlier(carried: RestartPlace['carried']): RestartRun | undefined {
  const run = carried?.run;
  if (carried !== undefined) carried.run = undefined;
  if (run === undefined) return undefined;
  if (run.started.exit() === undefined) return Object.assign(run, { earlier: true as const });
  run.leave();
  return undefined;
}

/** The key of `verdict`'s class in `part`'s app for {@link RestartPlace.notAgain}: the app (where its agent was found) and the binary name. */
function notAgainKey(part: Part, verdict: ClassVerdict): string {
  return `${part.session.location.source}\u0000${verdict.className}`;
}

/**
 * The parts of `result`, one per agent, when every class not live is one that needs a restart
 * and at least one does (never for a failed build, a class not watched, a timeout); else undefined.
 */
function partsOf(result: RunResult, sessions: BuildSession[]): Part[] | undefined {
  const { agents, ...one } = result;
  const own: AgentRunResult[] = agents ?? [{ ...one, agentSource: sessions[0]!.location.source }];
  const parts: Part[] = [];
  for (const r of own) {
    const session = sessions.find((s) => s.location.source === r.agentSource);
    if (session === undefined) return undefined;
    const needs = r.verdicts.filter((v) => v.status === 'restart-required');
    const restartOnly =
      r.outcome.reason === 'verify-incomplete' &&
      r.outcome.shortfall.kind === 'restart-required' &&
      r.verdicts.every((v) => mayRestart(v, needs));
    if (!r.provenLive && !restartOnly) return undefined;
    parts.push({ session, result: r, needs: restartOnly ? needs : [] });
  }
  return parts.some((p) => p.needs.length > 0) ? parts : undefined;
}

/**
 * True when a restart may make `verdict` live: it is live already, needs a restart itself, or
 * is `unverified` only because the agent's restart note about one of `needs` came in its batch
 * (protocol.md "VERIFY": a WARN in a batch makes every class in it `unverified`).
 */
function mayRestart(verdict: ClassVerdict, needs: readonly ClassVerdict[]): boolean {
  if (LIVE_VERDICTS.has(verdict.status) || verdict.status === 'restart-required') return true;
  return verdict.status === 'unverified' && needs.some((n) => restartRequiredBy(verdict.agentDetail ?? '', n.className));
}

/**
 * Proves `part`'s class files `kept` (after a restart: live before it and those that needed it) and
 * its new ones in the new JVM by the evidence rule, kind `restart` (proof.ts `proveInNewJvm`).
 */
async function proveAfterRestart(part: Part, back: Back, options: RestartOptions, kept: readonly ClassVerdict[]): Promise<PartResult> {
  const { session } = part;
  const { view } = back;
  const appStart = await findAppStart(back.doctor.pid, view.workingDirectory, session.host.proc);
  const sessionId = back.doctor.sessionId;
  const agent = { ...part.result.agent!, sessionId, pid: back.doctor.pid, port: back.connection.port };
  const facts = { restart: { sessionId } };
  if (appStart.kind === 'unknown')
    return resultOf(part, { kind: 'not-provable', sessionId, why: appStart.why }, part.result.verdicts, { agent, ...facts });
  // The new classes too, as verdicts: the old JVM's DIAGNOSE ("not loaded") says nothing of the new one.
  const { verdicts, added } = await proveInNewJvm({
    connection: back.connection,
    sessionId,
    start: appStart,
    paths: jvmPathsOf(view, session.checkout),
    kept,
    added: part.result.changes?.added ?? [],
    timeoutMs: options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
    ...(session.signal === undefined ? {} : { signal: session.signal }),
  });
  const changes = part.result.changes === undefined ? {} : { changes: { ...part.result.changes, added } };
  const result = { ...part.result, ...changes };
  if (verdicts.some((v) => v.status === 'interrupted')) return { ...interruptedResult(result, session.signal), verdicts, agent, ...facts };
  const notLive = verdicts.filter((v) => !LIVE_VERDICTS.has(v.status)).length;
  if (notLive > 0) {
    const unproven = verdicts.filter((v) => !LIVE_VERDICTS.has(v.status)).map((v) => v.path);
    const jarRun = jarRunOf(
      jvmPathsOf(view, session.checkout),
      unproven,
      view.watched.map((w) => w.local),
    );
    const failure = { kind: 'not-proven' as const, sessionId, classes: notLive, ...(jarRun === undefined ? {} : { jarRun }) };
    return resultOf({ ...part, result }, failure, verdicts, { agent, ...facts });
  }
  const preStart = verdicts.filter((v) => v.evidence?.of === 'pre-start').length;
  const outcome: Outcome = {
    reason: 'ok',
    proof: { kind: 'restarted', classes: verdicts.length, preStart, sessionId, at: back.at.toISOString() },
  };
  return { ...rebuilt(result, outcome, verdicts), agent, ...facts };
}

/** The part's result with `outcome` and `verdicts`, its other facts kept. */
function rebuilt(result: PartResult, outcome: Outcome, verdicts: ClassVerdict[]): PartResult {
  const { outcome: _o, reason: _r, exitCode: _e, provenLive: _p, durationMs, verdicts: _v, ...facts } = result;
  const shown = unprovenWhileDetached(outcome, facts.build);
  return buildRunResult(shown, { ...facts, verdicts }, durationMs);
}

/** The part's result when its restart ended with `failure`: 75. */
function resultOf(part: Part, failure: RestartFailure, verdicts: ClassVerdict[], extra: Partial<RunResult> = {}): PartResult {
  const old = part.result.outcome;
  const counts = old.reason === 'verify-incomplete' ? { applied: old.applied, total: old.total } : { applied: 0, total: verdicts.length };
  const shortfall = {
    kind: 'restart' as const,
    classes: part.needs.length,
    failure,
    ...(part.appBack === true ? { appBack: true as const } : {}),
  };
  const outcome: Outcome = { reason: 'verify-incomplete', ...counts, shortfall };
  return { ...rebuilt(part.result, outcome, verdicts), ...extra };
}

function interruptedResult(result: PartResult, signal: AbortSignal | undefined): PartResult {
  return rebuilt(result, { reason: 'interrupted', signal: signalOf(signal), at: 'restart' }, result.verdicts);
}

function interrupted(parts: Part[], startedMs: number, signal: AbortSignal | undefined): RunResult {
  const results = parts.map((p) => interruptedResult(p.result, signal));
  return whole(parts, results, startedMs);
}

/** The run's result of the parts' `results`: one agent's own, or several combined; the restart's time added. */
function whole(parts: Part[], results: PartResult[], startedMs: number): RunResult {
  const host = parts[0]!.session.host;
  const took = host.clock.now() - startedMs;
  const timed = results.map((r) => ({ ...r, durationMs: r.durationMs + Math.round(took) }));
  if (parts.length === 1) return timed[0]!;
  return combineResults(
    timed.map((r, i) => ({ ...r, agentSource: parts[i]!.session.location.source })),
    Math.max(...timed.map((r) => r.durationMs)),
  );
}

/**
 * A watch's app (`away`) back in a new agent session (`session`, opened at its port file; `view`: its
 * agent is the app's, session/options.ts `sameAppView`): the classes it owes (session/away.ts) proven
 * in the new JVM as after a restart ({@link proveAfterRestart}, kind `restart`). One app's new JVM
 * proves nothing of another's: each of `others` (the other apps' parts of their last cycle, in the
 * agent sessions they run now) that left one of those classes not proven joins the result, which is
 * then no ✔. Undefined when it owes none. Never throws for the agent's behaviour.
 */
export async function proveReturn(
  away: AwayApp,
  session: BuildSession,
  view: AgentView,
  command: BuildCommand,
  options: CycleOptions & RestartOptions,
  others: readonly AgentRunResult[] = [],
): Promise<RunResult | undefined> {
  const { host } = session;
  const startedMs = host.clock.now();
  const { awayPart, dirsRunBy, owedBy } = await import('./away.js');
  const owed = await owedBy(away, dirsRunBy(session, command, options));
  const result = awayPart(away, owed, command, startedMs);
  if (result === undefined) return undefined;
  const back: Back = { connection: session.connection, doctor: session.doctor, view, at: host.clock.date(), portFileLost: false };
  const proven = await proveAfterRestart({ session, result, needs: owed, appBack: true }, back, options, owed);
  const own = { ...proven, durationMs: Math.max(0, Math.round(host.clock.now() - startedMs)) };
  const names = new Set(owed.map((v) => v.className));
  const owing = others.filter((o) => o.verdicts.some((v) => names.has(v.className) && !LIVE_VERDICTS.has(v.status)));
  return owing.length === 0 ? own : combineResults([{ ...own, agentSource: session.location.source }, ...owing], own.durationMs);
}
