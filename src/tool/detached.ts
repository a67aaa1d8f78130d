/**
 * Running a command that may start the app and outlive this run (`--restart-command`). Unlike a
 * build (build.ts), it runs detached from the start: in a session of its own (setsid: no terminal,
 * so Ctrl-C at the terminal never reaches it; on Windows a hidden process without our console),
 * stdin from /dev/null, stdout and stderr appended to a log file, not a pipe to this process (the
 * app it starts keeps writing there after this process exits). Nothing of it is ever signalled,
 * killed or waited for: its exit is only observed while this process runs, and it keeps nothing
 * of this process alive.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { exitStatus } from './build.js';

/** How a detached command ended: its exit status (128+N for signal N) after `durationMs` ms. */
interface DetachedExit {
  exitCode: number;
  durationMs: number;
}

/** A command started by {@link startDetached}. */
export interface DetachedCommand {
  /** Its process id (the shell's), when it could be started. */
  pid: number | undefined;
  /** The log file its output goes to (absolute). */
  log: string;
  /** How it ended, once it has exited while this process runs; undefined while it runs. */
  exit(): DetachedExit | undefined;
  /** Calls `listener` once it exits (at once when it has); never when this process ends first. */
  onExit(listener: (exit: DetachedExit) => void): void;
}

/** The exit status of a command that could not be started at all (a shell's "command not found"). */
const NOT_STARTED = 127;

/** Opened write-only at the end (every writer appends), emptied, never through a symbolic link. */
const LOG_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND | (fs.constants.O_NOFOLLOW ?? 0);

/**
 * Starts `command` in the platform's shell (`/bin/sh -c`, or `%ComSpec% /d /s /c`), detached as
 * the module says, its output into `log` (emptied first; a previous app still writing there
 * appends after it). Node's own spawn, not execa: its `detached` is the same setsid, but its types
 * take no file descriptor above 9, and its `{file}` output is piped through this process, so the
 * app's output would stop (and its writes fail) once this process exits.
 * @param options.env the command's whole environment.
 * @throws Error when `log` cannot be opened (a symbolic link, a folder, no permission).
 */
export function startDetached(command: string, options: { cwd: string; env: NodeJS.ProcessEnv; log: string }): DetachedCommand {
  const fd = fs.openSync(options.log, LOG_FLAGS, 0o644);
  const started = performance.now();
  let ended: DetachedExit | undefined;
  const listeners: Array<(exit: DetachedExit) => void> = [];
  const end = (exitCode: number): void => {
    if (ended !== undefined) return;
    ended = { exitCode, durationMs: Math.round(performance.now() - started) };
    for (const listener of listeners.splice(0)) listener(ended);
  };
  try {
    const child = spawn(command, {
      shell: true,
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', fd, fd],
      detached: true,
      windowsHide: true,
    });
    child.once('exit', (code, signal) => end(exitStatus(code ?? undefined, signal ?? undefined)));
    child.once('error', (error) => {
      // Not started at all (no shell, a missing cwd): said in the log, as a shell would say it, with its exit status.
      fs.appendFileSync(options.log, `${error.message}\n`);
      end(NOT_STARTED);
    });
    child.unref();
    return {
      pid: child.pid,
      log: options.log,
      exit: () => ended,
      onExit: (listener) => (ended === undefined ? listeners.push(listener) : listener(ended)),
    };
  } finally {
    // The child has its own copy; ours would only keep the file open.
    fs.closeSync(fd);
  }
}

/** How much of the log one look reads at a time, in bytes; a line longer than that is shown in pieces. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Follows a log file as it grows, from its start: each {@link LogFollower.read} gives what was
 * written since, in whole lines (a line still being written waits for its end, unless it is
 * longer than a chunk or `all` is asked). Never throws: a log gone or unreadable reads as empty.
 */
export class LogFollower {
  private at = 0;
  private pending = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly file: string) {}

  /** The text written since the last read, up to its last line end (`all`: to the end of the file); '' when nothing new. */
  read(all = false): string {
    for (let piece = this.chunk(); piece.length > 0; piece = this.chunk()) this.pending += this.decoder.write(piece);
    const cut = all || this.pending.length >= CHUNK_BYTES ? this.pending.length : this.pending.lastIndexOf('\n') + 1;
    const text = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    return text;
  }

  /** The last `count` lines of the file that hold more than blanks (of its last {@link CHUNK_BYTES} bytes). */
  lastLines(count: number): string[] {
    let size = 0;
    try {
      size = fs.statSync(this.file).size;
    } catch {
      // gone: no lines
    }
    return this.readRange(Math.max(0, size - CHUNK_BYTES))
      .toString('utf8')
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '')
      .slice(-count);
  }

  private chunk(): Buffer {
    const piece = this.readRange(this.at);
    this.at += piece.length;
    return piece;
  }

  /** Up to {@link CHUNK_BYTES} bytes from `position`. */
  private readRange(position: number): Buffer {
    let fd: number;
    try {
      fd = fs.openSync(this.file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    } catch {
      return Buffer.alloc(0);
    }
    try {
      const buffer = Buffer.alloc(CHUNK_BYTES);
      return buffer.subarray(0, fs.readSync(fd, buffer, 0, CHUNK_BYTES, position));
    } catch {
      return Buffer.alloc(0);
    } finally {
      fs.closeSync(fd);
    }
  }
}
