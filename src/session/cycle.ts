/**
 * One build cycle on an open session: hold, build, finish, detect, verify; the first step that ends
 * the cycle returns its result. Watch mode runs many cycles on one session.
 */
import { findAppStart } from '../tool/proc.js';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { appClassDirs, jvmPathsOf, missingWatchedDirs } from '../classes/coverage.js';
import { askDoctor, askHeldCount, askReload, observeAgentAfterLoss } from '../agent/requests.js';
import {
  type BuildSession,
  type Cycle,
  type CycleOptions,
  DEFAULTS,
  end,
  failureOutcome,
  type Host,
  interrupted,
  runResult,
  saveAfterOk,
  type Session,
  type SessionHooks,
} from './options.js';
import { spawnBuild } from '../tool/build.js';
import { classSearchRoot, distinctDirs, findClassDirs, outermost } from '../classes/dirs.js';
import { baselineOf, steadyBefore } from '../classes/baseline.js';
import { sameBinaryNames } from '../classes/changes.js';
import { COARSE_CLOCK_MS, EVIDENCE } from '../classes/evidence.js';
import { ownerRecordOf, restoreSaved, saveHolding, saveReleased } from '../hold/owner.js';
import { type BuildHold, mayBeOurs } from '../hold/hold.js';
import { signalOf } from '../outcome/exit.js';
import type { AppStart, BuildRun, ReloadState } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import type { RunResult } from '../outcome/result.js';
import { readClassIndex, writeClassIndex } from '../state/store.js';
import type { BuildCommand } from '../tool/resolve.js';
import { readFailures } from './check.js';
import { type Before, checkChanges } from './detect.js';
import { tellWatcher, watcherBeforeOk } from './watcher-state.js';
import type { AgentConnection } from '../agent/connection.js';
import { pause } from '../util/wait.js';

/** How long a cycle waits for the capture its predecessor's ok scheduled, and how often it asks, in ms. */
const CAPTURE = { waitMs: 5000, pollMs: 100 } as const;
/** Binary names in two class output directories warned about before a build, at most. */
const MAX_SAME_NAMES = 5;

/** The cycle of `session` building `command`. */
export function cycleOf(
  session: BuildSession,
  command: BuildCommand,
  options: CycleOptions,
  startedMs: number,
  dirsFor?: Cycle['dirsFor'],
): Cycle {
  const record = ownerRecordOf(session.state, session.owner.owner, session.agent, session.location.portFile);
  const settled = { ...options, verifyTimeoutMs: options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs };
  return { session, command, options: settled, startedMs, record, ...(dirsFor === undefined ? {} : { dirsFor }) };
}

/** What the steps between the hold and the build found, for the steps after it. */
export interface Ready {
  found: Before;
  dirs: ClassDirs;
}

/**
 * The steps between the hold and the build: the class output directories, the app's start,
 * the baseline (saved when scanned), and what the agent had pending.
 * @throws StateError when the class index cannot be written.
 */
export async function beforeBuild(cycle: Cycle): Promise<Ready> {
  const { session, options } = cycle;
  const holdAtMs = session.host.clock.date().getTime();
  const heldBefore = recoversHold(session);
  const dirs = classDirsOf(cycle);
  const before = dirs.now();
  const appStart = await findAppStart(session.agent.pid, session.view.workingDirectory, session.host.proc);
  if (appStart.kind === 'unknown') session.emit({ type: 'warning', kind: 'app-start-unknown', why: appStart.why });
  const { baseline, scanned, unseen, whole } = await baselineFor(cycle, before, appStart, heldBefore);
  for (const same of sameBinaryNames(baseline, before).slice(0, MAX_SAME_NAMES))
    session.emit({ type: 'warning', kind: 'same-binary-name', className: same.className, paths: same.paths });
  // RELOAD status before every build: a pause is said now; what a single ask's not_observed can
  // mean depends on the agent's state before this build (evidence.ts).
  const state = await reloadStatus(session);
  if (state?.paused === true) session.emit({ type: 'warning', kind: 'paused', pending: state.pendingClasses });
  const quiet = baseline.evidence.includes(EVIDENCE.unknown) && options.verify !== false ? quietBefore(session, state) : undefined;
  const steady = steadyBefore(baseline);
  return { found: { baseline, dirs: before, scanned, unseen, whole, holdAtMs, heldBefore, quiet, appStart, steady }, dirs };
}

