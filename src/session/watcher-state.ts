/**
 * The agent's file watcher as a build meets it (agent watcher/FileWatcher.java): not running is said
 * before the hold, and a watcher still starting is waited for before BUILD ok, the build held meanwhile.
 */
import { awaitWatcher } from '../agent/handshake.js';
import { askDoctor } from '../agent/requests.js';
import { agentView } from '../classes/coverage.js';
import type { AgentWait, BuildRun } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import { type BuildSession, type Cycle, end } from './options.js';
import { agentWatchOf } from './identity.js';

/**
 * Says before the hold that the agent's file watcher is not running (DOCTOR asked again first):
 * starting, BUILD ok waits for it ({@link watcherBeforeOk}); stopped, it captures no build, so an ok
 * leaves the hold with its owner.
 */
export async function tellWatcher(cycle: Cycle): Promise<void> {
  const { session } = cycle;
  if (session.doctor.watcherState === 'watching') return;
  await askWatcher(session);
  const state = session.doctor.watcherState;
  if (state === 'starting') {
    const { ms, option } = watcherBound(cycle);
    session.emit({ type: 'warning', kind: 'watcher-starting', boundMs: ms, option });
  } else if (state === 'stopped') session.emit({ type: 'warning', kind: 'watcher-stopped' });
}

/** DOCTOR again, kept when it answers in this agent session ({@link keepDoctor}); a failure keeps what was known. */
async function askWatcher(session: BuildSession): Promise<void> {
  try {
    const answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
    if (answer.kind === 'observed') await keepDoctor(session, answer.doctor);
  } catch {
    // No answer: what was known stands.
  }
}

/** Keeps `doctor` when it is of this agent session, with what the agent watches once its watcher runs (coverage.ts). */
async function keepDoctor(session: BuildSession, doctor: BuildSession['doctor']): Promise<void> {
  if (doctor.sessionId !== session.agent.sessionId) return;
  session.doctor = doctor;
  if (doctor.watcherState !== 'watching') return;
  const map = session.options.pathMap;
  session.view = agentView(doctor, map, await agentWatchOf(doctor, map, session.host.proc));
}

/** How long BUILD ok waits for a watcher still starting, in ms: `--wait-for-agent` when given, else `--verify-timeout`. */
function watcherBound(cycle: Cycle): { ms: number; option: '--wait-for-agent' | '--verify-timeout' } {
  const waitForAgentMs = cycle.session.options.waitForAgentMs;
  if (waitForAgentMs > 0) return { ms: waitForAgentMs, option: '--wait-for-agent' };
  return { ms: cycle.options.verifyTimeoutMs, option: '--verify-timeout' };
}

/**
 * Before BUILD ok of a build that succeeded while the agent's file watcher was starting: waits, within
 * {@link watcherBound}, for DOCTOR to show it running. Until it runs the agent cannot capture a build
 * (an ok's scan waits 10 s for it, then fails and keeps the hold: agent FileWatcher.scanNow,
 * ReloadQueue.acceptBuild), and when it starts it reloads every class file changed since the app
 * started, reading them as they are (FileWatcher.registerDirectories, dispatchClassesChangedDuringStartup):
 * only the hold keeps that back (ReloadQueue.submitClassBatch). Not started in time: the hold is left
 * to this run's owner, and the cycle ends (75); the next run here recovers it.
 * @returns the cycle's end; `interrupted` (the caller sends failed); or undefined to send ok (the
 *   watcher runs, or stopped: its ok's failure is seen).
 */
export async function watcherBeforeOk(cycle: Cycle, build: BuildRun): Promise<RunResult | 'interrupted' | undefined> {
  const { session } = cycle;
  if (session.doctor.watcherState !== 'starting') return undefined;
  const { ms, option } = watcherBound(cycle);
  const started = performance.now();
  const onWait = (wait: AgentWait, elapsedMs: number) => session.emit({ type: 'waiting', ...wait, elapsedMs });
  const doctor = await awaitWatcher(session.open, { timeoutMs: session.timeoutMs, waitMs: ms }, session.signal, onWait);
  if (session.signal?.aborted) return 'interrupted';
  // No answer, or another agent session (the app restarted): ok's receipt tells what became of the hold.
  if (doctor === undefined || doctor.sessionId !== session.agent.sessionId) return undefined;
  await keepDoctor(session, doctor);
  if (doctor.watcherState !== 'starting') return undefined;
  session.hold.leave();
  const left = { kind: 'watcher-starting' as const, owner: session.hold.owner, waitedMs: Math.round(performance.now() - started), option };
  return end(cycle, { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: left }, { build });
}
