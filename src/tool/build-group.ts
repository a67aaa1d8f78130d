/**
 * A build is over when all its processes have exited, not its first: `sh -c '(sleep 1; cp …) &'`
 * writes after the shell exits. Those left get {@link LINGER_MS} ms, then SIGTERM, then SIGKILL,
 * and a warning names them. Started with setsid (no terminal), the build's session (Linux) or
 * group is the build; a daemon that calls setsid itself is left alone, but one still running a
 * moment after the build is named ({@link awaitDetached}): it may still write. It is found by
 * marks every process the build starts inherits: a token in its environment and, on Linux, a
 * limit of this run that one which clears its environment (`env -i`) keeps. Sharing the
 * terminal (Linux), a process of its session is the build's when it started after the build and
 * its parent chain reaches this run or leaves the session before an older process (the user's
 * shell). Where processes cannot be listed (Windows), nothing is waited for.
 */
import { randomInt } from 'node:crypto';
import type { BuildGroup, LeftProcess } from '../outcome/facts.js';
import {
  groupMembers,
  localHost,
  processesCarrying,
  processStartTime,
  sessionMembers,
  startRange,
  type ProcessInfo,
  type ProcHost,
} from './proc.js';
import { pause } from '../util/wait.js';

/** How long the rest of a build's processes may run after its command exits, in ms. */
const LINGER_MS = 5000;
/** How long a lingering process gets after SIGTERM before SIGKILL, in ms. */
const KILL_AFTER_MS = 2000;
/** How often the processes are looked at while waiting, in ms. */
const POLL_MS = 100;
/** How long processes the build started outside its session may run after it before they are named, in ms. */
const DETACHED_SETTLE_MS = 1000;

/** The variable that marks the environment of one build's processes with a token of its own (see {@link awaitDetached}). */
export const BUILD_RUN_ENV = 'RECLAZZ_BUILD_RUN';

/**
 * A mark for one build's processes that a daemon keeps though it clears its environment (`env -i`):
 * their soft limit on file locks (RLIMIT_LOCKS, not enforced by Linux since 2.4.25, so no process
 * is limited by it), set to a number of this run; a process inherits its limits across fork, exec
 * and setsid. On Linux, `plan` is started by `/bin/sh`, which sets the limit (`ulimit -w` in dash,
 * `-x` in bash; a shell that can do neither starts the build unmarked) and replaces itself with
 * the build (exec: the same process, its exit status the build's). Elsewhere, nothing reads it.
 * @returns the plan to spawn, and the mark (2^40 and more, a number no shell or system sets), undefined off Linux.
 */
export function markedSpawn<Plan extends { file: string; args: string[] }>(
  plan: Plan,
  platform: NodeJS.Platform,
): { plan: Plan; mark: number | undefined } {
  if (platform !== 'linux') return { plan, mark: undefined };
  const mark = 2 ** 40 + randomInt(2 ** 30);
  const script = `ulimit -w ${mark} 2>/dev/null || ulimit -x ${mark} 2>/dev/null; exec "$0" "$@"`;
  return { plan: { ...plan, file: '/bin/sh', args: ['-c', script, plan.file, ...plan.args] }, mark };
}

/**
 * The main classes of build daemons that work only on a client's request, which waits for the
 * work to end (Gradle's daemon and workers, the Kotlin compile daemon, mvnd): all they write for
 * a build is written before its command exits, so one this build started and left running is
 * no writer after it.
 */
const SERVING_DAEMONS = [
  'org.gradle.launcher.daemon.bootstrap.GradleDaemon',
  'org.gradle.process.internal.worker.GradleWorkerMain',
  'org.jetbrains.kotlin.daemon.KotlinCompileDaemon',
  'org.mvndaemon.mvnd.common.MavenDaemon',
];

/** Where a build's processes are, as {@link buildScope} found them at spawn. */
export type BuildScope =
  /** Started in a session and group of its own, both with the id `pgid`. */
  | { kind: 'own'; pgid: number }
  /**
   * In our process group `pgid` and terminal session `sid`; its processes are those of the session
   * started since `sinceMs` (epoch ms) that come from the build, not from `self`'s elders.
   */
  | { kind: 'shared'; pgid: number; sid: number; self: number; sinceMs: number };

/** Sending a signal to one process (cli/ supplies the real one). */
export interface Signaller {
  kill(pid: number, signal: NodeJS.Signals): void;
}

/**
 * The scope of a build just spawned as `pid`, and the run lock's record of its group leader;
 * `beforeMs`/`afterMs` (epoch ms) bracket the spawn. Undefined for a shared group off Linux.
 */
export async function buildScope(
  pid: number,
  ownGroup: boolean,
  spawn: { beforeMs: number; afterMs: number; self: number; command: string },
  host: ProcHost = localHost,
): Promise<{ scope: BuildScope; record: BuildGroup } | undefined> {
  if (ownGroup) {
    const start = startRange(spawn.beforeMs, spawn.afterMs + 1);
    const record = { pgid: pid, leaderStartMs: start.startMs, leaderErrorMs: start.errorMs, command: spawn.command };
    return { scope: { kind: 'own', pgid: pid }, record };
  }
  if (host.platform !== 'linux') return undefined;
  const { parseLinuxStat } = await import('./proc-linux.js');
  const self = parseLinuxStat(host.readText(`/proc/${spawn.self}/stat`));
  const pgid = self?.pgid;
  const start = pgid === undefined ? undefined : await processStartTime(pgid, host);
  if (self === undefined || pgid === undefined || start === undefined) return undefined;
  return {
    scope: { kind: 'shared', pgid, sid: self.sid, self: spawn.self, sinceMs: spawn.beforeMs },
    record: { pgid, leaderStartMs: start.startMs, leaderErrorMs: start.errorMs, command: spawn.command },
  };
}

