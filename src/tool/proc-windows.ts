/**
 * Process start times on Windows, as PowerShell's `StartTime...ToString('o')`
 * (`2026-12-01T08:53:05.1234567Z`) or WMI's `CreationDate` (`20261201095305.123456+060`, offset
 * in minutes) print them. Error: half the last digit, at least 1 us. Windows has no POSIX groups
 * or sessions, and no supported way to read another process's working directory.
 */
import type { ProcHost, StartTime } from './proc-host.js';

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
const WMI = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})\.(\d{6})([+-]\d{3})$/;

/** Time zones reach from UTC-12 to UTC+14. */
const MAX_OFFSET_MINUTES = 14 * 60;
/** Epoch ms near today are doubles with a step of about 0.0002 ms: no bound below 1 us is honest. */
const MIN_ERROR_MS = 0.001;

/** Epoch ms of a UTC date and time, or undefined when a field is out of range (month 13, 31 June). */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const d = new Date(ms);
  const back = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
  return back.every((value, i) => value === [year, month, day, hour, minute, second][i]) ? ms : undefined;
}

/**
 * A Windows process creation time in either form above (surrounding white space allowed), or
 * undefined when it is neither (for example the empty output of a process that is gone).
 * @internal for its tests
 */
export function parseWindowsStartTime(text: string): StartTime | undefined {
  const value = text.trim();
  const iso = ISO.exec(value);
  const wmi = iso ? undefined : WMI.exec(value);
  const match = iso ?? wmi;
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const base = utcMs(year, month, day, hour, minute, second);
  const fraction = match[7] ?? '';
  const zone = match[8]!;
  if (base === undefined) return undefined;
  let offsetMinutes = 0;
  if (wmi) offsetMinutes = Number(zone);
  else if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number];
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = sign * (hours * 60 + minutes);
  }
  if (Math.abs(offsetMinutes) > MAX_OFFSET_MINUTES) return undefined;
  // Local time = UTC + offset; the printed fraction is exact to its last digit.
  const lowMs = base - offsetMinutes * 60_000 + (fraction ? Number(fraction) / 10 ** (fraction.length - 3) : 0);
  const halfStepMs = 10 ** (3 - fraction.length) / 2;
  return { startMs: lowMs + halfStepMs, errorMs: Math.max(halfStepMs, MIN_ERROR_MS) };
}

export async function windowsStartTime(pid: number, host: ProcHost): Promise<StartTime | undefined> {
  const script = `(Get-Process -Id ${pid}).StartTime.ToUniversalTime().ToString('o')`;
  const out = await host.run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', script]);
  return out === undefined ? undefined : parseWindowsStartTime(out);
}
