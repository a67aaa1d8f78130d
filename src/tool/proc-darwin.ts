/**
 * Process facts on macOS, from `ps` and `lsof` (with `LC_ALL=C`). `ps -o lstart=` gives local
 * time to the second, so in a repeated daylight-saving hour the range covers both instants.
 * macOS `ps` has no session id (its `sess` is a kernel pointer), so `sid` is undefined.
 */
import { startRange, type CommandLine, type ProcessInfo, type ProcHost, type StartTime } from './proc-host.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LSTART = /([A-Z][a-z]{2})\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+(\d{4})/;

/** Offsets a daylight-saving change can repeat a local time by (30 min on Lord Howe Island, 2 h historically). */
const REPEAT_OFFSETS_MS = [30, 60, 120].flatMap((minutes) => [-minutes * 60_000, minutes * 60_000]);

/**
 * One `ps -o lstart=` value (local time of this machine), or undefined when it is not one:
 * a bad field, a weekday that does not fit the date (another locale's output), or a local
 * time that does not exist.
 * @internal for its tests
 */
export function parseLstart(text: string): StartTime | undefined {
  const match = new RegExp(`^\\s*${LSTART.source}\\s*$`).exec(text);
  if (!match) return undefined;
  const [, weekday, monthName, day, hour, minute, second, year] = match;
  const fields = [Number(year), MONTHS.indexOf(monthName!), Number(day), Number(hour), Number(minute), Number(second)] as const;
  if (fields[1] < 0 || WEEKDAYS[new Date(Date.UTC(fields[0], fields[1], fields[2])).getUTCDay()] !== weekday) return undefined;
  const showsFields = (ms: number): boolean => {
    const d = new Date(ms);
    const shown = [d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
    return shown.every((value, i) => value === fields[i]);
  };
  const guess = new Date(...fields).getTime();
  const instants = [guess, ...REPEAT_OFFSETS_MS.map((offset) => guess + offset)].filter(showsFields);
  if (instants.length === 0) return undefined;
  // The second printed is truncated: the start lies in [instant, instant + 1 s).
  return startRange(Math.min(...instants), Math.max(...instants) + 1000);
}

export async function darwinStartTime(pid: number, host: ProcHost): Promise<StartTime | undefined> {
  const out = await host.run('ps', ['-o', 'lstart=', '-p', String(pid)]);
  return out === undefined ? undefined : parseLstart(out);
}

/** `ps -o state= -p <pid>`: its state letters (`T` first when stopped), or undefined. */
export async function darwinState(pid: number, host: ProcHost): Promise<string | undefined> {
  const state = (await host.run('ps', ['-o', 'state=', '-p', String(pid)]))?.trim();
  return state === undefined || state === '' ? undefined : state;
}

/**
 * The `n` line of `lsof -a -p <pid> -d cwd -Fn` output (`p<pid>`, `fcwd`, `n<path>`).
 * @internal for its tests
 */
export function parseLsofCwd(text: string): string | undefined {
  const lines = text.split('\n');
  const fd = lines.indexOf('fcwd');
  const name = fd < 0 ? undefined : lines.slice(fd + 1).find((line) => line.startsWith('n'));
  return name === undefined || name.length < 2 ? undefined : name.slice(1);
}

/** `ps -ww -o args= -p <pid>`: the arguments joined by spaces, split again on whitespace. */
export async function darwinCommandLine(pid: number, host: ProcHost): Promise<CommandLine | undefined> {
  const out = await host.run('ps', ['-ww', '-o', 'args=', '-p', String(pid)]);
  const args = out
    ?.trim()
    .split(/\s+/)
    .filter((arg) => arg !== '');
  return args === undefined || args.length === 0 ? undefined : { args, exact: false, env: undefined };
}

export async function darwinCwd(pid: number, host: ProcHost): Promise<string | undefined> {
  const out = await host.run('lsof', ['-a', '-p', String(pid), '-d', 'cwd', '-Fn']);
  return out === undefined ? undefined : parseLsofCwd(out);
}

/**
 * The arguments for a `ps` listing of every process that `parsePsTable` reads. Each keyword
 * has its own `-o`: in BSD `ps`, `pid=,pgid=` would make `,pgid=` the header of `pid`.
 * @internal for its tests
 */
export const PS_TABLE_ARGS = ['-A', '-o', 'pid=', '-o', 'ppid=', '-o', 'pgid=', '-o', 'state=', '-o', 'lstart=', '-o', 'comm='];

const PS_ROW = new RegExp(`^\\s*(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)\\s+(${LSTART.source})\\s+(.*)$`);

/**
 * The rows of a `ps ${PS_TABLE_ARGS}` listing; a line that is not a row is skipped.
 * @internal for its tests
 */
export function parsePsTable(text: string): ProcessInfo[] {
  const rows: ProcessInfo[] = [];
  for (const line of text.split('\n')) {
    const match = PS_ROW.exec(line);
    if (!match) continue;
    rows.push({
      pid: Number(match[1]),
      ppid: Number(match[2]),
      pgid: Number(match[3]),
      sid: undefined,
      state: match[4]!,
      name: match.at(-1)!.trimEnd(),
      args: [],
      start: parseLstart(match[5]!),
    });
  }
  return rows;
}

export async function darwinScan(host: ProcHost, keep: (row: ProcessInfo) => boolean): Promise<ProcessInfo[] | undefined> {
  const out = await host.run('ps', PS_TABLE_ARGS);
  return out === undefined ? undefined : parsePsTable(out).filter(keep);
}
