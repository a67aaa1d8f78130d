/**
 * A build cycle over several sessions, one per agent of the checkout (several services run
 * from one checkout, each with its agent): every hold, in the sessions' order; the build once;
 * every finish; then each agent verifies the changed classes of the directories it watches.
 * With one session it is {@link runCycle}. Watch mode runs many such cycles on the same
 * sessions: open them with `openSessions` (open.ts), run `runCycles`, end with {@link closeSessions}.
 */
import { onClassPath, watchCoverage } from '../classes/coverage.js';
import type { RunEvent } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import type { BuildCommand } from '../tool/resolve.js';
import {
  type BuildSession,
  closeSession,
  combineResults,
  type Cycle,
  type CycleOptions,
  end,
  findAppStart,
  type Host,
  refusedAmong,
  runResult,
  saveAfterOk,
  type Session,
  type SessionHooks,
  spawnBuild,
} from './options.js';
import { withSmallYoungGeneration } from '../util/memory.js';
import { afterBuild, beforeBuild, cycleOf, endWithError, finish, interruptedBeforeBuild, type Ready, takeHold } from './cycle.js';
import { rereadOwner, saveReleased } from '../hold/owner.js';
import { AgentConnectionError } from '../agent/connection.js';
import { askDoctor } from '../agent/requests.js';
import { signalOf } from '../outcome/exit.js';
import type { Outcome } from '../outcome/outcome.js';
import { processStopped } from '../tool/proc.js';
import { lockCheckout } from './open.js';
import { findClassDirs } from '../classes/dirs.js';
import { describeOutcome } from '../report/words.js';

/** Open sessions of one run, in the order their holds are taken, and where the run's own events go. */
export interface SessionGroup<S extends Session = Session> {
  sessions: S[];
  /** Events of the run itself (the build), not of one agent. */
  emit: (event: RunEvent) => void;
}

/**
 * Runs one cycle on `session`: {@link runCycles} with one session. From the class index's read to
 * the cycle's end, the young generation is kept at its size (util/memory.ts). Never throws.
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
 * Runs one cycle over every session of `group`. Never throws: a thrown error (a state file
 * that cannot be written, a bug) ends every cycle as {@link endWithError} does. With one session
 * its result is that session's, in words that name no agent.
 */
export async function runCycles(
  group: SessionGroup<BuildSession>,
  command: BuildCommand,
  options: CycleOptions,
  startedMs = group.sessions[0]!.host.clock.now(),
): Promise<RunResult> {
  const { sessions } = group;
  const cycles = sessions.map((s) => cycleOf(s, command, options, startedMs, (dirs) => dirsFor(s, sessions, dirs)));
  const combine = (results: RunResult[]) => (results.length === 1 ? results[0]! : combineAll(cycles, results));
  const held: Cycle[] = [];
  try {
    for (const cycle of cycles) {
      const refused = await takeHold(cycle);
      if (refused !== undefined) {
        await giveBack(held);
        if (sessions.length === 1) return end(cycle, refused);
        const sources = sessions.map((s) => s.location.source);
        return refusedAmong(end(cycle, refused), cycle.session.location.source, sources);
      }
      held.push(cycle);
    }
    // The young generation kept at its size from the class indexes' read on.
    return await withSmallYoungGeneration(async () => {
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
        cycles.some((cycle) => cycle.unheld !== true),
      );
      return combine(await Promise.all(cycles.map((cycle, i) => afterBuild(cycle, build, readies[i]!))));
    });
  } catch (error) {
    return combine(await Promise.all(cycles.map((cycle) => endWithError(cycle, error))));
  }
}

/** Closes every session and releases the run lock. Safe to call twice. */
export async function closeSessions(group: Pick<SessionGroup, 'sessions'>): Promise<void> {
  for (const session of group.sessions) await closeSession(session);
}

/**
 * Of the class output directories `dirs`, those `session`'s agent checks: the ones it watches
 * (or may watch: its sample is incomplete), the ones its app loads classes from (its JVM's class
 * path) though it does not watch them (its app runs their old code: it names them as not
 * watched, whatever another app's agent proves there), and the ones no agent watches (each agent
 * then names them as not watched, and nothing there is proven).
 */
function dirsFor(session: BuildSession, sessions: BuildSession[], dirs: string[]): string[] {
  const watched = (s: BuildSession, dir: string) => watchCoverage([dir], s.view)[0]!.watched;
  return dirs.filter(
    (dir) => watched(session, dir) !== false || onClassPath(session.view, dir) || sessions.every((s) => watched(s, dir) === false),
  );
}

/**
 * A later agent's hold could not be had: the holds this run took fresh get `ok` (nothing was
 * built, so their output is as it was); a hold recovered from an earlier failed build is left
 * with its owner, never given `ok` (its output was never proven to compile).
 */
async function giveBack(held: Cycle[]): Promise<void> {
  for (const cycle of held) {
    if (cycle.unheld === true) continue;
    const { session, record } = cycle;
    const source = session.location.source;
    if (session.doctor.buildHold === 'named' && !session.owner.releasedBefore) {
      session.emit({ type: 'warning', message: warningText.holdKept(source, record.owner) });
      continue;
    }
    const reply = await finish(cycle, 'ok');
    if (reply === 'ack') saveAfterOk(session, () => saveReleased(record, session.host.clock.date()));
    session.emit({
      type: 'warning',
      message: reply === 'ack' ? warningText.holdReturned(source) : warningText.holdNotReturned(source, record.owner),
    });
  }
}

