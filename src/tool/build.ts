/**
 * A build command of a run: checked before anything is sent to the agent ({@link prepareBuild}),
 * then run with the run's host and told as events ({@link spawnBuild}).
 *
 * It runs ({@link runBuild}) with the terminal's stdio, and stops on SIGINT/SIGTERM. In a terminal
 * the child shares our process group, so Ctrl-C reaches it once; without one (CI, pipes) it gets its
 * own group, to which SIGINT and SIGTERM are forwarded. A child still running 5 s after the signal
 * is killed; if we exit while it runs (a second Ctrl-C), its own group is killed on the way out (a
 * shared one gets the Ctrl-C, and execa's cleanup). A build is over only when the rest of its
 * processes are too (build-group.ts). A failed build's `--json` result carries the last lines it
 * wrote (`build.output`, {@link OutputTail}), so that a script or a coding agent sees the
 * compiler's errors without the log.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import which from 'which';
import type { BuildGroup, BuildRun, StopSignal, ToolKind } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { Outcome } from '../outcome/outcome.js';
import { awaitBuildProcesses, awaitDetached, BUILD_RUN_ENV, buildScope, markedSpawn, type BuildScope } from './build-group.js';
import type { ProcHost } from './proc.js';
import { type BuildCommand, describeCommand, neverEndingArgument, resolveBuildCommand } from './resolve.js';
import { planSpawn } from './windows.js';

/** The environment variable set for the build command, and refused when already set (no nesting). */
export const NESTED_ENV = 'RECLAZZ_SAFE_BUILD_ACTIVE';

/** What a build needs of the process it runs from (session/options.ts `Host` is one). */
export interface BuildHost extends ProcessControl {
  /** Folder the build runs in (absolute). */
  cwd: string;
  /** The build's environment: it finds its tool on its PATH. */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** True when the user's terminal delivers Ctrl-C to the build itself (stdin is a TTY). */
  sharesTerminal: boolean;
  /** Where the build's processes are looked up (/proc on Linux). */
  proc: ProcHost;
  /** This process: never one of the build's leftovers. */
  pid: number;
}

/** What to build and where its output goes (session/options.ts `CycleOptions` has these). */
export interface BuildOptions {
  /** `gradle`, `mvn`, or `command` (then `args[0]` is the executable). */
  tool: ToolKind;
  /** Arguments passed to the build tool untouched. */
  args: string[];
  /** Where the build tool's stdout goes: `inherit` (default) or `stderr` (with `--json`: stdout carries only JSON lines). */
  buildStdout?: 'inherit' | 'stderr';
  /** Keep the last lines the build writes, for a failed build's result (`build.output`); they pass through pipes of ours. */
  keepBuildOutput?: boolean;
}

/**
 * The build command of a cycle, checked before anything is sent to the agent: not nested in another
 * safe build, resolvable (wrapper script or tool), not never-ending, found and executable; or the refusal.
 */
export async function prepareBuild(
  options: Pick<BuildOptions, 'tool' | 'args'>,
  host: Pick<BuildHost, 'cwd' | 'env' | 'platform'>,
): Promise<{ kind: 'ok'; command: BuildCommand } | { kind: 'refused'; outcome: Outcome; command?: BuildCommand }> {
  if (host.env[NESTED_ENV] === '1') return { kind: 'refused', outcome: { reason: 'nested', variable: NESTED_ENV } };
  let command: BuildCommand;
  try {
    command = resolveBuildCommand(options.tool, options.args, { cwd: host.cwd, platform: host.platform });
  } catch (error) {
    return { kind: 'refused', outcome: { reason: 'usage', problem: { kind: 'input', text: (error as Error).message, forBuild: true } } };
  }
  const never = neverEndingArgument(command);
  if (never !== undefined)
    return { kind: 'refused', outcome: { reason: 'usage', problem: { kind: 'never-ending', argument: never } }, command };
  const executable = await checkExecutable(command, host.platform, host.env);
  if (executable.kind === 'not-executable')
    return { kind: 'refused', outcome: { reason: 'command-not-executable', path: executable.path }, command };
  if (executable.kind === 'missing')
    return { kind: 'refused', outcome: { reason: 'command-not-found', file: command.file, tool: command.kind }, command };
  return { kind: 'ok', command };
}

/** Where a build runs and who hears of it. */
export interface BuildPlace {
  host: BuildHost;
  emit: (event: RunEvent) => void;
  signal: AbortSignal | undefined;
  /** Records the build's process group with the run lock (a session that holds it); false when it could not be written. */
  recordBuild?: ((group: BuildGroup) => boolean) | undefined;
}

