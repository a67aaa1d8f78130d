/**
 * Concurrent runs in one checkout through the real binary: serialised by the advisory run
 * lock (proper-lockfile), so the agent never sees a second `started` while a hold is active
 * under another run. All runs in one checkout share the saved owner token; the lock is what
 * keeps them apart. Also: a stale lock from a killed run is taken over, a live one is waited
 * for up to --wait.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { jsonResult, runCli, startCli } from '../support/cli.js';
import { agentFor, buildCommand, buildRan, hasStackTrace, project, release } from '../support/project.js';
import { waitFor } from '../support/wait.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A build that rewrites Greeter with bytes unique to this process, then takes a moment. */
function uniqueBuild(classes: string): string[] {
  const file = path.join(classes, 'com', 'acme', 'Greeter.class');
  return [
    '--',
    process.execPath,
    '-e',
    `require('fs').writeFileSync(${JSON.stringify(file)}, 'greeter-' + process.pid); setTimeout(() => {}, 150)`,
  ];
}

describe('five runs started together against one agent', () => {
  it('all end 0, and their holds never overlap', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const runs = await Promise.all(Array.from({ length: 5 }, () => runCli(uniqueBuild(p.classes), { cwd: p.dir })));
    for (const run of runs) {
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/all 1 changed class\(es\) proven live/);
      expect(hasStackTrace(run.stderr)).toBe(false);
    }
    expect(
      runs.filter((run) => run.stderr.includes('waiting for another reclazz-build run in this checkout to finish')).length,
    ).toBeGreaterThanOrEqual(1);

    // Each run is one connection: its BUILD lines are contiguous in what the agent received,
    // started then ok, never interleaved with another run's.
    const builds = agent.received.filter((r) => r.line.startsWith('BUILD '));
    expect(builds.map((r) => r.line.split(' ')[1])).toEqual(Array.from({ length: 5 }, () => ['started', 'ok']).flat());
    for (let i = 0; i < builds.length; i += 2) expect(builds[i]!.client).toBe(builds[i + 1]!.client);
    expect(new Set(builds.map((r) => r.client)).size).toBe(5);

    // The agent's own hold log: every started acquired a free hold (no 'reacquired': no started
    // while a hold was active; no 'rejected'), and each hold was released before the next started.
    expect(agent.holdLog.map((h) => h.event)).toEqual(
      Array.from({ length: 5 }, () => ['acquired', 'capture-scheduled', 'released']).flat(),
    );
    const acquired = agent.holdLog.filter((h) => h.event === 'acquired');
    const released = agent.holdLog.filter((h) => h.event === 'released');
    for (let i = 1; i < 5; i++) expect(acquired[i]!.atMs).toBeGreaterThanOrEqual(released[i - 1]!.atMs);
    console.log(`concurrent runs: 5 runs, ${builds.length / 2} hold periods, none overlapping`);
  });
});

describe('the run lock', () => {
  it('a stale lock left by a killed run is taken over', async () => {
    const p = project();
    await agentFor(p, agents, { portFile: p.portFile });
    const lock = path.join(p.dir, '.reclazz', 'build.lock');
    fs.mkdirSync(lock, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    const run = await runCli(['--json', '--wait', '20000', ...uniqueBuild(p.classes)], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    // Taken over, not waited out (the run's own time, start-up aside).
    expect(jsonResult(run).durationMs).toBeLessThan(10_000);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('a lock whose run is gone (its holder process no longer exists) is taken over at once', async () => {
    const p = project();
    await agentFor(p, agents, { portFile: p.portFile });
    const lock = path.join(p.dir, '.reclazz', 'build.lock');
    fs.mkdirSync(lock, { recursive: true });
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.writeFileSync(`${lock}.holder`, JSON.stringify({ pid: gone, host: os.hostname() }));
    const run = await runCli(['--json', '--wait', '20000', ...uniqueBuild(p.classes)], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('waiting for another reclazz-build run');
    expect(jsonResult(run).durationMs).toBeLessThan(5000);
    expect(fs.existsSync(lock) || fs.existsSync(`${lock}.holder`)).toBe(false);
  });

  it('a lock whose holder pid now names another process (started at another time: a reboot, a reused pid) is taken over at once', async () => {
    const p = project();
    await agentFor(p, agents, { portFile: p.portFile });
    const lock = path.join(p.dir, '.reclazz', 'build.lock');
    fs.mkdirSync(lock, { recursive: true });
    // pid 1 runs, but did not start in 1970.
    fs.writeFileSync(`${lock}.holder`, JSON.stringify({ pid: 1, host: os.hostname(), start: { startMs: 1000, errorMs: 10 } }));
    const run = await runCli(['--json', '--wait', '3000', ...uniqueBuild(p.classes)], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('waiting for another reclazz-build run');
    expect(fs.existsSync(lock) || fs.existsSync(`${lock}.holder`)).toBe(false);
  });

  it('a run suspended with its lock (SIGSTOP, as Ctrl-Z does) keeps it: another run waits, it never overlaps', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const go = path.join(p.dir, 'go');
    const suspended = startCli(buildCommand(p, { until: go }), { cwd: p.dir });
    await waitFor(() => buildRan(p), 'the first build to start');
    // The run records its build in the holder file just after starting it: stopped before that, it names no build.
    const holder = path.join(p.dir, '.reclazz', 'build.lock.holder');
    await waitFor(() => fs.existsSync(holder) && fs.readFileSync(holder, 'utf8').includes('"build"'), 'the holder file to name the build');
    process.kill(suspended.pid!, 'SIGSTOP');
    try {
      const second = await runCli(['--wait', '7000', ...uniqueBuild(p.classes)], { cwd: p.dir });
      expect(second.exitCode, second.stderr).toBe(69);
      expect(second.stderr).toMatch(/another reclazz-build run in this checkout still holds .*build\.lock after \d+ ms/);
      // The run that holds it is named, and the build it runs, so the user knows what to bring back (fg) or wait for.
      expect(second.stderr).toMatch(new RegExp(`build\\.lock after \\d+ ms \\(its process ${suspended.pid!}, building with sh -c `));
    } finally {
      process.kill(suspended.pid!, 'SIGCONT');
      release(go);
    }
    const first = await suspended;
    expect(first.exitCode, String(first.stderr)).toBe(0);
    expect(String(first.stderr)).not.toContain('took over the run lock');
    expect(agent.received.filter((r) => r.line.startsWith('BUILD started'))).toHaveLength(1);
  });

  it('a live lock is waited for with a message up to --wait, then 69; the build never runs', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const unlock = await lockfile.lock(path.join(p.dir, '.reclazz'), {
      lockfilePath: path.join(p.dir, '.reclazz', 'build.lock'),
      stale: 5000,
      realpath: false,
    });
    try {
      const run = await runCli(['--wait', '700', ...uniqueBuild(p.classes)], { cwd: p.dir });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(run.stderr).toMatch(/waiting for another reclazz-build run in this checkout to finish/);
      expect(run.stderr).toMatch(/another reclazz-build run in this checkout still holds .*build\.lock after \d+ ms/);
      expect(run.stderr).toMatch(
        /next: wait for it to finish \(a suspended one: fg\), or raise --wait <ms>; if no run is left here, remove .*build\.lock and .*build\.lock\.holder/,
      );
      expect(buildRan(p)).toBe(false);
      expect(agent.received).toEqual([]);
    } finally {
      await unlock();
    }
  });
});
