/**
 * Process facts on Linux, from /proc (proc(5)). A start time (field 22 of `stat`, USER_HZ ticks
 * since boot) becomes wall-clock time through now minus `/proc/uptime`, not `btime`, which is
 * whole seconds and was seen 0.88 s off. The error is at most about 11 ms with 10 ms ticks.
 */
import os from 'node:os';
import { startRange, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';

/** The fields of `/proc/<pid>/stat` this module uses. */
export interface LinuxStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  startTicks: number;
}

/**
 * The fields of one `/proc/<pid>/stat` line, or undefined when it is not one. `comm` may hold
 * spaces and parentheses (a program can name itself anything): it is the text between the
 * first `(` and the last `)`, and the numbered fields follow the last `)`.
 */
export function parseLinuxStat(text: string | undefined): LinuxStat | undefined {
  if (text === undefined) return undefined;
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => {
    const value = rest[n - 3];
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  };
  const stat: LinuxStat = {
    pid: /^\s*\d+\s*$/.test(text.slice(0, open)) ? Number(text.slice(0, open)) : NaN,
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '',
    ppid: field(4),
    pgid: field(5),
    sid: field(6),
    startTicks: field(22),
  };
  const numbers = [stat.pid, stat.ppid, stat.pgid, stat.sid, stat.startTicks];
  return /^[A-Za-z]$/.test(stat.state) && numbers.every(Number.isSafeInteger) ? stat : undefined;
}

/**
 * `/proc/<pid>/cmdline`: NUL-separated arguments, the last one NUL-terminated.
 * @internal for its tests
 */
export function parseCmdline(text: string | undefined): string[] {
  if (!text) return [];
  const args = text.split('\0');
  if (args.at(-1) === '') args.pop();
  return args;
}

/**
 * Seconds since boot from `/proc/uptime`, in ms, and how coarse the printed figure is.
 * @internal for its tests
 */
export function parseUptime(text: string | undefined): { uptimeMs: number; resolutionMs: number } | undefined {
  const match = /^(\d+)(?:\.(\d{1,9}))?\s/.exec(text ?? '');
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  return {
    uptimeMs: Number(match[1]) * 1000 + (fraction ? Number(fraction) / 10 ** (fraction.length - 3) : 0),
    resolutionMs: 10 ** (3 - fraction.length),
  };
}

/** USER_HZ when the kernel does not say; it is 100 on x86, ARM, RISC-V and POWER (glibc's `sysconf` answers the same). */
const DEFAULT_CLOCK_TICKS = 100;
/** The auxiliary-vector entry that carries USER_HZ (`AT_CLKTCK` in Linux's `auxvec.h`). */
const AT_CLKTCK = 17;
const clockTicksByHost = new WeakMap<ProcHost, number>();

/**
 * USER_HZ, the unit of start times in `/proc/<pid>/stat`, from `/proc/self/auxv` (where `getconf
 * CLK_TCK` reads it, without starting a process). Read once per host.
 */
function clockTicks(host: ProcHost): number {
  let ticks = clockTicksByHost.get(host);
  if (ticks === undefined) {
    ticks = auxvClockTicks(host.readBytes('/proc/self/auxv'), process.arch) ?? DEFAULT_CLOCK_TICKS;
    clockTicksByHost.set(host, ticks);
  }
  return ticks;
}

/** Architectures whose auxiliary vector has 4-byte words (Node's `process.arch` names). */
const WORD32 = new Set(['arm', 'ia32', 'mips', 'mipsel', 'ppc']);

/**
 * `AT_CLKTCK` from an auxiliary vector (pairs of machine words, type then value, in the host's
 * byte order, ended by type 0); undefined when it is missing, zero or the bytes are cut short.
 * @param arch `process.arch` of the process whose vector this is: it fixes the word size.
 * @internal for its tests
 */