/**
 * Runs `command` ({@link runBuild}) with {@link NESTED_ENV}=1 added (a safe build inside it refuses to
 * start), told as `build-start` and `build-end`; leftovers that had to be stopped are named in a warning.
 * @param held whether it runs under the hold (false: `--allow-no-agent`).
 */
export async function spawnBuild(
  place: BuildPlace,
  command: BuildCommand,
  options: Pick<BuildOptions, 'buildStdout' | 'keepBuildOutput'>,
  classDirs: string[],
  held: boolean,
): Promise<BuildRun> {
  const { host, emit, signal } = place;
  const moved = command.movedFrom === undefined ? {} : { movedFrom: command.movedFrom };
  emit({ type: 'build-start', command: describeCommand(command), wrapper: command.wrapper, cwd: command.cwd, ...moved, classDirs, held });
  const build = await runBuild(command, {
    stdoutToStderr: options.buildStdout === 'stderr',
    keepOutput: options.keepBuildOutput === true,
    env: { ...host.env, [NESTED_ENV]: '1' },
    process: host,
    proc: host.proc,
    sharesTerminal: host.sharesTerminal,
    platform: host.platform,
    self: host.pid,
    onGroup: (group) => {
      if (place.recordBuild?.(group) === false) emit({ type: 'warning', kind: 'group-not-recorded', pgid: group.pgid });
    },
    ...(signal === undefined ? {} : { signal }),
  });
  if (build.stopped !== undefined) emit({ type: 'warning', kind: 'stopped-leftovers', stopped: build.stopped });
  emit({
    type: 'build-end',
    exitCode: build.exitCode,
    durationMs: build.durationMs,
    ...(build.signal === undefined ? {} : { signal: build.signal }),
  });
  return build;
}

/** How long a signalled build may take to stop before it is killed, in ms. */
const KILL_AFTER_MS = 5000;

/**
 * What spawning needs of the process it runs in (cli/ supplies the real one): sending a signal
 * to a process or process group, and a hook for the moment it exits.
 * @internal for its tests (the rest of the code gives a {@link BuildHost})
 */
export interface ProcessControl {
  kill(pid: number, signal: NodeJS.Signals): void;
  /** Calls `listener` when the process exits; returns a function that removes it. */
  onExit(listener: () => void): () => void;
}

/** Options for {@link runBuild}. */
interface RunBuildOptions {
  /** The child's whole environment (nothing else is inherited); its PATH finds the tool. */
  env: NodeJS.ProcessEnv;
  process: ProcessControl;
  /** Where the build's processes are looked up (/proc on Linux); default: this machine's. */
  proc?: ProcHost;
  /** True when the user's terminal delivers Ctrl-C to the child itself (stdin is a TTY). */
  sharesTerminal: boolean;
  /** Aborted with reason `'SIGINT'` or `'SIGTERM'` when we are asked to stop. */
  signal?: AbortSignal;
  /** Send the child's stdout to our stderr (fd 2) instead of our stdout. */
  stdoutToStderr?: boolean;
  /**
   * Keep the last lines the child writes ({@link BuildRun.output}): its stdout and stderr then
   * pass through pipes of ours to the same places, so a build that tests for a terminal sees none.
   */
  keepOutput?: boolean;
  /** Platform, for Windows script handling. */
  platform: NodeJS.Platform;
  /** Our own pid (a build sharing the terminal shares our process group). */
  self: number;
  /** Called once the build's process group is known, for the run lock's record (see build-group.ts). */
  onGroup?: (group: BuildGroup) => void;
}

/** Whether the build command can be started: found and executable, missing, or a file without execute permission. */
type ExecutableCheck = { kind: 'ok'; path: string } | { kind: 'missing' } | { kind: 'not-executable'; path: string };

/**
 * Checks `command.file` before anything is sent to the agent: a name on PATH, a path (a wrapper
 * script, `./build.sh`) directly, so that a file without execute permission is told from a missing one.
 * @internal for its tests (the rest of the code asks {@link prepareBuild})
 */
export async function checkExecutable(command: BuildCommand, platform: NodeJS.Platform, env: NodeJS.ProcessEnv): Promise<ExecutableCheck> {
  // Synchronous: the lookup stats PATH entries one after another, and nothing else runs meanwhile.
  const found = which.sync(command.file, { nothrow: true, path: env.PATH ?? '' });
  if (found !== null) return { kind: 'ok', path: found };
  const isPath = command.file.includes('/') || (platform === 'win32' && command.file.includes('\\'));
  if (isPath && platform !== 'win32') {
    const file = path.resolve(command.cwd, command.file);
    try {
      if (fs.statSync(file).isFile()) return { kind: 'not-executable', path: file };
    } catch {
      // missing
    }
  }
  return { kind: 'missing' };
}

