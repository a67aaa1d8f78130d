/**
 * What the process facts are read from (the file system, a few commands, the clock), kept
 * behind one interface so tests can feed recorded outputs, and the shapes they are given in.
 */
import fs from 'node:fs';
import { execa } from 'execa';

/**
 * When a process started: within `[startMs - errorMs, startMs + errorMs]`, epoch ms (both may
 * be fractional). The bound is honest: it covers the clock resolution of the source and of
 * this machine's reading, so two readings of the same process always satisfy `startsMatch`.
 */
export interface StartTime {
  startMs: number;
  errorMs: number;
}

/** One process as a process-group scan sees it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** Session id (Linux), undefined where the platform does not tell it (macOS `ps` has none). */
  sid: number | undefined;
  /** State letter(s) as the platform writes them (`R`, `S`, `Z` for a zombie, ...). */
  state: string;
  /** The short command name (Linux `comm`, at most 15 bytes; macOS `ps -o comm`). */
  name: string;
  /** The argument vector (Linux `cmdline`); empty when unreadable (zombie, kernel thread, macOS). */
  args: string[];
  /** Undefined only when the platform printed a start time that could not be read. */
  start: StartTime | undefined;
}

/** A process's argument vector and environment, as far as this platform shows them. */
export interface CommandLine {
  /** The arguments, the program first. */
  args: string[];
  /** Each argument as the process got it (Linux); false where they were joined by spaces and split again (macOS `ps`). */
  exact: boolean;
  /** Its environment when it started (Linux `/proc/<pid>/environ`), or undefined where it cannot be read. */
  env: Record<string, string> | undefined;
}

/** The machine the facts are read from: the real one (`localHost`) or a recorded one in tests. */
export interface ProcHost {
  readonly platform: NodeJS.Platform;
  /** A file's text, or undefined when it does not exist or may not be read (a vanished or foreign process). */
  readText(file: string): string | undefined;
  /** A file's bytes, or undefined as for `readText`. */
  readBytes(file: string): Buffer | undefined;
  /** A symbolic link's target, or undefined as for `readText`. */
  readLink(file: string): string | undefined;
  /** A directory's entry names, or undefined as for `readText`. */
  listDir(dir: string): string[] | undefined;
  /** A command's stdout (run without a shell), or undefined when it cannot start, fails or times out. */
  run(file: string, args: readonly string[]): Promise<string | undefined>;
  /** Wall-clock time, epoch ms, truncated to whole ms like `Date.now()`. */
  now(): number;
}

/** The start time known to lie in `[lowMs, highMs]`. */
export function startRange(lowMs: number, highMs: number): StartTime {
  return { startMs: (lowMs + highMs) / 2, errorMs: (highMs - lowMs) / 2 };
}

/**
 * True when `a` and `b` can be the start of the same process: their ranges overlap (pids are not
 * reused within a few ms). A wall-clock step between the readings shifts Linux readings by it.
 */
export function startsMatch(a: StartTime, b: StartTime): boolean {
  return Math.abs(a.startMs - b.startMs) <= a.errorMs + b.errorMs;
}

/** A pid, pgid or sid this module will look up: a positive safe integer (an agent's claim is not trusted). */
export function isProcessId(id: number): boolean {
  return Number.isSafeInteger(id) && id > 0;
}

/** Error codes that mean "no such process here" or "not ours to see"; anything else is a real fault. */
const NOT_VISIBLE = new Set(['ENOENT', 'ESRCH', 'EACCES', 'EPERM', 'ENOTDIR']);

function unlessNotVisible<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (NOT_VISIBLE.has((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
}

/** Commands get this long; PowerShell can take a few seconds to start on a cold machine. */
const RUN_TIMEOUT_MS = 15_000;

/**
 * This machine. `readText`, `readLink` and `listDir` throw only for faults other than a
 * missing or forbidden entry (EMFILE, EIO): a silent undefined there could make a live process
 * group look gone. Commands run with `LC_ALL=C`, so `ps` writes its dates in English.
 */
export const localHost: ProcHost = {
  platform: process.platform,
  readText: (file) => unlessNotVisible(() => fs.readFileSync(file, 'utf8')),
  readBytes: (file) => unlessNotVisible(() => fs.readFileSync(file)),
  readLink: (file) => unlessNotVisible(() => fs.readlinkSync(file)),
  listDir: (dir) => unlessNotVisible(() => fs.readdirSync(dir)),
  // execa adds LC_ALL and LANG to the environment this process has (extendEnv), which only cli/ reads.
  run: async (file, args) => {
    const result = await execa(file, [...args], {
      env: { LC_ALL: 'C', LANG: 'C' },
      timeout: RUN_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
      windowsHide: true,
      stripFinalNewline: false,
      reject: false,
    });
    return result.failed ? undefined : result.stdout;
  },
  now: () => Date.now(),
};
