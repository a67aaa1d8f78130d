/**
 * What the agent's state is before a build, beyond DOCTOR at connect: whether its file watcher
 * still starts, and its RELOAD status (a pause; whether anything was pending).
 */
import { askDoctor, askReload } from '../agent/requests.js';
import { agentView } from '../classes/coverage.js';
import type { ReloadState } from '../outcome/facts.js';
import { agentWatchOf } from './agent-jvm.js';
import type { BuildSession } from './cycle-context.js';

/**
 * True while the agent's file watcher is starting (agent FileWatcher.startWatching: it waits for
 * the app to be ready, `startupDelaySec` at most): then its scan of a BUILD ok cannot run, the
 * ok fails about 10 s later and the hold stays with its owner (agent ReloadQueue.acceptBuild,
 * FileWatcher.scanNow), and what was built is reloaded only when the watcher starts. DOCTOR is
 * asked again when the last one said so; what it says now is kept.
 */
export async function watcherStarting(session: BuildSession): Promise<boolean> {
  if (session.doctor.watcherState !== 'starting') return false;
  try {
    const answer = await askDoctor(session.connection, session.timeoutMs, session.signal);
    if (answer.kind !== 'observed') return true;
    session.doctor = answer.doctor;
    if (answer.doctor.watcherState === 'starting') return true;
    const map = session.options.pathMap ?? [];
    session.view = agentView(answer.doctor, map, await agentWatchOf(answer.doctor, map));
    return false;
  } catch {
    return true;
  }
}

/** RELOAD status before the build, with when it was asked (epoch ms); undefined when no receipt came. */
export async function reloadStatus(session: BuildSession): Promise<(ReloadState & { atMs: number }) | undefined> {
  const atMs = session.host.clock.date().getTime();
  try {
    return { ...(await askReload(session.connection, 'status', session.timeoutMs, session.signal)), atMs };
  } catch {
    return undefined;
  }
}

/**
 * RELOAD status before the build: nothing pending and no hold before this run took its own
 * (DOCTOR at connect) means the agent's view of the disk was its admitted state. Undefined
 * otherwise, or when no receipt came (then a single ask's not_observed proves nothing).
 */
export function quietBefore(session: BuildSession, state: (ReloadState & { atMs: number }) | undefined): { atMs: number } | undefined {
  if (session.doctor.buildHold !== 'none' || state === undefined) return undefined;
  return state.pendingClasses === 0 && state.pendingActions === 0 ? { atMs: state.atMs } : undefined;
}

/** The kind of the build hold the agent has now (RELOAD status), or undefined when no receipt came. */
export async function heldBy(session: BuildSession): Promise<ReloadState['buildHold'] | undefined> {
  return (await reloadStatus(session))?.buildHold;
}
