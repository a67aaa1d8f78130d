/**
 * A restart up to the app's return (group.ts `restartIfNeeded` proves the change after it): the
 * restart command run detached (tool/detached.ts), its output shown as it comes while the run
 * waits, and the wait for the app's agent in a new agent session, reading the port file as the
 * app's JVMs write and delete it (protocol.md "The port file is anyone's to delete").
 */
import path from 'node:path';
import { AgentConnection } from '../agent/connection.js';
import { readPortFile } from '../agent/discover.js';
import { askDoctor, observeAgentAfterLoss } from '../agent/requests.js';
import type { AgentView } from '../classes/coverage.js';
import type { DoctorObserved } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { RestartFailure } from '../outcome/outcome.js';
import { RESTART_LOG, stateFolderPath } from '../state/folder.js';
import { type DetachedCommand, LogFollower, startDetached } from '../tool/detached.js';
import { findAppStart, type ProcHost, stillRuns, type StartTime } from '../tool/proc.js';
import { pause } from '../util/wait.js';
import type { BuildSession } from './options.js';
import { sameAppView } from './identity.js';
import { NESTED_ENV } from '../tool/build.js';

/** How often the agent is asked whether it is back, in ms. */
const POLL_MS = 200;
/** How often the restart command's log is read for new output while the run waits, in ms. */
const FOLLOW_MS = 100;

/** The restart command as it runs: detached, never signalled, its exit only observed. */
export interface RestartRun {
  command: string;
  started: DetachedCommand;
  /** When the command was started, epoch ms (wall clock, as process start times are). */
  startedAtMs: number;
  /** Set once every agent that needed the restart is back: an exit status after that fails nothing. */
  appBack: boolean;
  /** Set when a later cycle of a watch waits for it, its own wait ended early by a save (never started twice at once). */
  earlier?: true;
  /** Stops showing its log, after what is there by now. Safe to call twice. */
  stopShowing(): void;
  /** The run is done with it: its log no longer shown, its exit no longer told; says so when it still runs. Safe to call twice. */
  leave(): void;
  /** The last lines of its log that hold more than blanks (a few). */
  lastLines(): string[];
}

/** How many of the log's last lines a failed restart command's words quote. */
const LAST_LINES = 5;

/** Where the restart command's output goes: `.reclazz/restart.log` of the session's checkout (absolute). */
export function restartLogOf(session: Pick<BuildSession, 'checkout'>): string {
  return path.join(stateFolderPath(session.checkout), RESTART_LOG);
}

/**
 * Starts `command` detached in the session's folder with {@link NESTED_ENV}=1 (a safe build inside
 * refuses to start), its output into `.reclazz/restart.log` of the checkout, shown as
 * `restart-output` events until {@link RestartRun.stopShowing}; its exit is told as a `restart`
 * event while the run is not done with it.
 * @throws Error when the log file cannot be opened.
 */
export function startRestart(command: string, session: BuildSession, emit: (event: RunEvent) => void): RestartRun {
  const { host } = session;
  const log = restartLogOf(session);
  const startedAtMs = host.clock.date().getTime();
  const started = startDetached(command, { cwd: host.cwd, env: { ...host.env, [NESTED_ENV]: '1' }, log });
  const follower = new LogFollower(log);
  const show = (all: boolean): void => {
    const text = follower.read(all);
    if (text !== '') emit({ type: 'restart-output', text });
  };
  let showing = true;
  let left = false;
  const timer = setInterval(() => show(false), FOLLOW_MS);
  timer.unref();
  const run: RestartRun = {
    command,
    started,
    startedAtMs,
    appBack: false,
    stopShowing: () => {
      if (!showing) return;
      showing = false;
      clearInterval(timer);
      show(true);
    },
    leave: () => {
      run.stopShowing();
      if (left) return;
      left = true;
      if (started.exit() === undefined && started.pid !== undefined) emit({ type: 'restart-running', command, pid: started.pid, log });
    },
    lastLines: () => follower.lastLines(LAST_LINES),
  };
  started.onExit((exit) => {
    if (left) return;
    // Its last lines before the line that says how it ended; what it started in the background may write on.
    if (showing) show(false);
    emit({ type: 'restart', command, exitCode: exit.exitCode, durationMs: exit.durationMs, appBack: run.appBack });
  });
  return run;
}