/**
 * The build's processes still running, or undefined when they cannot be listed here.
 * @internal for its tests
 */
export async function leftOver(scope: BuildScope, host: ProcHost = localHost): Promise<ProcessInfo[] | undefined> {
  const members =
    scope.kind === 'own'
      ? ((await sessionMembers(scope.pgid, host)) ?? (await groupMembers(scope.pgid, host)))
      : await sessionMembers(scope.sid, host);
  if (members === undefined) return undefined;
  const running = members.filter((m) => !/^[ZX]/.test(m.state));
  if (scope.kind === 'own') return running;
  const byPid = new Map(members.map((m) => [m.pid, m]));
  return running.filter((m) => fromBuild(m, scope, byPid));
}

/**
 * Whether `process`, of our terminal's session, is the build's: see the module's doc. A process
 * that surely started before the build (the user's shell, the other side of a `| cat`) is not.
 */
function fromBuild(process: ProcessInfo, scope: Extract<BuildScope, { kind: 'shared' }>, session: Map<number, ProcessInfo>): boolean {
  let at: ProcessInfo | undefined = process;
  for (let hops = 0; at !== undefined && hops <= session.size; hops++) {
    const young = at.start !== undefined && at.start.startMs + at.start.errorMs >= scope.sinceMs;
    if (at.pid === scope.self || !young) return false;
    if (at.ppid === scope.self) return true;
    at = session.get(at.ppid);
  }
  // Its parent is outside the session (init, a subreaper): orphaned when the build's shell exited.
  return at === undefined;
}

/**
 * Waits up to {@link LINGER_MS} ms for the build's processes to end, then stops the rest. Stops
 * nothing when `signal` aborts (the interrupt stops the build).
 * @returns the processes that had to be stopped (pid and command), [] when none lingered.
 */
export async function awaitBuildProcesses(
  scope: BuildScope,
  control: Signaller,
  signal?: AbortSignal,
  host: ProcHost = localHost,
): Promise<LeftProcess[]> {
  const look = async () => (await leftOver(scope, host)) ?? [];
  const left = await untilNone(look, LINGER_MS, signal);
  if (left === undefined || left.length === 0) return [];
  sendEach(control, left, 'SIGTERM');
  sendEach(control, (await untilNone(look, KILL_AFTER_MS)) ?? [], 'SIGKILL');
  return left.map(described);
}

/**
 * The processes the build started that still run outside its session (a daemon that called
 * setsid), found by the token `token` in {@link BUILD_RUN_ENV} of their environment or by the
 * build's `mark` ({@link buildMark}); those that end within {@link DETACHED_SETTLE_MS} ms are not
 * named. Build daemons that serve requests ({@link SERVING_DAEMONS}) are left out. None is
 * signalled: such a process is the user's to stop. One that drops both marks (sets the limit
 * itself), or that the build has another process start (systemd-run, at, ssh), is not found.
 * @param sinceMs when the build was spawned (epoch ms).
 * @returns the ones still running, [] when none or where processes cannot be listed (off Linux).
 */
export async function awaitDetached(
  { token, mark }: { token: string; mark?: number | undefined },
  sinceMs: number,
  signal?: AbortSignal,
  host: ProcHost = localHost,
): Promise<LeftProcess[]> {
  const carried = { variable: BUILD_RUN_ENV, value: token, fileLocks: mark };
  const look = async () => ((await processesCarrying(carried, sinceMs, host)) ?? []).filter((p) => !serves(p));
  return ((await untilNone(look, DETACHED_SETTLE_MS, signal)) ?? []).map(described);
}

/** Looks with `look` every {@link POLL_MS} ms until it finds none or `ms` ms have passed: what it found last; undefined when `signal` aborts. */
async function untilNone<T>(look: () => Promise<T[]>, ms: number, signal?: AbortSignal): Promise<T[] | undefined> {
  const deadline = Date.now() + ms;
  let left = await look();
  while (left.length > 0 && Date.now() < deadline) {
    if (!(await pause(POLL_MS, signal))) return undefined;
    left = await look();
  }
  return left;
}

function serves(process: ProcessInfo): boolean {
  return process.args.some((arg) => SERVING_DAEMONS.some((main) => arg === main || arg.endsWith(`.${main}`)));
}

function described(process: ProcessInfo): LeftProcess {
  return { pid: process.pid, command: process.args.length > 0 ? process.args.join(' ') : process.name };
}

function sendEach(control: Signaller, processes: readonly ProcessInfo[], name: NodeJS.Signals): void {
  for (const p of processes) {
    try {
      control.kill(p.pid, name);
    } catch {
      // already gone
    }
  }
}
