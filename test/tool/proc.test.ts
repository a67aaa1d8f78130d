/**
 * Process facts from recorded outputs: Linux /proc files, macOS `ps`/`lsof` and Windows
 * PowerShell/WMI times, the error bounds, and the process-group rules.
 */
import os from 'node:os';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLsofCwd, parseLstart, parsePsTable, PS_TABLE_ARGS } from '../../src/tool/proc-darwin.js';
import { auxvClockTicks, parseCmdline, parseLinuxStat, parseUptime } from '../../src/tool/proc-linux.js';
import { parseWindowsStartTime } from '../../src/tool/proc-windows.js';
import {
  groupMembers,
  isGroupAlive,
  localHost,
  processCwd,
  processStartTime,
  processStopped,
  sessionMembers,
  startRange,
  type StartTime,
} from '../../src/tool/proc.js';
import { startsMatch } from '../../src/tool/proc-host.js';
import { recordedHost, statLine } from './proc-recorded.js';

const NOW = 1_800_000_000_000;

/** An auxiliary vector of 8-byte words in this machine's byte order: the given pairs, then AT_NULL. */
function auxv(pairs: [number, number][]): Buffer {
  const words = [...pairs, [0, 0]].flat();
  const bytes = Buffer.alloc(words.length * 8);
  for (const [i, v] of words.entries()) {
    if (os.endianness() === 'LE') bytes.writeBigUInt64LE(BigInt(v), i * 8);
    else bytes.writeBigUInt64BE(BigInt(v), i * 8);
  }
  return bytes;
}

describe('Linux /proc parsing', () => {
  it('reads the fields of a real stat line', () => {
    const line =
      '16914 (cat) R 16904 16904 8522 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 57016 3133440 411 18446744073709551615 94833219112960 0 0 0 17 1 0 0 0\n';
    expect(parseLinuxStat(line)).toEqual({ pid: 16914, comm: 'cat', state: 'R', ppid: 16904, pgid: 16904, sid: 8522, startTicks: 57016 });
  });

  it.each([
    ['spaces', 'Web Content'],
    ['parentheses and spaces', 'a) (b) c'],
    ['a closing parenthesis last', 'x)'],
    ['an opening parenthesis only', '(('],
    ['digits that look like fields', ') S 1 2 3'],
    ['a line break', 'two\nlines'],
    ['nothing', ''],
  ])('takes comm with %s as the text between the first ( and the last )', (_what, comm) => {
    const stat = parseLinuxStat(statLine({ pid: 42, comm, pgid: 40, sid: 30, startTicks: 12345 }));
    expect(stat).toEqual({ pid: 42, comm, state: 'S', ppid: 1, pgid: 40, sid: 30, startTicks: 12345 });
  });

  it.each([
    ['nothing', undefined],
    ['an empty file', ''],
    ['no parentheses', '42 cat S 1 40 30'],
    ['a line cut short before field 22', '42 (cat) S 1 40 30 0 -1 4194304 100 0 0'],
    [
      'a letter where the group id stands',
      statLine({ pid: 42, comm: 'cat', pgid: 40, sid: 30, startTicks: 1 }).replace(' 40 30 ', ' x 30 '),
    ],
    ['no pid', '(cat) S 1 40 30 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 57016'],
  ])('rejects %s', (_what, text) => {
    expect(parseLinuxStat(text)).toBeUndefined();
  });

  it('splits cmdline at NULs', () => {
    expect(parseCmdline('sh\0-c\0sleep 8 & echo done\0')).toEqual(['sh', '-c', 'sleep 8 & echo done']);
    expect(parseCmdline('rewritten title with spaces')).toEqual(['rewritten title with spaces']);
    expect(parseCmdline('')).toEqual([]);
    expect(parseCmdline(undefined)).toEqual([]);
  });

  it('reads uptime with the resolution it is printed in', () => {
    expect(parseUptime('221.07 286.52\n')).toEqual({ uptimeMs: 221_070, resolutionMs: 10 });
    expect(parseUptime('5 3\n')).toEqual({ uptimeMs: 5000, resolutionMs: 1000 });
    expect(parseUptime('0.5 0.1\n')).toEqual({ uptimeMs: 500, resolutionMs: 100 });
    expect(parseUptime('')).toBeUndefined();
    expect(parseUptime('-1.00 2.00\n')).toBeUndefined();
  });
});