/** The agent back in a new agent session: a connection to it and its DOCTOR. */
export interface Back {
  connection: AgentConnection;
  doctor: DoctorObserved;
  /** What its DOCTOR and JVM say of it (its working directory, class path). */
  view: AgentView;
  at: Date;
  /** The port file was gone during the wait after naming its port (said then). */
  portFileLost: boolean;
}

/**
 * How a wait for the app's return ended, when not with the app back; `beside`: not back, but a new
 * agent session of the app answered while its old JVM still ran (one started beside it).
 */
export type NotBack = 'not-back' | 'beside' | 'interrupted' | 'superseded' | 'command-failed';

/**
 * Asks the agent of `session` every {@link POLL_MS} ms, its port file read again each time (a new
 * JVM writes its new port), until DOCTOR shows another agent session with VERIFY wired (protocol.md
 * "Early in agent start-up"), not a test JVM's, of a JVM not seen to start before the restart began,
 * while the old JVM is gone: neither its process runs nor its port answers in the old agent session
 * (a restart command that started the app without stopping it leaves the old one running the old
 * code); or until `deadline` passes (`beside` when a new agent session of the app answered meanwhile
 * while the old JVM still ran, else `not-back`); `command-failed` when the restart command exits non-zero first.
 * When the port file, after naming a new JVM's port, is gone (an old JVM that stopped after it
 * deleted it), that is said once, and that port is asked.
 */
export async function awaitNewSession(
  session: BuildSession,
  deadline: number,
  superseded?: () => boolean,
  restart?: RestartRun,
): Promise<Back | NotBack> {
  const { host, signal } = session;
  const since = restart?.startedAtMs ?? host.clock.date().getTime();
  const old = await oldJvmOf(session);
  const start = host.clock.now();
  const file = session.location.portFile;
  let fresh: number | undefined;
  let told = false;
  let beside = false;
  for (;;) {
    if (signal?.aborted) return 'interrupted';
    if (superseded?.() === true) return 'superseded';
    const read = file === undefined ? session.location.port : readPortFile(file);
    const gone = typeof read !== 'number' && read.problem === 'missing' ? file : undefined;
    if (typeof read === 'number' && read !== session.connection.port) fresh = read;
    if (gone !== undefined && fresh !== undefined && !told) {
      told = true;
      session.emit({ type: 'warning', kind: 'port-file-lost', file: gone, port: fresh, waiting: true });
    }
    const port = typeof read === 'number' ? read : fresh;
    const back = port === undefined ? undefined : await askOnce(session, port, old.sessionId, since);
    const oldThere = back !== undefined && (await oldStillThere(session, old));
    if (back !== undefined && !oldThere) return { ...back, portFileLost: told };
    back?.connection.close();
    beside ||= oldThere;
    if ((restart?.started.exit()?.exitCode ?? 0) !== 0) return 'command-failed';
    if (host.clock.now() >= deadline) return beside ? 'beside' : 'not-back';
    const goneFile = fresh === undefined && gone !== undefined ? { goneFile: gone } : {};
    const oldPid = oldThere ? { oldPid: old.pid } : {};
    const earlierPid = restart?.earlier === true && restart.started.exit() === undefined ? restart.started.pid : undefined;
    const earlier = earlierPid === undefined ? {} : { earlierPid };
    session.emit({ type: 'waiting', kind: 'restart', ...goneFile, ...oldPid, ...earlier, elapsedMs: Math.round(host.clock.now() - start) });
    await pause(POLL_MS, signal);
  }
}

/** The JVM of the agent session before the restart: its session, DOCTOR's pid, its port, and its start when visible here. */
interface OldJvm {
  sessionId: string;
  pid: string;
  port: number;
  start: StartTime | undefined;
}

async function oldJvmOf(session: BuildSession): Promise<OldJvm> {
  const found = await findAppStart(session.agent.pid, session.view.workingDirectory, session.host.proc);
  const start = found.kind === 'known' ? { startMs: found.startMs, errorMs: found.errorMs } : undefined;
  return { sessionId: session.agent.sessionId, pid: session.agent.pid, port: session.connection.port, start };
}

/** True while the old JVM runs (its process, when visible here) or its port answers DOCTOR in the old agent session. */
async function oldStillThere(session: BuildSession, old: OldJvm): Promise<boolean> {
  if (old.start !== undefined && (await stillRuns(Number(old.pid), old.start, session.host.proc))) return true;
  return (await observeAgentAfterLoss(old.port, old.sessionId, session.timeoutMs)).kind === 'same-session';
}