/** The agent still holds the build an earlier run with this owner left held (saved as held: a failed build): this cycle recovers it. */
function recoversHold(session: BuildSession): boolean {
  const saved = session.owner.saved;
  return session.doctor.buildHold === 'named' && saved?.held === true && saved.owner === session.owner.owner;
}

/** Interrupted between the receipt and the spawn: the build never starts, and the hold gets `failed`. */
export async function interruptedBeforeBuild(cycle: Cycle): Promise<RunResult> {
  await finish(cycle, 'failed');
  return interrupted(cycle, 'before-build');
}

/** The steps after the build: ok or failed and its receipt, then detect and verify. */
export async function afterBuild(cycle: Cycle, build: BuildRun, ready: Ready): Promise<RunResult> {
  // From before ok: a capture that fails says so once, maybe before the proof starts.
  const reads = readFailures(cycle.session.connection);
  cycle.readFailure = reads.cause;
  try {
    const { found, dirs } = ready;
    return (await finishBuild(cycle, build, ready)) ?? (await checkChanges(cycle, build, found, dirs.after(found.dirs), dirs.searchRoot));
  } finally {
    reads.stop();
  }
}

/**
 * A thrown error in a cycle (a state file, or a bug): a hold that may be ours gets `failed` (the
 * owner recovers it by running again), then the cycle ends with 69 for state files, else 70.
 */
export async function endWithError(cycle: Cycle, error: unknown): Promise<RunResult> {
  const hold = cycle.session.hold;
  const ours = mayBeOurs(hold.state);
  if (ours && !cycle.session.connection.closed && hold.state !== 'left') await finish(cycle, 'failed').catch(() => undefined);
  return end(cycle, failureOutcome(error, cycle.session.emit, ours ? hold.owner : undefined));
}

/**
 * Announces and saves the owner, lets a pending capture finish, and sends `started` until the hold is
 * ours; the refusal when it cannot. The agent's file watcher not running is said first: the build is
 * held all the same (see {@link watcherBeforeOk}).
 */
export async function takeHold(cycle: Cycle): Promise<Outcome | undefined> {
  const { session, record } = cycle;
  await tellWatcher(cycle);
  const { owner, hold } = session;
  cycle.holdBefore = hold.state === 'left' || hold.state === 'unknown' || session.doctor.buildHold !== 'none';
  session.emit({ type: 'hold', owner: owner.owner, ownerSource: owner.source, recovers: recoversHold(session) });
  // Saved before `started` is sent: a lost receipt may still have installed the hold.
  saveHolding(record, session.host.clock.date());
  // Our previous ok only scheduled the agent's capture: let it release the hold before
  // `started` (a newer started would cancel it).
  const capturePending =
    hold.state === 'released' || (hold.state === 'none' && session.doctor.buildHold === 'named' && owner.releasedBefore);
  if (capturePending) await awaitCaptureRelease(session);
  const waitMs = session.options.waitMs;
  const onBusy = (elapsedMs: number) => session.emit({ type: 'waiting', kind: 'hold', elapsedMs });
  const acquired = await hold.acquire({ waitMs, ...(session.signal === undefined ? {} : { signal: session.signal }), onBusy });
  switch (acquired.kind) {
    case 'acquired':
      return undefined;
    case 'interrupted-waiting':
    case 'busy':
      // Our started was rejected, so we took no hold: keep the token of a hold an earlier run may have left.
      restoreSaved(record, owner, session.host.clock.date());
      if (acquired.kind === 'interrupted-waiting')
        return { reason: 'interrupted', signal: signalOf(session.signal), at: 'waiting-for-hold' };
      return {
        reason: 'hold-busy',
        waitedMs: acquired.waitedMs,
        ...((await heldBy(session)) === 'legacy' ? { legacy: { port: record.port } } : {}),
      };
    case 'old-style':
      return { reason: 'old-agent', port: record.port, need: 'owned builds', evidence: 'unowned-receipt' };
    case 'lost': {
      const failure = acquired.failure;
      if (failure.kind === 'aborted')
        return { reason: 'interrupted', signal: signalOf(session.signal), at: 'started-receipt', holdOwner: owner.owner };
      const lost = { kind: 'build-started' as const, owner: owner.owner, detail: failure.message };
      return failure.kind === 'timeout'
        ? { reason: 'no-receipt', awaited: lost }
        : { reason: 'agent-disconnected', port: record.port, during: lost };
    }
  }
}

/**
 * Polls DOCTOR until the agent shows no named hold, within `CAPTURE` and --wait. A failure ends the
 * wait: the `started` that follows has its own receipt rules.
 */
