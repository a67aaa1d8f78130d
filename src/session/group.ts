/**
 * A build cycle over several sessions, one per agent of the checkout (several services run
 * from one checkout, each with its agent): every hold, in the sessions' order; the build once;
 * every finish; then each agent verifies the changed classes of the directories it watches.
 * With one session it is exactly {@link runCycle}. Watch mode runs many such cycles on the same
 * sessions: open them with `openSessions` (open.ts), run `runCycles`, end with {@link closeSessions}.
 */
import { onClassPath, watchCoverage } from '../classes/coverage.js';
import type { RunEvent } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import type { BuildCommand } from '../tool/resolve.js';
import { combineResults, refusedAmong } from './result.js';
import { end, saveAfterOk, type BuildSession, type Cycle } from './cycle-context.js';
import { afterBuild, beforeBuild, cycleOf, endWithError, finish, interruptedBeforeBuild, runCycle, takeHold, type Ready } from './cycle.js';
import { saveReleased } from '../hold/owner.js';
import type { CycleOptions } from './options.js';
import { closeSession, type Session } from './session.js';
import { spawnBuild } from './spawn.js';
import { withSmallYoungGeneration } from './young-generation.js';

/** Open sessions of one run, in the order their holds are taken, and where the run's own events go. */
export interface SessionGroup<S extends Session = Session> {
  sessions: S[];
  /** Events of the run itself (the build), not of one agent. */
  emit: (event: RunEvent) => void;
}

/**
 * Runs one cycle over every session of `group`. Never throws: a thrown error (a state file
 * that cannot be written, a bug) ends every cycle as {@link endWithError} does.
 */
export async function runCycles(
  group: SessionGroup<BuildSession>,
  command: BuildCommand,
  options: CycleOptions,
  startedMs = group.sessions[0]!.host.clock.now(),
): Promise<RunResult> {
  const { sessions } = group;
  if (sessions.length === 1) {
    const cycle = cycleOf(sessions[0]!, command, options, startedMs);
    return runCycle(sessions[0]!, command, options, startedMs).catch((error: unknown) => endWithError(cycle, error));
  }
  const cycles = sessions.map((s) => cycleOf(s, command, options, startedMs, (dirs) => dirsFor(s, sessions, dirs)));
  const held: Cycle[] = [];
  try {
    for (const cycle of cycles) {
      const refused = await takeHold(cycle);
      if (refused !== undefined) {
        await giveBack(held);
        const sources = sessions.map((s) => s.location.source);
        return refusedAmong(end(cycle, refused), cycle.session.location.source, sources);
      }
      held.push(cycle);
    }
    // As in runCycle: the young generation kept at its size from the class indexes' read on.
    return await withSmallYoungGeneration(async () => {
      const readies: Ready[] = [];
      for (const cycle of cycles) readies.push(await beforeBuild(cycle));
      if (sessions[0]!.signal?.aborted) return combine(cycles, await Promise.all(cycles.map(interruptedBeforeBuild)));
      const dirs = [...new Set(readies.flatMap((r) => r.found.dirs))];
      const first = sessions[0]!;
      const build = await spawnBuild(
        { host: first.host, emit: group.emit, signal: first.signal, recordBuild: first.recordBuild },
        command,
        options,
        dirs,
        cycles.some((cycle) => cycle.unheld !== true),
      );
      return combine(cycles, await Promise.all(cycles.map((cycle, i) => afterBuild(cycle, build, readies[i]!))));
    });
  } catch (error) {
    return combine(cycles, await Promise.all(cycles.map((cycle) => endWithError(cycle, error))));
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

function combine(cycles: Cycle[], results: RunResult[]): RunResult {
  const first = cycles[0]!;
  return combineResults(
    results.map((result, i) => ({ ...result, agentSource: cycles[i]!.session.location.source })),
    first.session.host.clock.now() - first.startedMs,
  );
}
