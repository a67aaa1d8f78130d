/**
 * Facts about processes on this machine: when one started, its working directory, its command
 * line and environment, whether it is stopped, and the members of a process group. Used to tell
 * the JVM behind an agent apart from another process that reuses its pid, to tell a stopped JVM
 * from a hung one, and to see whether a build's process group is still running.
 *
 * Read-only by design: nothing here sends a signal. Processes come and go while they are
 * looked at, so a process that is gone, or that this user may not see (another user's process,
 * `hidepid`, a container's pid namespace), gives undefined or is skipped, never an error. An
 * id that is not a positive integer names no process and gives undefined too. Undefined from a
 * group function means "cannot tell here", which a caller must not read as "gone".
 *
 * Linux reads /proc; macOS runs `ps` and `lsof`; Windows runs PowerShell for start times only.
 * Every function takes an optional `ProcHost` (default: this machine) so tests can replay
 * recorded outputs.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AppStart } from '../outcome/facts.js';
import { darwinCommandLine, darwinCwd, darwinScan, darwinStartTime, darwinState } from './proc-darwin.js';
import { isProcessId, localHost, startsMatch, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';
import { linuxCommandLine, linuxCwd, linuxScan, linuxStartTime, linuxState } from './proc-linux.js';
import { windowsStartTime } from './proc-windows.js';

export { localHost, startRange, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';

/**
 * When process `pid` started, or undefined when it is not visible here (gone, another user's
 * on macOS or Windows, or an unsupported platform). Error bound (`errorMs`): about 11 ms on
 * Linux with 10 ms clock ticks, 500 ms on macOS (whole seconds; 30 min or more inside a
 * repeated daylight-saving hour), under 1 ms on Windows.
 */
export async function processStartTime(pid: number, host: ProcHost = localHost): Promise<StartTime | undefined> {
  if (!isProcessId(pid)) return undefined;
  if (host.platform === 'linux') return linuxStartTime(pid, host);
  if (host.platform === 'darwin') return darwinStartTime(pid, host);
  if (host.platform === 'win32') return windowsStartTime(pid, host);
  return undefined;
}

/**
 * The working directory of process `pid` as an absolute path, or undefined when it is not
 * visible here or the platform cannot tell (Windows). On Linux a directory that was removed
 * reads as its old path followed by ` (deleted)`, which matches no live directory.
 * @internal for its tests (the rest of the code asks {@link findAppStart})
 */
export async function processCwd(pid: number, host: ProcHost = localHost): Promise<string | undefined> {
  if (!isProcessId(pid)) return undefined;
  if (host.platform === 'linux') return linuxCwd(pid, host);
  if (host.platform === 'darwin') return darwinCwd(pid, host);
  return undefined;
}

/**
 * The command line and starting environment of process `pid`, or undefined when it is not
 * visible here or the platform cannot tell (Windows). On macOS `ps` prints the arguments
 * joined by spaces, so an argument holding a space reads as two; there is no environment.
 */
export async function processCommandLine(pid: number, host: ProcHost = localHost): Promise<CommandLine | undefined> {
  if (!isProcessId(pid)) return undefined;
  if (host.platform === 'linux') return linuxCommandLine(pid, host);
  if (host.platform === 'darwin') return darwinCommandLine(pid, host);
  return undefined;
}

/**
 * Whether process `pid` is stopped: by a signal (SIGSTOP, or SIGTSTP from a terminal's Ctrl-Z)
 * or by a tracer. A stopped process runs none of its threads, so it answers nothing until it
 * is continued. Undefined when it is not visible here or the platform cannot tell (Windows).
 */
export async function processStopped(pid: number, host: ProcHost = localHost): Promise<boolean | undefined> {
  if (!isProcessId(pid)) return undefined;
  let state: string | undefined;
  if (host.platform === 'linux') state = linuxState(pid, host);
  else if (host.platform === 'darwin') state = await darwinState(pid, host);
  return state === undefined ? undefined : /^[Tt]/.test(state);
}

/** Every visible process that passes `keep`, or undefined where no scan is possible. */
function scan(host: ProcHost, keep: (info: { pgid: number; sid: number | undefined }) => boolean): Promise<ProcessInfo[] | undefined> {
  if (host.platform === 'linux') return linuxScan(host, keep);
  if (host.platform === 'darwin') return darwinScan(host, keep);
  return Promise.resolve(undefined);
}