async function awaitCaptureRelease(session: Session): Promise<void> {
  const clock = session.host.clock;
  const start = clock.now();
  const limit = Math.min(CAPTURE.waitMs, session.options.waitMs);
  while (clock.now() - start < limit) {
    try {
      // Asked first: an agent that applies at once has released the hold already (a watch's next cycle).
      const answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
      if (answer.kind !== 'observed' || answer.doctor.buildHold !== 'named') return;
      session.emit({ type: 'waiting', kind: 'capture', elapsedMs: Math.round(clock.now() - start) });
      await sleep(CAPTURE.pollMs, undefined, { signal: session.signal });
    } catch {
      return;
    }
  }
}

/** The class output directories of a cycle: found ones (now, and again after the build) and --classes-dir. */
export interface ClassDirs {
  now: () => string[];
  after: (before: string[]) => string[];
  searchRoot: string;
}

/**
 * This cycle's class output directories (filtered by `cycle.dirsFor`): found ones, --classes-dir, and
 * those the agent watches or its JVM's class path names here that hold class files ({@link agentClassDirs},
 * {@link classPathDirs}), so an unknown layout is still checked.
 * `tell`: warn of a missing or nested one, and tell the agent's (false: a watch's app whose agent is gone).
 */
export function classDirsOf(cycle: Pick<Cycle, 'session' | 'command' | 'dirsFor'> & { options: CycleOptions }, tell = true): ClassDirs {
  const { session, command, options } = cycle;
  const cwd = session.host.cwd;
  const projectDir = session.location.projectDir;
  const searchRoot = classSearchRoot(cwd, projectDir);
  const given = (options.classDirs ?? []).map((d) => path.resolve(cwd, d));
  for (const dir of given.filter((d) => tell && !fs.existsSync(d))) session.emit({ type: 'warning', kind: 'missing-classes-dir', dir });
  const found = () => {
    const known = [...findClassDirs(searchRoot, command.kind), ...given];
    const roots = [searchRoot, projectDir, session.checkout];
    const { fromAgent, fromClassPath } = appClassDirs(session.view, known, roots);
    if (tell) tellAgentDirs(session, fromAgent, fromClassPath);
    return [...known, ...fromAgent, ...fromClassPath];
  };
  const kept = (dirs: string[]) => {
    const { kept: result, dropped } = outermost(distinctDirs(dirs), given);
    for (const d of dropped.filter((x) => tell && !session.nestedWarned.has(x.dir))) {
      session.nestedWarned.add(d.dir);
      session.emit(
        d.kind === 'given-around-found'
          ? { type: 'warning', kind: 'given-around-found', outer: d.dir, inner: d.inner }
          : { type: 'warning', kind: 'nested', inner: d.dir, outer: d.outer },
      );
    }
    return cycle.dirsFor === undefined ? result : cycle.dirsFor(result);
  };
  return { now: () => kept(found()), after: (before) => kept([...before, ...found()]), searchRoot };
}

/**
 * The baseline (classes/baseline.ts), saved before the build when scanned or a folder's history broke.
 * `heldBefore`: the hold has been ours since the last run saved the record.
 */
async function baselineFor(cycle: Cycle, dirs: string[], appStart: AppStart, heldBefore: boolean): ReturnType<typeof baselineOf> {
  const { session } = cycle;
  const index = readClassIndex(session.state, (problem) => session.emit({ type: 'warning', kind: 'state-file', problem }));
  const found = await baselineOf(index, dirs, session.agent.sessionId, appStart, jvmPathsOf(session.view, session.checkout), heldBefore);
  if (found.save) writeClassIndex(session.state, found.baseline);
  return found;
}

/**
 * Once per session, when there is news: the class output directories taken from the agent and from
 * its JVM's class path, and its watched directories not here.
 */
function tellAgentDirs(session: BuildSession, fromAgent: string[], fromClassPath: string[]): void {
  if (session.agentDirsTold === true) return;
  const missing = missingWatchedDirs(session.view);
  if (fromAgent.length + fromClassPath.length + missing.length === 0) return;
  session.agentDirsTold = true;
  session.emit({ type: 'agent-dirs', fromAgent, fromClassPath, missing });
}

