/**
 * Running the build command with the terminal's stdio, and stopping it on SIGINT/SIGTERM. In a
 * terminal the child shares our process group, so Ctrl-C reaches it once; without one (CI, pipes) it
 * gets its own group, to which SIGINT and SIGTERM are forwarded. A child still running 5 s after the
 * signal is killed; if we exit while it runs (a second Ctrl-C), its own group is killed on the way out
 * (a shared one gets the Ctrl-C, and execa's cleanup). A build is over only when the rest of its
 * processes are too (build-group.ts).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import which from 'which';
import type { BuildGroup, BuildRun, StopSignal } from '../outcome/facts.js';
import { awaitBuildProcesses, awaitDetached, BUILD_RUN_ENV, buildScope, markedSpawn, type BuildScope } from './build-group.js';
import type { ProcHost } from './proc.js';
import { describeCommand, type BuildCommand } from './resolve.js';
import { planSpawn } from './windows.js';
import { OutputTail } from './output-tail.js';

/** How long a signalled build may take to stop before it is killed, in ms. */
const KILL_AFTER_MS = 5000;

/**
 * What spawning needs of the process it runs in (cli/ supplies the real one): sending a signal
 * to a process or process group, and a hook for the moment it exits.
 */
export interface ProcessControl {
  kill(pid: number, signal: NodeJS.Signals): void;
  /** Calls `listener` when the process exits; returns a function that removes it. */
  onExit(listener: () => void): () => void;
}

/** Options for {@link runBuild}. */
export interface RunBuildOptions {
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
export type ExecutableCheck = { kind: 'ok'; path: string } | { kind: 'missing' } | { kind: 'not-executable'; path: string };

/**
 * Checks `command.file` before anything is sent to the agent: a name on PATH, a path (a wrapper
 * script, `./build.sh`) directly, so that a file without execute permission is told from a missing one.
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