export function auxvClockTicks(bytes: Buffer | undefined, arch: string): number | undefined {
  if (bytes === undefined) return undefined;
  const word = WORD32.has(arch) ? 4 : 8;
  const little = os.endianness() === 'LE';
  const read = (at: number): number =>
    word === 4
      ? little
        ? bytes.readUInt32LE(at)
        : bytes.readUInt32BE(at)
      : Number(little ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at));
  for (let at = 0; at + 2 * word <= bytes.length; at += 2 * word) {
    const type = read(at);
    if (type === 0) return undefined;
    if (type === AT_CLKTCK) {
      const value = read(at + word);
      return Number.isSafeInteger(value) && value > 0 ? value : undefined;
    }
  }
  return undefined;
}

/** The boot time's range (epoch ms) and the tick length, read once for a lookup or a scan. */
interface BootClock {
  bootLowMs: number;
  bootHighMs: number;
  tickMs: number;
}

async function bootClock(host: ProcHost): Promise<BootClock | undefined> {
  const tickMs = 1000 / clockTicks(host);
  const before = host.now();
  const uptime = parseUptime(host.readText('/proc/uptime'));
  const after = host.now();
  if (!uptime) return undefined;
  // The true uptime lies in [uptime, uptime + resolution) and the true now in [before, after + 1).
  return { bootLowMs: before - uptime.uptimeMs - uptime.resolutionMs, bootHighMs: after + 1 - uptime.uptimeMs, tickMs };
}

function startOf(clock: BootClock, ticks: number): StartTime {
  return startRange(clock.bootLowMs + ticks * clock.tickMs, clock.bootHighMs + (ticks + 1) * clock.tickMs);
}

export async function linuxStartTime(pid: number, host: ProcHost): Promise<StartTime | undefined> {
  const clock = await bootClock(host);
  const stat = parseLinuxStat(host.readText(`/proc/${pid}/stat`));
  return clock && stat ? startOf(clock, stat.startTicks) : undefined;
}

/** The state letter of `/proc/<pid>/stat` (`R`, `S`, `T` stopped by a signal, `t` by a tracer, ...), or undefined. */
export function linuxState(pid: number, host: ProcHost): string | undefined {
  return parseLinuxStat(host.readText(`/proc/${pid}/stat`))?.state;
}

export function linuxCwd(pid: number, host: ProcHost): string | undefined {
  return host.readLink(`/proc/${pid}/cwd`);
}

/**
 * The soft limit on file locks of process `pid` (`Max file locks` in `/proc/<pid>/limits`, readable
 * for every process), or undefined when unlimited, not shown or not visible.
 */
export function linuxFileLocksLimit(pid: number, host: ProcHost): number | undefined {
  const soft = host.readText(`/proc/${pid}/limits`)?.match(/^Max file locks +(\d+) /m)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/** `/proc/<pid>/environ`: NUL-separated `NAME=value` entries (an entry without `=` is skipped). */
function parseEnviron(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const env: Record<string, string> = {};
  for (const entry of text.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

export function linuxCommandLine(pid: number, host: ProcHost): CommandLine | undefined {
  const text = host.readText(`/proc/${pid}/cmdline`);
  if (text === undefined) return undefined;
  return { args: parseCmdline(text), exact: true, env: parseEnviron(host.readText(`/proc/${pid}/environ`)) };
}

/**
 * Every process visible in /proc whose stat passes `keep`, or undefined when /proc cannot be
 * read. A process that exits during the scan is skipped, not an error.
 */
export async function linuxScan(host: ProcHost, keep: (stat: LinuxStat) => boolean): Promise<ProcessInfo[] | undefined> {
  const clock = await bootClock(host);
  const names = host.listDir('/proc');
  if (!clock || !names) return undefined;
  const found: ProcessInfo[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = parseLinuxStat(host.readText(`/proc/${name}/stat`));
    if (!stat || !keep(stat)) continue;
    found.push({
      pid: stat.pid,
      ppid: stat.ppid,
      pgid: stat.pgid,
      sid: stat.sid,
      state: stat.state,
      name: stat.comm,
      args: parseCmdline(host.readText(`/proc/${name}/cmdline`)),
      start: startOf(clock, stat.startTicks),
    });
  }
  return found;
}
