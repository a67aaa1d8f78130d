/**
 * A recorded machine for the process-fact tests: files, links and directories of a /proc,
 * command outputs keyed by their command line, and a clock.
 */
import type { ProcHost } from '../../src/tool/proc.js';

export interface Recording {
  platform: NodeJS.Platform;
  files?: Record<string, string>;
  /** Binary files (an auxiliary vector). */
  bytes?: Record<string, Buffer>;
  links?: Record<string, string>;
  dirs?: Record<string, string[]>;
  /** Output by `file arg1 arg2 ...`; a missing key is a command that failed. */
  commands?: Record<string, string>;
  /** Each call of `now()` takes the next value; the last one repeats. */
  clock?: number[];
}

/** A host that replays `recording`, with the command lines and files it was asked for. */
export function recordedHost(recording: Recording): ProcHost & { ran: string[]; read: string[] } {
  const clock = [...(recording.clock ?? [1_800_000_000_000])];
  const ran: string[] = [];
  const read: string[] = [];
  return {
    platform: recording.platform,
    ran,
    read,
    readText: (file) => {
      read.push(file);
      return recording.files?.[file];
    },
    readBytes: (file) => {
      read.push(file);
      return recording.bytes?.[file];
    },
    readLink: (file) => {
      read.push(file);
      return recording.links?.[file];
    },
    listDir: (dir) => {
      read.push(dir);
      return recording.dirs?.[dir];
    },
    run: async (file, args) => {
      const line = [file, ...args].join(' ');
      ran.push(line);
      return recording.commands?.[line];
    },
    now: () => (clock.length > 1 ? clock.shift()! : clock[0]!),
  };
}

/** A `/proc/<pid>/stat` line as Linux 6 writes it, with the fields the tests vary. */
export function statLine(fields: {
  pid: number;
  comm: string;
  state?: string;
  ppid?: number;
  pgid: number;
  sid: number;
  startTicks: number;
}): string {
  const { pid, comm, state = 'S', ppid = 1, pgid, sid, startTicks } = fields;
  // Fields 7..21 between the session id and the start time, as recorded from a real `sleep`.
  const middle = '0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0';
  return `${pid} (${comm}) ${state} ${ppid} ${pgid} ${sid} ${middle} ${startTicks} 3133440 411 18446744073709551615 0 0 0 0 17 1 0 0 0\n`;
}
