/**
 * Facts about processes on this machine, to tell the JVM behind an agent from a process that reused
 * its pid, a stopped JVM from a hung one, and whether a build's process group still runs. Read-only:
 * nothing here sends a signal. A process that is gone or hidden from this user (another user's,
 * `hidepid`, another pid namespace), or an id that is not a positive integer, gives undefined or is
 * skipped, never an error; from a group function undefined means "cannot tell here", never "gone".
 * Linux reads /proc; macOS runs `ps` and `lsof`; Windows runs PowerShell for start times only.
 * `ProcHost` (default: this machine) lets tests replay recorded outputs.
 */
import type { AppStart } from '../outcome/facts.js';
import { isProcessId, localHost, startsMatch, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';
import { realOf } from '../util/fs.js';

export { localHost, startRange, startsMatch, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';

/** What one platform's module reads of a process (each as {@link processStartTime} and the rest say); one it lacks is not visible there. */
interface PlatformReader {
  startTime(pid: number, host: ProcHost): Promise<StartTime | undefined>;
  cwd?(pid: number, host: ProcHost): Promise<string | undefined> | string | undefined;
  commandLine?(pid: number, host: ProcHost): Promise<CommandLine | undefined> | CommandLine | undefined;
  state?(pid: number, host: ProcHost): Promise<string | undefined> | string | undefined;
  scan?(host: ProcHost, keep: (info: { pgid: number; sid: number | undefined }) => boolean): Promise<ProcessInfo[] | undefined>;
}

/**
 * The reader of `platform`'s processes, its module loaded when first asked: a run reads its own
 * platform's, and never loads the others'. Undefined on a platform without one.
 */
async function readerOf(platform: string): Promise<PlatformReader | undefined> {
  if (platform === 'linux') {
    const { linuxStartTime, linuxCwd, linuxCommandLine, linuxState, linuxScan } = await import('./proc-linux.js');
    return { startTime: linuxStartTime, cwd: linuxCwd, commandLine: linuxCommandLine, state: linuxState, scan: linuxScan };
  }
  if (platform === 'darwin') {
    const { darwinStartTime, darwinCwd, darwinCommandLine, darwinState, darwinScan } = await import('./proc-darwin.js');
    return { startTime: darwinStartTime, cwd: darwinCwd, commandLine: darwinCommandLine, state: darwinState, scan: darwinScan };
  }
  if (platform === 'win32') {
    const { windowsStartTime } = await import('./proc-windows.js');
    return { startTime: windowsStartTime };
  }
  return undefined;
}

/**
 * When process `pid` started, or undefined when it is not visible here (gone, another user's
 * on macOS or Windows, or an unsupported platform). Error bound (`errorMs`): about 11 ms on
 * Linux with 10 ms clock ticks, 500 ms on macOS (whole seconds; 30 min or more inside a
 * repeated daylight-saving hour), under 1 ms on Windows.
 */
export async function processStartTime(pid: number, host: ProcHost = localHost): Promise<StartTime | undefined> {
  if (!isProcessId(pid)) return undefined;
  return (await readerOf(host.platform))?.startTime(pid, host);
}

/**
 * The absolute working directory of process `pid`; undefined when not visible or on Windows. On
 * Linux a removed directory reads as its old path plus ` (deleted)`, which matches no live one.
 * @internal for its tests (the rest of the code asks {@link findAppStart})
 */
export async function processCwd(pid: number, host: ProcHost = localHost): Promise<string | undefined> {
  if (!isProcessId(pid)) return undefined;
  return (await readerOf(host.platform))?.cwd?.(pid, host);
}

/**
 * The command line and starting environment of process `pid`; undefined when not visible or on
 * Windows. On macOS `ps` joins the arguments by spaces (one holding a space reads as two) and gives no environment.
 */
export async function processCommandLine(pid: number, host: ProcHost = localHost): Promise<CommandLine | undefined> {
  if (!isProcessId(pid)) return undefined;
  return (await readerOf(host.platform))?.commandLine?.(pid, host);
}

/**
 * Whether process `pid` is stopped (SIGSTOP, Ctrl-Z's SIGTSTP, a tracer): it answers nothing until
 * continued. Undefined when not visible or on Windows.
 */
export async function processStopped(pid: number, host: ProcHost = localHost): Promise<boolean | undefined> {
  if (!isProcessId(pid)) return undefined;
  const state = await (await readerOf(host.platform))?.state?.(pid, host);
  return state === undefined ? undefined : /^[Tt]/.test(state);
}

/**
 * Whether process `pid`, seen started at `start`, still runs here: false once it is gone, exited
 * (a zombie), hidden, or its pid names a process started at another time.
 */
export async function stillRuns(pid: number, start: StartTime, host: ProcHost = localHost): Promise<boolean> {
  const now = await processStartTime(pid, host);
  if (now === undefined || !startsMatch(now, start)) return false;
  const state = await (await readerOf(host.platform))?.state?.(pid, host);
  return state === undefined || !/^[ZX]/.test(state);
}

/** Every visible process that passes `keep`, or undefined where no scan is possible. */
async function scan(
  host: ProcHost,
  keep: (info: { pgid: number; sid: number | undefined }) => boolean,
): Promise<ProcessInfo[] | undefined> {
  return (await readerOf(host.platform))?.scan?.(host, keep);
}

/**
 * The visible processes of process group `pgid`, zombies included, in no order; undefined on
 * Windows or when /proc cannot be read. A process that called setsid(2), as a Gradle daemon does,
 * leaves the group it was started in.
 */
export async function groupMembers(pgid: number, host: ProcHost = localHost): Promise<ProcessInfo[] | undefined> {
  if (!isProcessId(pgid)) return undefined;
  return scan(host, (info) => info.pgid === pgid);
}

/**
 * The visible processes of session `sid`, zombies included. A build started in its own session
 * (`detached: true` calls setsid) keeps there a child a job-control shell moved to a new group; a
 * daemon that called setsid leaves it. Undefined off Linux or when /proc cannot be read.
 */
export async function sessionMembers(sid: number, host: ProcHost = localHost): Promise<ProcessInfo[] | undefined> {
  if (!isProcessId(sid) || host.platform !== 'linux') return undefined;
  return scan(host, (info) => info.sid === sid);
}

/**
 * What marks the processes of one build: `variable=value` in their environment when they started,
 * and, where given, `fileLocks` as their soft limit on file locks (a limit Linux does not enforce,
 * which a process keeps though it clears its environment: build-group.ts).
 */
export interface ProcessMark {
  variable: string;
  value: string;
  fileLocks?: number | undefined;
}

/**
 * The running processes that started no earlier than `sinceMs` (epoch ms) and carry `mark`,
 * wherever they are (another session, another group): processes a build started carry it though
 * they called setsid. Only this user's show their environment. Undefined off Linux or when /proc
 * cannot be read.
 */
export async function processesCarrying(
  mark: ProcessMark,
  sinceMs: number,
  host: ProcHost = localHost,
): Promise<ProcessInfo[] | undefined> {
  if (host.platform !== 'linux') return undefined;
  const young = await scan(host, () => true);
  const { linuxFileLocksLimit } = await import('./proc-linux.js');
  const entry = `${mark.variable}=${mark.value}`;
  const carries = (pid: number) =>
    (host.readText(`/proc/${pid}/environ`)?.split('\0').includes(entry) ?? false) ||
    (mark.fileLocks !== undefined && linuxFileLocksLimit(pid, host) === mark.fileLocks);
  return young?.filter(
    (info) => !isExited(info) && (info.start === undefined || info.start.startMs + info.start.errorMs >= sinceMs) && carries(info.pid),
  );
}

/** Exited but not yet reaped (`Z`), or being torn down (`X`): such a process writes nothing more. */
function isExited(info: ProcessInfo): boolean {
  return /^[ZX]/.test(info.state);
}

/**
 * Whether process group `pgid`, recorded with its leader's start `leaderStart`, still has a running
 * member; undefined where {@link groupMembers} cannot tell. A visible leader (a zombie too) must
 * match the start, else its pid was reused and the group is gone (a pgid is not reused while the
 * group has members). Without the leader, a running member that cannot have started before it
 * counts: a new group that reused the pgid and lost its leader counts as alive, which makes a
 * caller wait, never miss a writer.
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
 * When the app's JVM started (the cut of classes/evidence.ts): DOCTOR's `pid`, confirmed by running
 * in `workingDirectory` (protocol.md "DOCTOR"), since a pid from another machine or container can
 * name an unrelated process here. Unknown with why: `no-pid`, `not-visible`, `elsewhere` (another
 * folder, or unreadable). Never throws.
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
  return realOf(a) === realOf(b);
}