/** A Linux machine up for 1000 s at NOW, 100 ticks a second, running the given stat lines. */
function linuxHost(stats: Record<number, string>, extra: { auxv?: Buffer; clock?: number[]; cmdlines?: Record<number, string> } = {}) {
  const files: Record<string, string> = { '/proc/uptime': '1000.00 1900.00\n' };
  for (const [pid, line] of Object.entries(stats)) files[`/proc/${pid}/stat`] = line;
  for (const [pid, text] of Object.entries(extra.cmdlines ?? {})) files[`/proc/${pid}/cmdline`] = text;
  return recordedHost({
    platform: 'linux',
    files,
    dirs: { '/proc': ['1', 'self', 'net', 'sys', ...Object.keys(stats), '99999'] },
    bytes: 'auxv' in extra ? (extra.auxv === undefined ? {} : { '/proc/self/auxv': extra.auxv }) : { '/proc/self/auxv': auxv([[17, 100]]) },
    clock: extra.clock ?? [NOW],
  });
}

describe('processStartTime on Linux', () => {
  it('is the boot time (now minus uptime) plus the start ticks, within one tick and one uptime step', async () => {
    const host = linuxHost({ 42: statLine({ pid: 42, comm: 'java', pgid: 42, sid: 42, startTicks: 50_000 }) });
    // Boot at NOW - 1,000,000 ms (to within 10 ms), start 500,000 ms later (to within a 10 ms tick).
    const low = NOW - 1_000_000 - 10 + 500_000;
    const high = NOW + 1 - 1_000_000 + 500_010;
    expect(await processStartTime(42, host)).toEqual({ startMs: (low + high) / 2, errorMs: 10.5 });
  });

  it('widens the bound by the time it took to read the uptime', async () => {
    const host = linuxHost({ 42: statLine({ pid: 42, comm: 'java', pgid: 42, sid: 42, startTicks: 0 }) }, { clock: [NOW, NOW + 6] });
    const start = await processStartTime(42, host);
    expect(start).toEqual(startRange(NOW - 1_000_010, NOW + 7 - 1_000_000 + 10));
    expect(start!.errorMs).toBe(13.5);
  });

  it('uses the tick length of the auxiliary vector (AT_CLKTCK), and reads it only once per host', async () => {
    const host = linuxHost(
      { 42: statLine({ pid: 42, comm: 'java', pgid: 42, sid: 42, startTicks: 1000 }) },
      {
        auxv: auxv([
          [6, 4096],
          [17, 250],
        ]),
      },
    );
    const first = await processStartTime(42, host);
    await processStartTime(42, host);
    await processStartTime(42, host);
    expect(host.read.filter((file) => file === '/proc/self/auxv')).toHaveLength(1);
    expect(host.ran).toEqual([]);
    // 1000 ticks of 4 ms.
    expect(first).toEqual(startRange(NOW - 1_000_010 + 4000, NOW + 1 - 1_000_000 + 4004));
  });

  it.each([
    ['is unreadable', undefined],
    ['has no AT_CLKTCK', auxv([[6, 4096]])],
    ['says zero', auxv([[17, 0]])],
    [
      'is cut short',
      auxv([
        [6, 4096],
        [17, 250],
      ]).subarray(0, 20),
    ],
    [
      'has AT_CLKTCK only after its end',
      auxv([
        [6, 4096],
        [0, 0],
        [17, 250],
      ]),
    ],
  ])('takes 100 ticks a second when the auxiliary vector %s', async (_what, bytes) => {
    const host = linuxHost({ 42: statLine({ pid: 42, comm: 'java', pgid: 42, sid: 42, startTicks: 300 }) }, { auxv: bytes });
    expect(await processStartTime(42, host)).toEqual(startRange(NOW - 1_000_010 + 3000, NOW + 1 - 1_000_000 + 3010));
  });

  it('reads AT_CLKTCK in 4-byte words on a 32-bit architecture', () => {
    const words = Buffer.alloc(24);
    for (const [i, v] of [6, 4096, 17, 1024, 0, 0].entries()) {
      if (os.endianness() === 'LE') words.writeUInt32LE(v, i * 4);
      else words.writeUInt32BE(v, i * 4);
    }
    expect(auxvClockTicks(words, 'arm')).toBe(1024);
    expect(auxvClockTicks(words, 'x64')).toBeUndefined();
  });

  it('reads the real auxiliary vector of this process as getconf does', async () => {
    if (process.platform !== 'linux') return;
    const { stdout } = await execa('getconf', ['CLK_TCK']);
    expect(auxvClockTicks(localHost.readBytes('/proc/self/auxv'), process.arch)).toBe(Number(stdout));
  });

  it('is undefined for a process that is gone, a garbled stat, or a machine without /proc/uptime', async () => {
    const host = linuxHost({ 43: '43 (cut' });
    expect(await processStartTime(42, host)).toBeUndefined();
    expect(await processStartTime(43, host)).toBeUndefined();
    const noUptime = recordedHost({
      platform: 'linux',
      files: { '/proc/42/stat': statLine({ pid: 42, comm: 'a', pgid: 1, sid: 1, startTicks: 1 }) },
    });
    expect(await processStartTime(42, noUptime)).toBeUndefined();
  });

  it.each([0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2])('reads nothing for the id %s, which names no process', async (pid) => {
    const host = linuxHost({});
    expect(await processStartTime(pid, host)).toBeUndefined();
    expect(await processCwd(pid, host)).toBeUndefined();
    expect(await groupMembers(pid, host)).toBeUndefined();
    expect(await sessionMembers(pid, host)).toBeUndefined();
    expect(host.read).toEqual([]);
    expect(host.ran).toEqual([]);
  });

  it('is undefined on a platform it has no source for', async () => {
    const host = recordedHost({ platform: 'freebsd' });
    expect(await processStartTime(42, host)).toBeUndefined();
    expect(await processCwd(42, host)).toBeUndefined();
    expect(await groupMembers(42, host)).toBeUndefined();
  });
});