/**
 * Spawns the build command with inherited stdio and waits for it to end. Never rejects for
 * the child's own failure: a non-zero exit status is data.
 * @throws Error only when the process cannot be spawned at all (for example ENOENT).
 * @internal for its tests (the rest of the code runs a build by {@link spawnBuild})
 */
export async function runBuild(command: BuildCommand, options: RunBuildOptions): Promise<BuildRun> {
  const started = performance.now();
  const ownGroup = !options.sharesTerminal && options.platform !== 'win32';
  const { plan, mark } = spawnPlan(command, options);
  // Marks every process this build starts, those that leave its session too (build-group.ts).
  const token = randomUUID();
  const beforeMs = Date.now();
  const child = execa(plan.file, plan.args, {
    windowsVerbatimArguments: plan.windowsVerbatimArguments,
    cwd: command.cwd,
    stdio: options.keepOutput
      ? ['inherit', [options.stdoutToStderr ? 2 : 1, 'pipe'], [2, 'pipe']]
      : ['inherit', options.stdoutToStderr ? 2 : 'inherit', 'inherit'],
    // Kept output is read as it comes (OutputTail), never gathered whole.
    buffer: false,
    reject: false,
    detached: ownGroup,
    cleanup: true,
    windowsHide: false,
    env: { ...options.env, [BUILD_RUN_ENV]: token },
    extendEnv: false,
  });
  const afterMs = Date.now();
  const scoped =
    child.pid === undefined
      ? Promise.resolve(undefined)
      : buildScope(child.pid, ownGroup, { beforeMs, afterMs, self: options.self, command: describeCommand(command) }, options.proc).catch(
          () => undefined,
        );
  void scoped.then((found) => found && options.onGroup?.(found.record));
  const tail = options.keepOutput ? new OutputTail() : undefined;
  if (tail !== undefined)
    for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => tail.push(stream, chunk));
  let interruptedBy: StopSignal | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    interruptedBy = (options.signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT') as StopSignal;
    const pid = child.pid;
    if (pid === undefined) return;
    const alreadyDelivered = interruptedBy === 'SIGINT' && options.sharesTerminal;
    if (!alreadyDelivered) signalChild(options.process, pid, ownGroup, interruptedBy);
    killTimer = setTimeout(() => signalChild(options.process, pid, ownGroup, 'SIGKILL'), KILL_AFTER_MS);
    killTimer.unref();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  const onExit = (): void => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
      signalChild(options.process, child.pid, true, 'SIGKILL');
  };
  const unlisten = ownGroup ? options.process.onExit(onExit) : () => undefined;
  try {
    // The build ends when its process exits (and the rest of its group, below), not when its output pipes close:
    // a process it daemonised outside the group (setsid) keeps them open for as long as it runs.
    await Promise.race([new Promise((resolve) => child.once('exit', resolve)), child]);
    const durationMs = Math.round(performance.now() - started);
    const stopped = interruptedBy === undefined ? await lingering(await scoped, options) : [];
    const detached =
      interruptedBy === undefined ? await awaitDetached({ token, mark }, beforeMs, options.signal, options.proc).catch(() => []) : [];
    await Promise.all([child.stdout, child.stderr].map((stream) => stream && outputDrained(stream)));
    const result = await child;
    if (result.failed && result.exitCode === undefined && result.signal === undefined) {
      throw new Error(result.originalMessage ?? result.shortMessage);
    }
    const exitCode = exitStatus(result.exitCode, result.signal);
    return {
      exitCode,
      ...(result.signal === undefined ? {} : { signal: result.signal }),
      durationMs,
      ...(interruptedBy === undefined ? {} : { interruptedBy }),
      ...(stopped.length === 0 ? {} : { stopped }),
      ...(detached.length === 0 ? {} : { detached }),
      ...(tail === undefined ? {} : { output: tail.end() }),
    };
  } finally {
    if (killTimer !== undefined) clearTimeout(killTimer);
    options.signal?.removeEventListener('abort', onAbort);
    unlisten();
  }
}

/**
 * How the build's process is started: a batch file on Windows with a cmd.exe line written by
 * windows.ts, not cross-spawn's; on Linux marked for {@link awaitDetached} (build-group.ts).
 */