function combineAll(cycles: Cycle[], results: RunResult[]): RunResult {
  const first = cycles[0]!;
  return combineResults(
    results.map((result, i) => ({ ...result, agentSource: cycles[i]!.session.location.source })),
    first.session.host.clock.now() - first.startedMs,
  );
}

/**
 * Before each cycle of a long session (watch mode): the checkout's run lock for this cycle only,
 * so that a one-shot run in another terminal can run between two cycles, and what the session
 * knew when it opened read again: DOCTOR (the agent's hold, protocol.md "DOCTOR") and owner.json.
 * Either may have moved since: that run, or this session's own last cycle, changed them.
 */

/** A cycle may start (release the lock after it), the lock or DOCTOR refused it, or an agent (`session`'s) went away. */
export type CycleStart =
  | { kind: 'ready'; releaseLock: () => Promise<void> }
  | { kind: 'refused'; outcome: Outcome; session?: BuildSession }
  | { kind: 'lost'; session: BuildSession };

/**
 * Takes the run lock of the checkout (waiting up to --wait) and asks each session's agent DOCTOR
 * again. A DOCTOR naming another agent session, or a closed connection, is `lost`: the sessions
 * are over. Never throws for the agent.
 * @throws StateError when the run lock or an owner.json cannot be read or written.
 */
export async function beginCycle(sessions: readonly BuildSession[]): Promise<CycleStart> {
  const first = sessions[0]!;
  const hooks = { onEvent: first.emit, ...(first.signal === undefined ? {} : { signal: first.signal }) };
  const taken = await lockCheckout(first.checkout, first.host, first.options, hooks);
  if ('kind' in taken) return { kind: 'refused', outcome: taken.outcome };
  // The cycle's build is recorded with this cycle's lock, so a run after a killed watch waits for it.
  if (taken.recordBuild !== undefined) first.recordBuild = taken.recordBuild;
  const lock = async () => {
    delete first.recordBuild;
    await taken.release();
  };
  try {
    for (const session of sessions) {
      const refused = await refresh(session);
      if (refused !== undefined) {
        await lock();
        return refused;
      }
    }
  } catch (error) {
    await lock();
    throw error;
  }
  return { kind: 'ready', releaseLock: lock };
}

/** DOCTOR and owner.json of one session again; the start that refuses the cycle, if any. */
async function refresh(session: BuildSession): Promise<Exclude<CycleStart, { kind: 'ready' }> | undefined> {
  let answer;
  try {
    answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
  } catch (error) {
    if (!(error instanceof AgentConnectionError) || session.connection.closed) return { kind: 'lost', session };
    if (error.kind === 'aborted')
      return { kind: 'refused', outcome: { reason: 'interrupted', signal: signalOf(session.signal), at: 'doctor' } };
    // It answered DOCTOR when the session opened: not starting, but stopped or hung.
    const answered = { pid: session.agent.pid, stopped: await jvmStopped(session) };
    const why = { kind: 'doctor-timeout' as const, agent: session.agent.agentVersion, timeoutMs: session.timeoutMs, answered };
    return { kind: 'refused', outcome: { reason: 'agent-not-ready', port: session.agent.port, why }, session };
  }
  if (answer.kind !== 'observed' || answer.doctor.sessionId !== session.agent.sessionId) return { kind: 'lost', session };
  session.doctor = answer.doctor;
  session.owner = rereadOwner(session.state, session.agent.sessionId, session.owner, (message) =>
    session.emit({ type: 'warning', message }),
  );
  return undefined;
}

/**
 * True when the agent's JVM is stopped (SIGSTOP, Ctrl-Z, a tracer): DOCTOR's `pid` confirmed as
 * the app's on this machine as for its start time (options.ts `findAppStart`), then its process state. False
 * when it runs, or when that cannot be told here (a container, another host). Never throws.
 */
async function jvmStopped(session: BuildSession): Promise<boolean> {
  try {
    const start = await findAppStart(session.agent.pid, session.view.workingDirectory);
    return start.kind === 'known' && (await processStopped(start.pid)) === true;
  } catch {
    // A fault reading /proc (EMFILE, EIO): not known to be stopped.
    return false;
  }
}

/** `--allow-no-agent`: with no agent found, the build runs without a hold, and nothing is verified. */

/** What the build without an agent needs. */
export interface NoAgentRun {
  host: Host;
  hooks: SessionHooks;
  command: BuildCommand;
  options: CycleOptions;
  /** Why there is no agent (the no-agent refusal), said in the warning. */
  why: Outcome;
  startedMs: number;
}

/** Runs the build without a hold; its result says nothing is proven live. */
export async function noAgentBuild(run: NoAgentRun): Promise<RunResult> {
  const { host, hooks, command, options } = run;
  const emit = hooks.onEvent ?? (() => undefined);
  emit({ type: 'warning', message: warningText.noAgent(describeOutcome(run.why).message) });
  const dirs = [...new Set([...findClassDirs(host.cwd, command.kind), ...(options.classDirs ?? [])])];
  const build = await spawnBuild({ host, emit, signal: hooks.signal }, command, options, dirs, false);
  const context = { command, startedMs: run.startedMs, now: () => host.clock.now() };
  if (build.interruptedBy !== undefined)
    return runResult(context, { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'build' }, { build });
  return runResult(context, build.exitCode === 0 ? { reason: 'no-agent-build' } : { reason: 'build-failed', status: build.exitCode }, {
    build,
  });
}
