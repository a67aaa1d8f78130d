/**
 * Which processes of a terminal's session are the build's, on a recorded Linux /proc: those that
 * started after the build and come from it (through this run, or orphaned), in any process group,
 * and never the user's shell, its other jobs or what they start. And which processes outside
 * its session it started: those carrying its marks.
 */
import { describe, expect, it } from 'vitest';
import { BUILD_RUN_ENV, leftOver, markedSpawn, type BuildScope } from '../../src/tool/build-group.js';
import { processesCarrying } from '../../src/tool/proc.js';
import { recordedHost, statLine } from './proc-recorded.js';

const NOW = 1_800_000_000_000;
/** Boot at NOW - 1000 s (uptime 1000.00), 100 ticks a second: a start of `t` ticks is BOOT + 10 t ms. */
const BOOT = NOW - 1_000_000;
const OLD = 50_000;
const YOUNG = 61_000;

/** The terminal's session 100 on a machine up for 1000 s, with its processes. */
function session(lines: Parameters<typeof statLine>[0][]) {
  const files: Record<string, string> = { '/proc/uptime': '1000.00 1900.00\n' };
  for (const fields of lines) files[`/proc/${fields.pid}/stat`] = statLine(fields);
  return recordedHost({ platform: 'linux', files, dirs: { '/proc': ['1', 'self', ...lines.map((l) => String(l.pid))] }, clock: [NOW] });
}

describe('leftOver sharing the terminal (Linux)', () => {
  it('takes what came from the build in any group, orphans included, and leaves the terminal shell and its jobs alone', async () => {
    const host = session([
      { pid: 100, comm: 'bash', ppid: 90, pgid: 100, sid: 100, startTicks: OLD },
      // This run, its pipeline partner, and an older job of the terminal.
      { pid: 200, comm: 'node', ppid: 100, pgid: 200, sid: 100, startTicks: OLD + 10 },
      { pid: 201, comm: 'cat', ppid: 100, pgid: 200, sid: 100, startTicks: OLD + 10 },
      { pid: 150, comm: 'watcher.sh', ppid: 100, pgid: 150, sid: 100, startTicks: OLD - 5 },
      // The build's background job (its own group by `set -m`), orphaned, and what it started.
      { pid: 300, comm: 'sh', ppid: 1, pgid: 300, sid: 100, startTicks: YOUNG },
      { pid: 301, comm: 'cp', ppid: 300, pgid: 300, sid: 100, startTicks: YOUNG + 100 },
      // A build child still under this run's build command's child, in our group.
      { pid: 310, comm: 'javac', ppid: 200, pgid: 200, sid: 100, startTicks: YOUNG + 1 },
      // Started after the build, but by the terminal's shell or its older job: not the build's.
      { pid: 400, comm: 'sleep', ppid: 150, pgid: 150, sid: 100, startTicks: YOUNG + 50 },
      { pid: 500, comm: 'vim', ppid: 100, pgid: 500, sid: 100, startTicks: YOUNG + 60 },
      // Exited, not reaped: it writes nothing more.
      { pid: 600, comm: 'sh', state: 'Z', ppid: 1, pgid: 600, sid: 100, startTicks: YOUNG },
      // Another session (a daemon that called setsid, another terminal).
      { pid: 700, comm: 'java', ppid: 1, pgid: 700, sid: 700, startTicks: YOUNG },
    ]);
    const scope: BuildScope = { kind: 'shared', pgid: 200, sid: 100, self: 200, sinceMs: BOOT + 600_000 };
    const left = await leftOver(scope, host);
    expect(left?.map((p) => p.pid).sort()).toEqual([300, 301, 310]);
  });

  it('is undefined when /proc cannot be listed', async () => {
    const host = recordedHost({ platform: 'linux', files: { '/proc/uptime': '1000.00 1900.00\n' }, clock: [NOW] });
    expect(await leftOver({ kind: 'shared', pgid: 200, sid: 100, self: 200, sinceMs: BOOT }, host)).toBeUndefined();
  });
});

/** `/proc/<pid>/limits` with the soft and hard limit on file locks as given (the rest as recorded from a real shell). */
const limits = (soft: string, hard = soft) =>
  'Limit                     Soft Limit           Hard Limit           Units     \n' +
  'Max open files            20000                20000                files     \n' +
  `Max file locks            ${soft.padEnd(21)}${hard.padEnd(21)}locks     \n`;

describe('processes a build started outside its session (Linux)', () => {
  it("are those started since the build carrying its token in their environment or its mark as their file locks' soft limit", async () => {
    const mark = 1_099_600_000_123;
    const files: Record<string, string> = { '/proc/uptime': '1000.00 1900.00\n' };
    const add = (pid: number, startTicks: number, environ: string, soft: string) => {
      files[`/proc/${pid}/stat`] = statLine({ pid, comm: 'sh', ppid: 1, pgid: pid, sid: pid, startTicks });
      files[`/proc/${pid}/environ`] = environ;
      files[`/proc/${pid}/limits`] = limits(soft, 'unlimited');
    };
    // A daemon that kept the build's environment, one started with a cleared one (env -i), and one of neither.
    add(700, YOUNG, `PATH=/bin\0${BUILD_RUN_ENV}=t1\0`, 'unlimited');
    add(701, YOUNG, '', String(mark));
    add(702, YOUNG, `${BUILD_RUN_ENV}=t0\0`, String(mark + 1));
    // Older than the build: another run's, though it shows the same numbers.
    add(703, OLD, `${BUILD_RUN_ENV}=t1\0`, String(mark));
    const host = recordedHost({ platform: 'linux', files, dirs: { '/proc': ['700', '701', '702', '703'] }, clock: [NOW] });
    const found = await processesCarrying({ variable: BUILD_RUN_ENV, value: 't1', fileLocks: mark }, BOOT + 600_000, host);
    expect(found?.map((p) => p.pid).sort()).toEqual([700, 701]);
    // Without a mark (off Linux the build is not marked), only the token counts.
    const byToken = await processesCarrying({ variable: BUILD_RUN_ENV, value: 't1' }, BOOT + 600_000, host);
    expect(byToken?.map((p) => p.pid)).toEqual([700]);
  });

  it('marks the build on Linux by a shell that sets the limit and then becomes the build, its arguments as given; elsewhere not', () => {
    const plan = { file: './mvnw', args: ['-q', 'a b', '$HOME'], windowsVerbatimArguments: false };
    const { plan: marked, mark } = markedSpawn(plan, 'linux');
    expect(mark).toBeGreaterThanOrEqual(2 ** 40);
    expect(marked.file).toBe('/bin/sh');
    expect(marked.args.slice(2)).toEqual(['./mvnw', '-q', 'a b', '$HOME']);
    expect(marked.args[1]).toContain(`ulimit -w ${mark}`);
    expect(marked.args[1]).toMatch(/exec "\$0" "\$@"$/);
    expect(marked.windowsVerbatimArguments).toBe(false);
    expect(markedSpawn(plan, 'darwin')).toEqual({ plan, mark: undefined });
  });
});