function spawnPlan(command: BuildCommand, options: RunBuildOptions) {
  const resolved =
    options.platform === 'win32'
      ? (which.sync(command.file, { nothrow: true, path: options.env.PATH ?? '' }) ?? command.file)
      : command.file;
  return markedSpawn(planSpawn(resolved, command.args, options.platform, options.env.ComSpec ?? 'cmd.exe'), options.platform);
}

/** How long a kept output pipe may stay quiet after the build ended before it is closed, in ms. */
const DRAIN_MS = 100;

/**
 * Waits until `stream` (a kept output pipe, read as it comes) ends, or stays quiet for {@link DRAIN_MS}
 * while it flows and holds nothing unread, then destroys it: the build and its group have ended by
 * then, so what still holds its other end is a process outside the build. execa reads a destroyed
 * output stream as an abort and resolves without it. A stream paused by a slow reader of ours is waited for.
 */
function outputDrained(stream: Readable): Promise<void> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let chunks = 0;
    const onData = (): void => {
      chunks += 1;
    };
    const done = (): void => {
      clearTimeout(timer);
      stream.off('data', onData).off('close', done).off('end', done);
      if (!stream.destroyed && !stream.readableEnded) stream.destroy();
      resolve();
    };
    const quiet = (): boolean => stream.readableLength === 0 && stream.readableFlowing !== false;
    const look = (): void => {
      const before = chunks;
      // Looked at after the poll phase (setImmediate), where data the pipe still holds would have come in.
      timer = setTimeout(() => setImmediate(() => (chunks === before && quiet() ? done() : look())), DRAIN_MS);
    };
    stream.on('data', onData).once('close', done).once('end', done);
    look();
  });
}

/** Waits for the rest of the build's processes (build-group.ts); those that had to be stopped. */
async function lingering(found: { scope: BuildScope } | undefined, options: RunBuildOptions) {
  if (found === undefined || options.signal?.aborted) return [];
  return awaitBuildProcesses(found.scope, options.process, options.signal, options.proc).catch(() => []);
}

function signalChild(control: ProcessControl, pid: number, group: boolean, signal: NodeJS.Signals): void {
  try {
    control.kill(group ? -pid : pid, signal);
  } catch {
    // already gone
  }
}

/** A process's exit status: its exit code, or 128+N when signal N ended it (1 for a signal without a number here). */
export function exitStatus(exitCode: number | undefined, signal: string | undefined): number {
  const signalNumber = signal === undefined ? undefined : (os.constants.signals as Record<string, number | undefined>)[signal];
  return exitCode ?? (signalNumber === undefined ? 1 : 128 + signalNumber);
}

/** At most this many lines are kept: the end of a failed build is where its errors are summed up. */
const TAIL_LINES = 40;
/** A longer line is cut to this many characters and an ellipsis. */
const LINE_CHARS = 300;

/** Terminal control sequences (colours, cursor moves) and other control characters but tab: noise outside a terminal. */
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * Keeps the last {@link TAIL_LINES} lines of one or more streams, in the order their lines
 * end; each stream's partial line stays its own until its newline (or the end).
 * @internal for its tests (the rest of the code reads a build's `output`)
 */
export class OutputTail {
  private readonly lines: string[] = [];
  private readonly partial = new Map<object, { decoder: StringDecoder; text: string }>();

  /** Adds a chunk of `stream`'s bytes. */
  push(stream: object, chunk: Buffer | string): void {
    let state = this.partial.get(stream);
    if (state === undefined) this.partial.set(stream, (state = { decoder: new StringDecoder('utf8'), text: '' }));
    const pieces = (state.text + (typeof chunk === 'string' ? chunk : state.decoder.write(chunk))).split('\n');
    // Only the unfinished line is held, bounded: a line that never ends cannot grow the memory.
    state.text = pieces.pop()!.slice(0, LINE_CHARS * 4);
    for (const piece of pieces) this.add(piece);
  }

  /** The lines kept, oldest first, each stream's unfinished line last; control sequences removed. */
  end(): string[] {
    for (const state of this.partial.values()) if (state.text !== '') this.add(state.text);
    this.partial.clear();
    return [...this.lines];
  }

  private add(raw: string): void {
    // A progress line redraws itself after a carriage return: its last state is what was seen.
    const text = (raw.endsWith('\r') ? raw.slice(0, -1) : raw).split('\r').at(-1)!.replace(CONTROL, '').trimEnd();
    this.lines.push(text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS)}…` : text);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }
}