describe('processCwd on Linux', () => {
  it('reads the cwd link, and is undefined when it cannot be read', async () => {
    const host = recordedHost({ platform: 'linux', links: { '/proc/42/cwd': '/home/dev/app' } });
    expect(await processCwd(42, host)).toBe('/home/dev/app');
    expect(await processCwd(43, host)).toBeUndefined();
  });
});

describe('processStopped', () => {
  it('is the state letter of stat on Linux: T (a signal) or t (a tracer) is stopped', async () => {
    const stat = (pid: number, state: string) => statLine({ pid, comm: 'java', state, pgid: pid, sid: pid, startTicks: 1 });
    const host = recordedHost({
      platform: 'linux',
      files: { '/proc/41/stat': stat(41, 'T'), '/proc/42/stat': stat(42, 't'), '/proc/43/stat': stat(43, 'S'), '/proc/44/stat': 'garbled' },
    });
    expect(await Promise.all([41, 42, 43, 44, 45, 0].map((pid) => processStopped(pid, host)))).toEqual([
      true,
      true,
      false,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('asks ps for the state on macOS, and cannot tell on Windows', async () => {
    const host = recordedHost({ platform: 'darwin', commands: { 'ps -o state= -p 812': 'T\n', 'ps -o state= -p 813': 'Ss\n' } });
    expect(await Promise.all([812, 813, 814].map((pid) => processStopped(pid, host)))).toEqual([true, false, undefined]);
    expect(await processStopped(4242, recordedHost({ platform: 'win32' }))).toBeUndefined();
  });
});

describe('process groups on Linux', () => {
  const leader = statLine({ pid: 500, comm: 'sh', pgid: 500, sid: 500, startTicks: 10_000 });
  const child = statLine({ pid: 501, comm: 'sleep', ppid: 500, pgid: 500, sid: 500, startTicks: 10_005 });
  const zombie = statLine({ pid: 502, comm: 'cp', state: 'Z', ppid: 500, pgid: 500, sid: 500, startTicks: 10_006 });
  const jobControlled = statLine({ pid: 503, comm: 'sleep', ppid: 500, pgid: 503, sid: 500, startTicks: 10_007 });
  const daemon = statLine({ pid: 504, comm: 'java', ppid: 1, pgid: 504, sid: 504, startTicks: 10_008 });
  const stranger = statLine({ pid: 600, comm: 'bash', pgid: 600, sid: 600, startTicks: 200 });
  /** The leader's start as the run that started the group recorded it. */
  const recorded: StartTime = startRange(NOW - 1_000_010 + 100_000, NOW + 1 - 1_000_000 + 100_010);

  it('lists the members of a group with their session, state, name, arguments and start', async () => {
    const host = linuxHost(
      { 500: leader, 501: child, 502: zombie, 503: jobControlled, 504: daemon, 600: stranger },
      { cmdlines: { 500: 'sh\0-c\0sleep 30 & wait\0', 501: 'sleep\x0030\0' } },
    );
    const members = await groupMembers(500, host);
    expect(members?.map((m) => [m.pid, m.ppid, m.pgid, m.sid, m.state, m.name, m.args])).toEqual([
      [500, 1, 500, 500, 'S', 'sh', ['sh', '-c', 'sleep 30 & wait']],
      [501, 500, 500, 500, 'S', 'sleep', ['sleep', '30']],
      [502, 500, 500, 500, 'Z', 'cp', []],
    ]);
    expect(startsMatch(members![0]!.start!, recorded)).toBe(true);
    expect(members![1]!.start).toEqual(startRange(NOW - 1_000_010 + 100_050, NOW + 1 - 1_000_000 + 100_060));
  });

  it('finds the members of a session in any group, but not a daemon that left it with setsid', async () => {
    const host = linuxHost({ 500: leader, 501: child, 503: jobControlled, 504: daemon });
    expect((await sessionMembers(500, host))?.map((m) => m.pid)).toEqual([500, 501, 503]);
    expect((await groupMembers(500, host))?.map((m) => m.pid)).toEqual([500, 501]);
  });

  it('skips a process that vanished between the listing and the read', async () => {
    // 99999 is listed in /proc but has no stat file any more.
    const host = linuxHost({ 500: leader });
    expect((await groupMembers(500, host))?.map((m) => m.pid)).toEqual([500]);
    expect(await groupMembers(99999, host)).toEqual([]);
  });

  it('cannot tell when /proc cannot be listed', async () => {
    const host = recordedHost({ platform: 'linux', files: { '/proc/uptime': '1.00 1.00\n' } });
    expect(await groupMembers(500, host)).toBeUndefined();
    expect(await isGroupAlive(500, recorded, host)).toBeUndefined();
  });

  const reused = statLine({ pid: 500, comm: 'vim', pgid: 500, sid: 500, startTicks: 90_000 });
  const laterMember = statLine({ pid: 701, comm: 'make', ppid: 1, pgid: 500, sid: 500, startTicks: 90_010 });
  const olderMember = statLine({ pid: 702, comm: 'old', ppid: 1, pgid: 500, sid: 500, startTicks: 5_000 });
  const zombieLeader = statLine({ pid: 500, comm: 'sh', state: 'Z', pgid: 500, sid: 500, startTicks: 10_000 });
  it.each([
    ['the leader with the recorded start runs', true, { 500: leader }],
    ['the leader and a member run', true, { 500: leader, 501: child }],
    ['the leader is a zombie but a member runs', true, { 500: zombieLeader, 501: child }],
    ['only the zombie leader is left', false, { 500: zombieLeader }],
    ['only zombies are left', false, { 500: zombieLeader, 502: zombie }],
    ['nothing is left', false, { 600: stranger }],
    ['the pid was reused by a new group leader', false, { 500: reused, 701: laterMember }],
    ['the leader is gone and a member started after it runs', true, { 501: child }],
    ['the leader is gone and only a zombie member is left', false, { 502: zombie }],
    ['the leader is gone and the only member started before it', false, { 702: olderMember }],
    ['the leader is gone and a member of a newer group runs (errs toward alive)', true, { 701: laterMember }],
    ['a member in another group of the same session runs', false, { 503: jobControlled }],
  ] as Array<[string, boolean, Record<number, string>]>)('isGroupAlive when %s: %s', async (_what, alive, stats) => {
    expect(await isGroupAlive(500, recorded, linuxHost(stats))).toBe(alive);
  });

  it('accepts a member whose start lies within the bound before the recorded leader start', async () => {
    // Recorded 1 ms late; the member started in the same tick as the leader.
    const lateRecord = { startMs: recorded.startMs + 1, errorMs: recorded.errorMs };
    const sameTick = statLine({ pid: 501, comm: 'sleep', pgid: 500, sid: 500, startTicks: 10_000 });
    expect(await isGroupAlive(500, lateRecord, linuxHost({ 501: sameTick }))).toBe(true);
  });
});

describe('startsMatch', () => {
  it.each([
    [startRange(100, 120), startRange(110, 130), true],
    [startRange(100, 120), startRange(120, 140), true],
    [startRange(100, 120), startRange(121, 141), false],
    [{ startMs: 1000, errorMs: 0 }, { startMs: 1000, errorMs: 0 }, true],
    [{ startMs: 1000, errorMs: 500 }, { startMs: 2001, errorMs: 500 }, false],
  ])('%j and %j overlap: %s', (a, b, same) => {
    expect(startsMatch(a, b)).toBe(same);
    expect(startsMatch(b, a)).toBe(same);
  });
});

describe('macOS', () => {
  const savedTz = process.env.TZ;
  afterEach(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it.each([
    ['UTC', 'Tue Dec  1 09:53:05 2026\n', Date.UTC(2026, 11, 1, 9, 53, 5)],
    ['Europe/Berlin', 'Tue Dec  1 09:53:05 2026\n', Date.UTC(2026, 11, 1, 8, 53, 5)],
    ['America/New_York', 'Tue Dec  1 09:53:05 2026', Date.UTC(2026, 11, 1, 14, 53, 5)],
    ['Asia/Kolkata', 'Sat Dec 12 00:00:00 2026', Date.UTC(2026, 11, 11, 18, 30, 0)],
    ['Europe/Berlin', 'Wed Jul 15 12:00:59 2026', Date.UTC(2026, 6, 15, 10, 0, 59)],
  ])('reads lstart in %s: %j', (tz, text, second) => {
    process.env.TZ = tz;
    expect(parseLstart(text)).toEqual({ startMs: second + 500, errorMs: 500 });
  });

  it('covers both instants of a time that the end of daylight saving repeats', () => {
    process.env.TZ = 'Europe/Berlin';
    // 02:30 on 25 Oct 2026 is 00:30 UTC in summer time and again 01:30 UTC in winter time.
    expect(parseLstart('Sun Oct 25 02:30:00 2026')).toEqual(startRange(Date.UTC(2026, 9, 25, 0, 30), Date.UTC(2026, 9, 25, 1, 30, 1)));
  });

  it.each([
    ['a local time skipped by daylight saving', 'Sun Mar 29 02:30:00 2026'],
    ['a weekday that does not fit the date', 'Mon Dec  1 09:53:05 2026'],
    ['another locale', 'Di  1 Dez 09:53:05 2026'],
    ['a day out of range', 'Thu Dec 32 09:53:05 2026'],
    ['an hour out of range', 'Tue Dec  1 24:53:05 2026'],
    ['nothing (the process is gone)', ''],
    ['two lines', 'Tue Dec  1 09:53:05 2026\nTue Dec  1 09:53:05 2026'],
  ])('rejects %s', (_what, text) => {
    process.env.TZ = 'Europe/Berlin';
    expect(parseLstart(text)).toBeUndefined();
  });

  it('asks ps for one process', async () => {
    process.env.TZ = 'UTC';
    const host = recordedHost({ platform: 'darwin', commands: { 'ps -o lstart= -p 812': 'Tue Dec  1 09:53:05 2026\n' } });
    expect(await processStartTime(812, host)).toEqual({ startMs: Date.UTC(2026, 11, 1, 9, 53, 5) + 500, errorMs: 500 });
    expect(await processStartTime(813, host)).toBeUndefined();
  });

  const lsof = 'p812\nfcwd\nn/Users/dev/My App\n';
  it('reads the cwd from lsof', async () => {
    expect(parseLsofCwd(lsof)).toBe('/Users/dev/My App');
    expect(parseLsofCwd('p812\n')).toBeUndefined();
    expect(parseLsofCwd('')).toBeUndefined();
    const host = recordedHost({ platform: 'darwin', commands: { 'lsof -a -p 812 -d cwd -Fn': lsof } });
    expect(await processCwd(812, host)).toBe('/Users/dev/My App');
    expect(await processCwd(813, host)).toBeUndefined();
  });

  const table = [
    '    1     0     1 Ss   Tue Dec  1 08:00:00 2026     /sbin/launchd',
    '  812   700   812 S    Tue Dec  1 09:53:05 2026     /bin/sh',
    '  813   812   812 S+   Tue Dec  1 09:53:06 2026     /Applications/Visual Studio Code.app/Contents/MacOS/Electron',
    '  814   812   812 Z    Tue Dec  1 09:53:06 2026     <defunct>',
    '  815     1   815 Ss   Tue Dec  1 09:53:07 2026     /usr/bin/java',
    'garbage line',
    '',
  ].join('\n');

  it('parses a ps table, names with spaces included', () => {
    process.env.TZ = 'UTC';
    const rows = parsePsTable(table);
    expect(rows.map((r) => [r.pid, r.ppid, r.pgid, r.sid, r.state, r.name, r.args])).toEqual([
      [1, 0, 1, undefined, 'Ss', '/sbin/launchd', []],
      [812, 700, 812, undefined, 'S', '/bin/sh', []],
      [813, 812, 812, undefined, 'S+', '/Applications/Visual Studio Code.app/Contents/MacOS/Electron', []],
      [814, 812, 812, undefined, 'Z', '<defunct>', []],
      [815, 1, 815, undefined, 'Ss', '/usr/bin/java', []],
    ]);
    expect(rows[1]!.start).toEqual({ startMs: Date.UTC(2026, 11, 1, 9, 53, 5) + 500, errorMs: 500 });
  });

  it('finds group members and group liveness from ps; sessions are unknown', async () => {
    process.env.TZ = 'UTC';
    const host = recordedHost({ platform: 'darwin', commands: { [['ps', ...PS_TABLE_ARGS].join(' ')]: table } });
    expect((await groupMembers(812, host))?.map((m) => m.pid)).toEqual([812, 813, 814]);
    const recorded = { startMs: Date.UTC(2026, 11, 1, 9, 53, 5) + 500, errorMs: 500 };
    expect(await isGroupAlive(812, recorded, host)).toBe(true);
    expect(await isGroupAlive(812, { startMs: recorded.startMs - 60_000, errorMs: 500 }, host)).toBe(false);
    expect(await sessionMembers(812, host)).toBeUndefined();
    expect(await groupMembers(812, recordedHost({ platform: 'darwin' }))).toBeUndefined();
  });
});

describe('Windows', () => {
  it.each([
    ['PowerShell round-trip UTC', '2026-12-01T08:53:05.1234567Z\r\n', Date.UTC(2026, 11, 1, 8, 53, 5) + 123.4567, 0.0001],
    ['PowerShell with an offset', '2026-12-01T09:53:05.1234567+01:00', Date.UTC(2026, 11, 1, 8, 53, 5) + 123.4567, 0.0001],
    ['ISO with milliseconds', '2026-12-01T03:53:05.120-05:00', Date.UTC(2026, 11, 1, 8, 53, 5) + 120, 1],
    ['ISO without a fraction', '2026-12-01T08:53:05Z', Date.UTC(2026, 11, 1, 8, 53, 5), 1000],
    ['WMI, east of UTC', '20261201095305.123456+060', Date.UTC(2026, 11, 1, 8, 53, 5) + 123.456, 0.001],
    ['WMI, west of UTC', '20261201035305.000000-300', Date.UTC(2026, 11, 1, 8, 53, 5), 0.001],
    ['WMI, India', '20261201142305.500000+330', Date.UTC(2026, 11, 1, 8, 53, 5) + 500, 0.001],
  ])('reads %s', (_what, text, lowMs, stepMs) => {
    const start = parseWindowsStartTime(text)!;
    expect(start.startMs).toBeCloseTo(lowMs + stepMs / 2, 6);
    expect(start.errorMs).toBe(Math.max(stepMs / 2, 0.001));
  });

  it.each([
    ['nothing (Get-Process found no such process)', ''],
    ['a month out of range', '2026-13-01T08:53:05.1234567Z'],
    ['31 June', '20260631095305.123456+060'],
    ['a WMI value with unknown fields', '2026120109****.******+***'],
    ['an offset out of range', '20261201095305.123456+900'],
    ['an ISO offset out of range', '2026-12-01T08:53:05+25:00'],
    ['a local time without a zone', '2026-12-01T08:53:05.1234567'],
    ['an error message', 'You cannot call a method on a null-valued expression.'],
  ])('rejects %s', (_what, text) => {
    expect(parseWindowsStartTime(text)).toBeUndefined();
  });

  it('asks PowerShell for the creation time in UTC, and has no cwd or groups', async () => {
    const script = "(Get-Process -Id 4242).StartTime.ToUniversalTime().ToString('o')";
    const host = recordedHost({
      platform: 'win32',
      commands: { [`powershell.exe -NoProfile -NonInteractive -Command ${script}`]: '2026-12-01T08:53:05.1234567Z\r\n' },
    });
    expect((await processStartTime(4242, host))?.startMs).toBeCloseTo(Date.UTC(2026, 11, 1, 8, 53, 5) + 123.45675, 6);
    expect(await processStartTime(4243, host)).toBeUndefined();
    expect(await processCwd(4242, host)).toBeUndefined();
    expect(await groupMembers(4242, host)).toBeUndefined();
    expect(await isGroupAlive(4242, { startMs: 0, errorMs: 0 }, host)).toBeUndefined();
  });
});

describe('localHost', () => {
  it('reads nothing, rather than failing, for a missing entry, and fails for a real fault', () => {
    expect(localHost.readText('/proc/0/stat')).toBeUndefined();
    expect(localHost.readLink('/proc/0/cwd')).toBeUndefined();
    expect(localHost.listDir('/proc/0/task')).toBeUndefined();
    expect(() => localHost.readText('/proc')).toThrow(/EISDIR/);
  });

  it('runs a command without a shell, and gives undefined when it fails or does not exist', async () => {
    expect(await localHost.run('sh', ['-c', 'printf "%s" "$LC_ALL"'])).toBe('C');
    expect(await localHost.run('sh', ['-c', 'exit 3'])).toBeUndefined();
    expect(await localHost.run('reclazz-no-such-command', [])).toBeUndefined();
  });
});