/** Sends ok/failed and reports it as a `finish` event. */
export async function finish(cycle: Cycle, state: 'ok' | 'failed') {
  const { session } = cycle;
  // After an interrupt the receipt is still awaited, bounded, without the aborted signal.
  const signal = session.signal?.aborted === true ? undefined : session.signal;
  const sent = !session.connection.closed;
  const reply = await session.hold.finish(state, signal);
  if (sent) session.emit({ type: 'finish', state, acknowledged: reply === 'ack' });
  return reply;
}

/**
 * After the build: `failed` for an interrupt, `not-safe` when the agent went away, else ok or
 * failed by the exit status and its receipt.
 * @returns the result when the cycle ends here; undefined when the build succeeded and ok was acknowledged.
 */
async function finishBuild(cycle: Cycle, build: BuildRun, ready: Ready): Promise<RunResult | undefined> {
  const { session, record } = cycle;
  const hold: BuildHold = session.hold;
  // A signal that lands after the child ended still means "not ok": never send ok after an interrupt.
  if (build.interruptedBy !== undefined || session.signal?.aborted) {
    await finish(cycle, 'failed');
    return interrupted(cycle, 'build', { build });
  }
  if (session.connection.closed) {
    await hold.finish('failed');
    const found = await observeAgentAfterLoss(record.port, record.sessionId, session.timeoutMs);
    return end(cycle, { reason: 'not-safe', owner: hold.owner, what: { kind: 'lost-during-build', found } }, { build });
  }
  const succeeded = build.exitCode === 0;
  if (succeeded) {
    const waited = await watcherBeforeOk(cycle, build);
    if (waited === 'interrupted') {
      await finish(cycle, 'failed');
      return interrupted(cycle, 'watcher', { build });
    }
    if (waited !== undefined) return waited;
  }
  // No hold before this one, and the agent holds nothing: BUILD ok releases it and captures nothing (below);
  // only a running watcher captures, so a failed build keeps its hold otherwise.
  const { heldBefore, dirs, holdAtMs } = ready.found;
  const fresh = cycle.holdBefore === false && !heldBefore && session.doctor.watcherState === 'watching';
  if (!succeeded && fresh && (await nothingToHold(session, ready.dirs.after(dirs), dirs, holdAtMs))) return releaseUnwritten(cycle, build);
  const reply = await finish(cycle, succeeded ? 'ok' : 'failed');
  if (reply === 'ack' && succeeded) saveAfterOk(session, () => saveReleased(record, session.host.clock.date()));
  if (reply === 'aborted') return interrupted(cycle, succeeded ? 'ok-receipt' : 'failed-receipt', { build });
  if (reply !== 'ack') {
    // Never leave a lost ok standing: `failed` (fresh request token) cancels a capture it may have scheduled.
    if (succeeded && !session.connection.closed)
      session.emit({ type: 'finish', state: 'failed', acknowledged: (await hold.cancelLostOk()) === 'ack' });
    const found = session.connection.closed ? await observeAgentAfterLoss(record.port, record.sessionId, session.timeoutMs) : undefined;
    const what = { kind: 'finish' as const, succeeded, receipt: reply, ...(found === undefined ? {} : { found }) };
    return end(cycle, { reason: 'not-safe', owner: hold.owner, what }, { build });
  }
  if (!succeeded) return end(cycle, { reason: 'build-failed', status: build.exitCode, owner: hold.owner }, { build });
  return undefined;
}

/** Releases the hold of a failed build that wrote nothing with `ok`; kept (as for any failed build) when that receipt does not come. */
async function releaseUnwritten(cycle: Cycle, build: BuildRun): Promise<RunResult> {
  const { session, record } = cycle;
  const reply = await finish(cycle, 'ok');
  if (reply === 'ack') {
    saveAfterOk(session, () => saveReleased(record, session.host.clock.date()));
    return end(cycle, { reason: 'build-failed', status: build.exitCode, released: true }, { build });
  }
  if (!session.connection.closed)
    session.emit({ type: 'finish', state: 'failed', acknowledged: (await session.hold.cancelLostOk()) === 'ack' });
  return end(cycle, { reason: 'build-failed', status: build.exitCode, owner: session.hold.owner }, { build });
}

/** RELOAD status before the build, with when it was asked (epoch ms); undefined when no receipt came. */
async function reloadStatus(session: BuildSession): Promise<(ReloadState & { atMs: number }) | undefined> {
  const atMs = session.host.clock.date().getTime();
  try {
    return { ...(await askReload(session.connection, 'status', session.timeoutMs, session.signal)), atMs };
  } catch {
    return undefined;
  }
}

