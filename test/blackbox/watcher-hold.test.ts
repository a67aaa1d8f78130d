/**
 * Issue 35, items 1 and 2, on the real binary against the fake agent (modelled on the agent's
 * FileWatcher.startWatching, registerDirectories, dispatchClassesChangedDuringStartup and scanNow,
 * and ReloadQueue.acceptBuild and submitClassBatch): while an agent answers, every build runs under
 * its hold. A watcher still starting is waited for before BUILD ok (its start reloads what changed
 * since the app started, reading files the build may still be writing: only the hold keeps that
 * back); one that does not start in time leaves the hold to the run's owner. A capture that keeps the
 * hold after ok (its scan did not finish) ends the round at once, whatever DOCTOR said of the watcher.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { runResultLineSchema } from '../../src/report/schema.js';
import { jsonResult, runCli, startCli } from '../support/cli.js';
import { classFile, run, script, sha, useProjects } from '../support/evidence.js';
import { agentFor, type Project } from '../support/project.js';
import { editSource, type RunningWatch, startWatch, watchProject } from '../support/watch.js';
import { Lines, waitFor } from '../support/wait.js';

const projectWithAgent = useProjects();

/** Far beyond what any of these runs takes: a run that ends well before it ended on the agent's words. */
const LONG_MS = 60_000;

const sent = (agent: FakeAgent, verb: string) => agent.received.filter((r) => r.line.startsWith(`${verb} `));
const buildStates = (agent: FakeAgent) => sent(agent, 'BUILD').map((r) => r.line.split(' ')[1]);
const savedOwner = (p: Project) => JSON.parse(fs.readFileSync(path.join(p.dir, '.reclazz', 'owner.json'), 'utf8'));

/** Runs the CLI in `p`; once a line of its output (stdout with --json, else stderr) matches `when`, `then` runs: on the CLI's word, not a timer. */
async function runUntil(p: Project, args: string[], when: RegExp, then: () => void) {
  const cli = startCli(args, { cwd: p.dir, timeoutMs: 90_000 });
  await new Lines((args.includes('--json') ? cli.stdout : cli.stderr)!).line(when);
  then();
  const done = await cli;
  return { exitCode: done.exitCode ?? -1, stdout: String(done.stdout), stderr: String(done.stderr) };
}

/** Runs the CLI in `p`; returns the run and how long it took, in ms. */
async function timed(p: Project, args: string[]) {
  const started = performance.now();
  const result = await run(p, args);
  return { ...result, elapsedMs: performance.now() - started };
}