/** How the restart ended and what it was given: its command (null: `--await-restart`), its log, and the wait's bound in ms. */
export interface RestartEnds {
  timeoutMs: number;
  command: string | null;
  log: string | null;
  run: RestartRun | undefined;
}

/**
 * Why the app of `session` did not come back (`why`, from {@link awaitNewSession}): the restart
 * command failed first, or the wait ran out, with this app's own port file gone and its own old JVM
 * still there, if they are (another app's say nothing of this one).
 */
export async function notBackFailure(session: BuildSession, why: NotBack, ends: RestartEnds): Promise<RestartFailure> {
  const { command, log, run } = ends;
  const exit = run?.started.exit();
  if (why === 'command-failed' && exit !== undefined && command !== null && log !== null)
    return { kind: 'command-failed', command, exitCode: exit.exitCode, log, lastLines: run!.lastLines() };
  const gone = portFileGone(session);
  const old = await oldJvmOf(session);
  const there = await oldStillThere(session, old);
  // Its agent gone from its port (its shutdown hook ran) while its process still runs: the old app is ending, not left running.
  const stopping = there && (await observeAgentAfterLoss(old.port, old.sessionId, session.timeoutMs)).kind !== 'same-session';
  const running = there
    ? {
        pid: old.pid,
        sessionId: old.sessionId,
        ...(stopping && { stopping: true as const }),
        ...(why === 'beside' && { newBeside: true as const }),
      }
    : undefined;
  return {
    kind: 'not-back',
    waitedMs: ends.timeoutMs,
    ...(command === null ? {} : { command }),
    ...(gone && { portFileGone: gone }),
    ...(running && { oldRunning: running }),
  };
}

/**
 * The app's port file when it is gone now (after a restart: a JVM that stopped deleted it), else
 * undefined (still there, or the agent was not found by one).
 */
function portFileGone(session: BuildSession): string | undefined {
  const file = session.location.portFile;
  if (file === undefined) return undefined;
  const read = readPortFile(file);
  return typeof read !== 'number' && read.problem === 'missing' ? file : undefined;
}

/** After the proof: says so when the port file is gone since `back` came back (not said already during the wait). */
export function sayIfPortFileLost(session: BuildSession, back: Back): void {
  const gone = back.portFileLost ? undefined : portFileGone(session);
  if (gone !== undefined) session.emit({ type: 'warning', kind: 'port-file-lost', file: gone, port: back.connection.port, waiting: false });
}

/**
 * One look at `port`: the agent in a new agent session of a JVM not seen to start before `since`
 * (epoch ms), or undefined (not there yet, still the old one, not ready, or a JVM older than the restart).
 */
async function askOnce(
  session: BuildSession,
  port: number,
  before: string,
  since: number,
): Promise<Omit<Back, 'portFileLost'> | undefined> {
  const timeoutMs = session.timeoutMs;
  try {
    const { connection } = await AgentConnection.open(port, {
      timeoutMs,
      ...(session.signal === undefined ? {} : { signal: session.signal }),
    });
    try {
      const answer = await askDoctor(connection, timeoutMs, session.signal);
      const d = answer.kind === 'observed' ? answer.doctor : undefined;
      // A test JVM's agent, or another app's, may write the same port file meanwhile: never the app's.
      const roots = [session.host.cwd, session.location.projectDir];
      const other = d !== undefined && d.sessionId !== '' && d.sessionId !== before && d.verifySupported;
      const view = other
        ? await sameAppView(d, session.options.pathMap ?? [], roots, session.view.workingDirectory, session.host.proc)
        : undefined;
      if (other && view !== undefined && !(await startedBefore(d.pid, view.workingDirectory, since, session.host.proc)))
        return { connection, doctor: d, view, at: session.host.clock.date() };
    } catch {
      // not answering yet: asked again
    }
    connection.close();
  } catch {
    // nothing listens yet: asked again
  }
  return undefined;
}

/** True when the JVM `pid` (running in `workingDirectory`) is seen to have started before `since` (epoch ms): not one the restart started. */
async function startedBefore(pid: string, workingDirectory: string, since: number, proc: ProcHost): Promise<boolean> {
  const start = await findAppStart(pid, workingDirectory, proc);
  return start.kind === 'known' && start.startMs - start.errorMs < since;
}