/**
 * Nothing pending at RELOAD status and no hold before this run's (DOCTOR at connect): the agent's view
 * of the disk was its admitted state. Else undefined, and a single ask's not_observed proves nothing.
 */
function quietBefore(session: BuildSession, state: (ReloadState & { atMs: number }) | undefined): { atMs: number } | undefined {
  if (session.doctor.buildHold !== 'none' || state === undefined) return undefined;
  return state.pendingClasses === 0 && state.pendingActions === 0 ? { atMs: state.atMs } : undefined;
}

/** The kind of the build hold the agent has now (RELOAD status), or undefined when no receipt came. */
async function heldBy(session: BuildSession): Promise<ReloadState['buildHold'] | undefined> {
  return (await reloadStatus(session))?.buildHold;
}

/**
 * How long after the hold the agent has dispatched every file event from before it, in ms: once its
 * oldest is `max(1000, debounceMs)` old, polled every 100 ms (agent-facts.md "Debounce and batching").
 */
const AGENT_DISPATCH_MS = 1100;

/**
 * Whether nothing below `dirs` was added, removed or changed since `sinceMs` (epoch ms): no ctime that
 * late (an entry added or removed moves its folder's), and every one of `dirsBefore` is still there.
 * An unreadable folder counts as written.
 */
async function wroteNothingSince(dirs: readonly string[], dirsBefore: readonly string[], sinceMs: number): Promise<boolean> {
  const cut = sinceMs - COARSE_CLOCK_MS;
  const pending = [...new Set([...dirs, ...dirsBefore])];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    try {
      if ((await fs.promises.lstat(dir)).ctimeMs >= cut) return false;
      for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) pending.push(file);
        else if ((await fs.promises.lstat(file)).ctimeMs >= cut) return false;
      }
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * How many class files the agent holds (askHeldCount), read once its watcher dispatched what came
 * before the hold; undefined when not known (no holding line, no marker, or interrupted).
 */
async function heldClassFiles(
  connection: AgentConnection,
  holdAtMs: number,
  nowMs: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const wait = holdAtMs + AGENT_DISPATCH_MS - nowMs;
  if (wait > 0 && !(await pause(wait, signal))) return undefined;
  return askHeldCount(connection, timeoutMs, signal);
}

/**
 * Whether `BUILD ok` may release the hold of a failed build (Maven's "there is no POM in this
 * directory", an unknown option), capturing nothing: left held, every reload, the IDE's too, waits for
 * the next good build. True when nothing below `dirs` (`dirsBefore`: before the build) was written since
 * `holdAtMs` (epoch ms) and the agent holds no class file; the folders are looked at again after that
 * (a slow build's last child, or the IDE, may write meanwhile).
 */
async function nothingToHold(session: Session, dirs: readonly string[], dirsBefore: readonly string[], holdAtMs: number): Promise<boolean> {
  if (session.signal?.aborted || !(await wroteNothingSince(dirs, dirsBefore, holdAtMs))) return false;
  const now = session.host.clock.date().getTime();
  const held = await heldClassFiles(session.connection, holdAtMs, now, session.timeoutMs, session.signal);
  return held === 0 && (await wroteNothingSince(dirs, dirsBefore, holdAtMs));
}

/** What a build without an agent (`--allow-no-agent`) needs; `why` is the no-agent refusal, said in a warning. */
export interface NoAgentRun {
  host: Host;
  hooks: SessionHooks;
  command: BuildCommand;
  options: CycleOptions;
  why: Outcome;
  startedMs: number;
}

/** Runs the build without a hold, with no agent found (`--allow-no-agent`); its result says nothing is proven live. */
export async function noAgentBuild(run: NoAgentRun): Promise<RunResult> {
  const { host, hooks, command, options } = run;
  const emit = hooks.onEvent ?? (() => undefined);
  emit({ type: 'warning', kind: 'no-agent', why: run.why });
  const dirs = [...new Set([...findClassDirs(host.cwd, command.kind), ...(options.classDirs ?? [])])];
  const build = await spawnBuild({ host, emit, signal: hooks.signal }, command, options, dirs, false);
  const context = { command, startedMs: run.startedMs, now: () => host.clock.now() };
  if (build.interruptedBy !== undefined)
    return runResult(context, { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'build' }, { build });
  const outcome: Outcome = build.exitCode === 0 ? { reason: 'no-agent-build' } : { reason: 'build-failed', status: build.exitCode };
  return runResult(context, outcome, { build });
}