describe('a watcher still starting: the build is held, and BUILD ok waits for the watcher', () => {
  it('the watcher starts mid-build: what it reads then stays held, ok goes once it runs, and the final bytes are proven', async () => {
    const { p, agent } = await projectWithAgent({ watcherStartMs: Infinity, scanTimeoutMs: 1000 });
    const greeter = classFile(p, 'com.acme.Greeter');
    const go = path.join(p.dir, 'go');
    // Like javac: the class file is there half-written while the build runs, whole when it ends.
    const build = script(
      `fs.writeFileSync(${JSON.stringify(greeter)}, 'half'); const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(go)})) { clearInterval(t); fs.writeFileSync(${JSON.stringify(greeter)}, 'greeter-v2'); } }, 20);`,
    );
    let watchingSinceMs = 0;
    const result = await runUntil(p, ['--verify-timeout', String(LONG_MS), ...build], /hold acquired; running/, () => {
      // The watcher starts while the half-written file is on disk: its start-up dispatch reads it.
      agent.startWatching();
      watchingSinceMs = Date.now();
      fs.writeFileSync(go, '');
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/✔ proven live/);
    expect(result.stderr).not.toContain('WITHOUT a hold');
    const warning = result.stderr.indexOf("the agent's file watcher is still starting");
    expect(warning).toBeGreaterThanOrEqual(0);
    expect(warning).toBeLessThan(result.stderr.indexOf('hold acquired'));
    expect(buildStates(agent)).toEqual(['started', 'ok']);
    expect(sent(agent, 'BUILD')[1]!.atMs).toBeGreaterThanOrEqual(watchingSinceMs);
    // One capture, the held one: the half-written bytes the watcher's start read were never reloaded on their own.
    expect(agent.holdLog.map((e) => e.event)).toEqual(['acquired', 'capture-scheduled', 'released']);
    expect(agent.captures).toBe(1);
    expect(sent(agent, 'VERIFY').every((r) => r.line.endsWith(sha('greeter-v2')))).toBe(true);
    expect(agent.hold().kind).toBe('none');
  });

  it('not started within --verify-timeout: no ok, the hold left to the owner (75, said plainly); `reclazz-build -- true` releases it once the app is ready', async () => {
    const { p, agent } = await projectWithAgent({ watcherStartMs: Infinity });
    const build = script(`fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2');`);
    const left = await timed(p, ['--verify-timeout', '1500', ...build]);
    expect(left.exitCode, left.stderr).toBe(75);
    const owner = agent.hold().owner!;
    expect(agent.hold().kind).toBe('named');
    expect(buildStates(agent)).toEqual(['started']);
    expect(left.stderr).toMatch(/waiting for the file watcher of the agent on port \d+ to start/);
    expect(left.stderr).toMatch(/the agent's file watcher had not started \d+ ms after the build \(--verify-timeout\)/);
    expect(left.stderr).toContain(`BUILD ok was not sent, nothing of this build reloaded, and the agent STILL HOLDS it for owner ${owner}`);
    expect(left.stderr).toContain('once the app is ready, run again here (or reclazz-build -- true)');
    expect(left.stderr).not.toContain('WITHOUT a hold');
    expect(left.elapsedMs).toBeLessThan(LONG_MS / 4);
    expect(savedOwner(p)).toMatchObject({ owner, held: true });

    agent.startWatching();
    const released = await run(p, ['--', 'true']);
    expect(released.exitCode, released.stderr).toBe(0);
    expect(released.stderr).toContain(`recovering the build an earlier run left held (owner token ${owner})`);
    expect(released.stderr).toMatch(/✔ proven live/);
    expect(agent.hold().kind).toBe('none');
    expect(buildStates(agent)).toEqual(['started', 'started', 'ok']);
  });

  it('--wait-for-agent bounds the wait instead of --verify-timeout', async () => {
    const { p, agent } = await projectWithAgent({ watcherStartMs: Infinity });
    const build = script(`fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2');`);
    const left = await timed(p, ['--wait-for-agent', '800', '--verify-timeout', String(LONG_MS), ...build]);
    expect(left.exitCode, left.stderr).toBe(75);
    expect(left.stderr).toMatch(/had not started \d+ ms after the build \(--wait-for-agent\)/);
    expect(left.elapsedMs).toBeLessThan(LONG_MS / 4);
    expect(agent.hold().kind).toBe('named');
  });

  it('a failed build sends BUILD failed at once, without waiting for the watcher: the hold stays with the owner', async () => {
    const { p, agent } = await projectWithAgent({ watcherStartMs: Infinity });
    const build = script(`fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2'); process.exit(3);`);
    const failed = await timed(p, ['--verify-timeout', String(LONG_MS), ...build]);
    expect(failed.exitCode, failed.stderr).toBe(3);
    expect(buildStates(agent)).toEqual(['started', 'failed']);
    expect(failed.stderr).toContain(`the agent keeps holding its output for owner ${agent.hold().owner}`);
    expect(failed.elapsedMs).toBeLessThan(LONG_MS / 4);
  });
});

describe('a capture that keeps the hold after ok is seen at once, whatever DOCTOR said of the watcher', () => {
  const scanFailed = 'Accepting build output failed: IllegalStateException: Build scan did not finish';

  /** Asserts a run that ended on the agent's scan failure: 75 well before the deadline, the kept hold named, with its cause in JSON. */
  function expectScanHoldKept(result: { exitCode: number; stdout: string; stderr: string; elapsedMs: number }, agent: FakeAgent) {
    expect(result.exitCode, result.stderr).toBe(75);
    expect(result.elapsedMs).toBeLessThan(LONG_MS / 4);
    const owner = agent.hold().owner!;
    expect(agent.hold().kind).toBe('named');
    expect(result.stdout).toContain(scanFailed);
    const json = jsonResult(result);
    expect(runResultLineSchema.safeParse(json).success).toBe(true);
    expect(json).toMatchObject({ reason: 'verify-incomplete', owner, hold: 'held', holdKept: { cause: 'scan-unfinished' } });
    expect(json.message).toContain(`the agent's scan of this build did not finish`);
    expect(json.message).toContain(`STILL HOLDS the build for owner ${owner}`);
    expect(json.classes).toEqual([expect.objectContaining({ className: 'com.acme.Greeter', status: 'hold-kept' })]);
  }

  const writesGreeter = (p: Project) => script(`fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2');`);
  /** A build that writes Greeter, then ends once `go` exists. */
  const writesGreeterUntil = (p: Project, go: string) =>
    script(
      `fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2'); const t = setInterval(() => fs.existsSync(${JSON.stringify(go)}) && clearInterval(t), 20);`,
    );

  it('stopped: doctor exits 75 saying so, the build says it before the hold, and its ok keeps the hold (75 at once)', async () => {
    const { p, agent } = await projectWithAgent({ scanTimeoutMs: 1000 });
    agent.stopWatching();
    const doctor = await run(p, ['doctor']);
    const said = doctor.stdout + doctor.stderr;
    expect(doctor.exitCode, said).toBe(75);
    expect(said).toMatch(/^watcher\s+stopped$/m);
    expect(said).toContain("the agent's file watcher has STOPPED");
    expect(said).toContain('restart the app');
    const human = await timed(p, ['--verify-timeout', String(LONG_MS), ...writesGreeter(p)]);
    const stopped = human.stderr.indexOf("the agent's file watcher has STOPPED");
    expect(stopped).toBeGreaterThanOrEqual(0);
    expect(stopped).toBeLessThan(human.stderr.indexOf('hold acquired'));
    expect(human.exitCode, human.stderr).toBe(75);
    expect(human.elapsedMs).toBeLessThan(LONG_MS / 4);
    const json = await timed(p, ['--json', '--verify-timeout', String(LONG_MS), ...writesGreeter(p)]);
    expectScanHoldKept(json, agent);
  });

  it('watching when the run looked, stopped during the build: 75 at once, the hold kept for the owner', async () => {
    const { p, agent } = await projectWithAgent({ scanTimeoutMs: 1000 });
    const go = path.join(p.dir, 'go');
    const started = performance.now();
    const args = ['--json', '--verify-timeout', String(LONG_MS), ...writesGreeterUntil(p, go)];
    const result = await runUntil(p, args, /"type":"build-start"/, () => {
      agent.stopWatching();
      fs.writeFileSync(go, '');
    });
    expect(result.stdout).not.toContain('has STOPPED');
    expectScanHoldKept({ ...result, elapsedMs: performance.now() - started }, agent);
  });

  it('starting when the run looked, stopped while ok waited for it: 75 at once, the hold kept for the owner', async () => {
    const { p, agent } = await projectWithAgent({ watcherStartMs: Infinity, scanTimeoutMs: 1000 });
    const started = performance.now();
    const args = ['--json', '--verify-timeout', String(LONG_MS), ...writesGreeter(p)];
    const result = await runUntil(p, args, /the file watcher of the agent on port \d+ to start/, () => agent.stopWatching());
    expectScanHoldKept({ ...result, elapsedMs: performance.now() - started }, agent);
  });

  it('once the app restarted (as the advice says), the next run builds and proves as usual', async () => {
    const { p, agent } = await projectWithAgent({ scanTimeoutMs: 1000 });
    agent.stopWatching();
    const kept = await run(p, ['--verify-timeout', String(LONG_MS), ...writesGreeter(p)]);
    expect(kept.exitCode, kept.stderr).toBe(75);
    await agent.restart();
    const after = await runCli(['--', 'true'], { cwd: p.dir });
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stderr).toMatch(/✔ proven live/);
    // BUILD ok's receipt schedules the capture, which releases the hold a moment later.
    await waitFor(() => agent.hold().kind === 'none', 'the hold released by the capture');
  });
});

describe('watch mode, cycle by cycle', () => {
  const agents: FakeAgent[] = [];
  const watches: RunningWatch[] = [];
  afterEach(async () => {
    await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('a cycle whose watcher does not start in time leaves the hold; the next, once it runs, recovers it and proves the change', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile, watcherStartMs: Infinity });
    const w = startWatch(p, ['--verify-timeout', '1000']);
    watches.push(w);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    const [first] = await w.cyclesEnded(1);
    expect(first!.result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, hold: 'held' });
    expect(agent.hold().kind).toBe('named');
    expect(buildStates(agent)).toEqual(['started']);

    agent.startWatching();
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    expect(cycles[1]!.result).toMatchObject({ reason: 'ok', exitCode: 0, hold: 'none' });
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }));
    expect(buildStates(agent)).toEqual(['started', 'started', 'ok']);
    await waitFor(() => agent.hold().kind === 'none', 'the hold released by the capture');
  });
});