/**
 * The visible processes whose process group is `pgid`, zombies included (state `Z`: exited,
 * not yet reaped, writing nothing), in no particular order; [] when there are none, undefined
 * when this platform cannot tell (Windows) or /proc cannot be read.
 *
 * A process that called setsid(2), such as a Gradle daemon, leads a new session and a new
 * group, so it is never a member of the group it was started in.
 */
export async function groupMembers(pgid: number, host: ProcHost = localHost): Promise<ProcessInfo[] | undefined> {
  if (!isProcessId(pgid)) return undefined;
  return scan(host, (info) => info.pgid === pgid);
}

/**
 * The visible processes of session `sid` (any process group), zombies included. A build
 * started in its own session (Node's `detached: true` calls setsid) keeps there any child that
 * a job-control shell moved into a new process group, while a daemon that called setsid
 * leaves it. Undefined where this platform cannot tell (macOS, Windows) or /proc cannot be read.
 */
export async function sessionMembers(sid: number, host: ProcHost = localHost): Promise<ProcessInfo[] | undefined> {
  if (!isProcessId(sid) || host.platform !== 'linux') return undefined;
  return scan(host, (info) => info.sid === sid);
}

/** Exited but not yet reaped (`Z`), or being torn down (`X`): such a process writes nothing more. */
function isExited(info: ProcessInfo): boolean {
  return /^[ZX]/.test(info.state);
}

/**
 * Whether the process group `pgid` that was recorded with its leader's start time `leaderStart`
 * (the leader being the process whose pid is `pgid`) still has a running member. Undefined
 * when this platform cannot tell (see `groupMembers`).
 *
 * - The leader is visible: the group is the recorded one only if the leader's start matches
 *   (`startsMatch`); otherwise the pid was reused and the recorded group is gone (a pgid
 *   cannot be reused while any process is still in that group).
 * - The leader has exited and is reaped, members remain: alive while one is running that
 *   cannot have started before the leader. Members of a recorded group start after its leader,
 *   so this errs only one way: a new group that reused the pgid and then lost its own leader
 *   counts as alive, which makes a caller wait, never miss a writer.
 * - A zombie counts as exited, but a zombie leader still proves which group this is.
 */
export async function isGroupAlive(pgid: number, leaderStart: StartTime, host: ProcHost = localHost): Promise<boolean | undefined> {
  const members = await groupMembers(pgid, host);
  if (!members) return undefined;
  const leader = members.find((member) => member.pid === pgid);
  const running = members.filter((member) => !isExited(member));
  if (leader?.start) return startsMatch(leader.start, leaderStart) && running.length > 0;
  const earliest = leaderStart.startMs - leaderStart.errorMs;
  return running.some((member) => !member.start || member.start.startMs + member.start.errorMs >= earliest);
}

/**
 * When the app's JVM started, the cut-off of "unchanged since the app started" (classes/evidence.ts):
 * process `pid` (DOCTOR's) on this machine, confirmed by running in `workingDirectory`
 * (protocol.md "DOCTOR"), since a pid from another machine or container can name an unrelated
 * process here. Unknown, with why: `no-pid` (not a process id), `not-visible` (no such process
 * here), `elsewhere` (it runs in another folder, or its folder cannot be read). Never throws.
 */
export async function findAppStart(pid: string, workingDirectory: string, host: ProcHost = localHost): Promise<AppStart> {
  const id = /^\d{1,15}$/.test(pid) ? Number(pid) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) return { kind: 'unknown', why: { kind: 'no-pid', pid } };
  try {
    const start = await processStartTime(id, host);
    if (start === undefined) return { kind: 'unknown', why: { kind: 'not-visible', pid: id } };
    const cwd = await processCwd(id, host);
    if (cwd === undefined || !sameFolder(cwd, workingDirectory)) {
      return { kind: 'unknown', why: { kind: 'elsewhere', pid: id, cwd: cwd ?? null, workingDirectory } };
    }
    return { kind: 'known', pid: id, startMs: start.startMs, errorMs: start.errorMs };
  } catch {
    // A fault reading /proc (EMFILE, EIO): the start stays unknown, which only means more checking.
    return { kind: 'unknown', why: { kind: 'not-visible', pid: id } };
  }
}

/** True when `a` and `b` name the same folder (symbolic links resolved where they exist). */
function sameFolder(a: string, b: string): boolean {
  return real(a) === real(b);
}

function real(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
