/**
 * Process facts read from this machine's /proc, for real processes this test starts: start
 * times against the clock around the spawn, working directories, comm names with spaces and
 * parentheses, and the members of a process group as processes leave it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import {
  groupMembers,
  isGroupAlive,
  processCommandLine,
  processCwd,
  processStartTime,
  processStopped,
  sessionMembers,
} from '../../src/tool/proc.js';
import { startsMatch } from '../../src/tool/proc-host.js';
import { tempDir } from '../support/cli.js';

const onLinux = process.platform === 'linux';

/** Every process and folder a test made, removed after it. */
const started: number[] = [];
const groups: number[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const pgid of groups.splice(0)) signal(-pgid);
  for (const pid of started.splice(0)) signal(pid);
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function signal(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Starts `file args` and resolves once it runs, with the wall clock just before and after. */
async function start(file: string, args: string[], options: { cwd?: string; detached?: boolean } = {}) {
  const before = Date.now();
  const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child, 'spawn');
  const after = Date.now();
  started.push(child.pid!);
  if (options.detached) groups.push(child.pid!);
  return { child, pid: child.pid!, before, after };
}

/** The first `count` lines the child writes (pids it reports). */
async function lines(child: ChildProcess, count: number): Promise<string[]> {
  let text = '';
  for await (const chunk of child.stdout!) {
    text += String(chunk);
    if (text.split('\n').length > count) break;
  }
  return text.split('\n').slice(0, count);
}

/** Polls `check` until it holds, for at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(onLinux)('on this Linux machine', () => {
  it('dates a process it just started between the clock readings around the spawn, within about 11 ms', async () => {
    for (let round = 0; round < 5; round += 1) {
      const { pid, before, after } = await start('sleep', ['30']);
      const readFrom = Date.now();
      const found = await processStartTime(pid);
      const readFor = Date.now() - readFrom;
      expect(found).toBeDefined();
      // One 10 ms tick, one 10 ms step of /proc/uptime, 1 ms of Date.now(): 10.5 ms of error, plus
      // half the time between the lookup's two clock readings (longer when this machine is busy).
      expect(found!.errorMs).toBeLessThanOrEqual(10.5 + (readFor + 1) / 2);
      // The true start lies in [before, after]; the claimed range must overlap it.
      expect(found!.startMs + found!.errorMs).toBeGreaterThanOrEqual(before);
      expect(found!.startMs - found!.errorMs).toBeLessThanOrEqual(after);
    }
  });

  it('gives matching starts on every reading of the same process, and none for a pid that is gone', async () => {
    const first = await processStartTime(process.pid);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const second = await processStartTime(process.pid);
    expect(startsMatch(first!, second!)).toBe(true);
    expect(first!.startMs).toBeLessThan(Date.now());

    const { child, pid } = await start('true', []);
    await once(child, 'exit');
    expect(await processStartTime(pid)).toBeUndefined();
    expect(await processCwd(pid)).toBeUndefined();
  });

  it("reads a process's command line, each argument whole, and its starting environment", async () => {
    const child = spawn('sleep', ['30'], {
      env: { PATH: process.env.PATH, JAVA_TOOL_OPTIONS: '-javaagent:/a b/x.jar=k=v' },
      argv0: 'my sleep',
    });
    await once(child, 'spawn');
    started.push(child.pid!);
    const line = await processCommandLine(child.pid!);
    expect(line).toMatchObject({ args: ['my sleep', '30'], exact: true });
    expect(line!.env).toMatchObject({ JAVA_TOOL_OPTIONS: '-javaagent:/a b/x.jar=k=v' });
    expect(await processCommandLine(0)).toBeUndefined();
  });

  it('tells a process stopped by SIGSTOP, and running again after SIGCONT', async () => {
    const { pid } = await start('sleep', ['30']);
    expect(await processStopped(pid)).toBe(false);
    process.kill(pid, 'SIGSTOP');
    await eventually(async () => (await processStopped(pid)) === true);
    process.kill(pid, 'SIGCONT');
    await eventually(async () => (await processStopped(pid)) === false);
  });

  it('reads the working directory of a process', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { pid } = await start('sleep', ['30'], { cwd: dir });
    expect(await processCwd(pid)).toBe(fs.realpathSync(dir));
  });

  it('reads a comm name holding spaces and parentheses', async () => {
    const dir = tempDir();
    dirs.push(dir);
    // The kernel names a process after the file it executed, a symbolic link's own name included.
    const odd = path.join(dir, 'a) (b c');
    fs.symlinkSync(fs.realpathSync('/bin/sleep'), odd);
    const { pid, before, after } = await start(odd, ['30'], { detached: true });
    const found = await processStartTime(pid);
    expect(found!.startMs + found!.errorMs).toBeGreaterThanOrEqual(before);
    expect(found!.startMs - found!.errorMs).toBeLessThanOrEqual(after);
    const members = (await groupMembers(pid))!;
    expect(members.map((m) => [m.pid, m.pgid, m.sid, m.name, m.args])).toEqual([[pid, pid, pid, 'a) (b c', [odd, '30']]]);
  });

  it('follows a process group as its leader and then its members exit, and leaves setsid daemons out', async () => {
    // The leader starts two members, one job-controlled process group (same session) and one
    // daemon in its own session, reports their pids, then waits.
    const script = 'sleep 30 & sleep 30 & set -m; sleep 30 & echo $!; set +m; setsid sleep 30 & echo $!; wait';
    const { child, pid: pgid, before, after } = await start('bash', ['-c', script], { detached: true });
    const [jobPid, daemonPid] = (await lines(child, 2)).map(Number) as [number, number];
    started.push(jobPid, daemonPid);
    const recorded = (await processStartTime(pgid))!;
    expect(recorded.startMs + recorded.errorMs).toBeGreaterThanOrEqual(before);
    expect(recorded.startMs - recorded.errorMs).toBeLessThanOrEqual(after);

    // Until it has called setsid, the daemon is still a member (named setsid, then sleep).
    const names = async () =>
      (await groupMembers(pgid))!
        .map((m) => m.name)
        .sort()
        .join(' ');
    await eventually(async () => (await names()) === 'bash sleep sleep');
    const members = (await groupMembers(pgid))!;
    expect(members.every((m) => m.pgid === pgid && m.sid === pgid)).toBe(true);
    expect(members.some((m) => m.pid === jobPid || m.pid === daemonPid)).toBe(false);
    const session = (await sessionMembers(pgid))!.map((m) => m.pid);
    expect(session).toContain(jobPid);
    expect(session).not.toContain(daemonPid);

    expect(await isGroupAlive(pgid, recorded)).toBe(true);
    // A record of a different leader start (the pid reused by another group) is not this group.
    expect(await isGroupAlive(pgid, { startMs: recorded.startMs - 1000, errorMs: recorded.errorMs })).toBe(false);

    // The leader exits; its members run on without it.
    signal(pgid);
    await once(child, 'exit');
    expect((await groupMembers(pgid))!.some((m) => m.pid === pgid)).toBe(false);
    expect(await isGroupAlive(pgid, recorded)).toBe(true);

    // The rest of the group exits (possibly left as zombies if nothing reaps them here).
    signal(-pgid);
    await eventually(async () => (await isGroupAlive(pgid, recorded)) === false);
    expect(await processStartTime(daemonPid)).toBeDefined();
  });
});
