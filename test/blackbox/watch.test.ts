/**
 * `reclazz-build watch` on the real binary against the fake agent: the cycles of three edits on
 * one connection, edits during a build coalesced into one more cycle, the agent restarted during
 * the watch, a class compiled outside the watch whose reload failed, and the signals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { runCli } from '../support/cli.js';
import { agentFor, project } from '../support/project.js';
import { builds, CYCLE_BEGINS, CYCLE_ENDS, editSource, holdBuilds, type RunningWatch, startWatch, watchProject } from '../support/watch.js';
import { sleep, waitFor } from '../support/wait.js';

const agents: FakeAgent[] = [];
const watches: RunningWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

function watch(...args: Parameters<typeof startWatch>): RunningWatch {
  const running = startWatch(...args);
  watches.push(running);
  return running;
}

/** The BUILD verbs the agent received, in order. */
function buildVerbs(agent: FakeAgent): string[] {
  return agent.received.filter((r) => r.line.startsWith('BUILD ')).map((r) => r.line.split(' ')[1]!);
}

describe('reclazz-build watch', () => {
  it('three edits, one with a compile error: three cycles, 0 / build failed / 0, one connection; the failed compile wrote nothing, so no hold is left', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const w = watch(p);
    await w.watching();
    // The start line names the folders it watches, so a wrong guess is seen at once.
    expect(w.json.find((j) => j.type === 'news' && j.news === 'watching')?.line).toMatch(
      /• watching 1 folder: src\/main\/java \(debounce \d+ ms\)/,
    );
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    editSource(p, 'com.acme.Greeter', 'greeter-v3 ERROR');
    await w.cyclesEnded(2);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(3);
    const exit = await w.stop('SIGINT');

    expect(cycles.map((c) => [c.result.reason, c.result.exitCode])).toEqual([
      ['ok', 0],
      ['build-failed', 1],
      ['ok', 0],
    ]);
    expect(cycles[0]!.line).toMatch(/✔ 1 class live in .* \(build .*, verify .*\)$/);
    // Like javac, the failed compile wrote no class file: BUILD ok released the hold, capturing nothing.
    expect(cycles[1]!.line).toMatch(/✖ build failed \(exit 1\): fix and save$/);
    expect(cycles[2]!.line).toMatch(/✔ 1 class live in .* \(build .*, verify .*\)$/);
    for (const c of cycles) expect(c.result.classes.filter((k) => k.className === 'com.acme.Greeter').length).toBeLessThanOrEqual(1);
    expect(cycles[2]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }));
    expect(new Set(agent.received.map((r) => r.client)).size).toBe(1);
    expect(buildVerbs(agent)).toEqual(['started', 'ok', 'started', 'ok', 'started', 'ok']);
    expect(agent.hold().kind).toBe('none');
    // Exactly one start line and one end line per cycle, which the problem matcher's patterns find.
    expect(w.stderr.filter((l) => CYCLE_BEGINS.test(l))).toHaveLength(3);
    expect(w.stderr.filter((l) => CYCLE_ENDS.test(l))).toHaveLength(3);
    expect(exit.exitCode).toBe(130);
    const result = w.json.at(-1)!;
    expect(result).toMatchObject({ type: 'result', action: 'watch', reason: 'interrupted', exitCode: 130, cycles: 3, hold: 'none' });
    expect((result.last as { reason: string }).reason).toBe('ok');
    expect(w.stderr.at(-1)).toBe(`reclazz-build: last cycle: ${cycles[2]!.line}`);
  });

  it('edits during a build make exactly one more cycle, and two builds never overlap', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const w = watch(p);
    await w.watching();
    const release = holdBuilds(p);
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await waitFor(() => builds(p).length === 1, 'the first build to start');
    // Edits while it still runs (it waits for the release), apart by more than the file system's clock.
    for (const n of [3, 4, 5]) {
      editSource(p, 'com.acme.Greeter', `greeter-v${n}`);
      await sleep(150);
    }
    release();
    const cycles = await w.cyclesEnded(2);
    // Nothing more comes: the edits during the first build were one cycle (a window for one that must not come).
    await sleep(1500);
    expect(w.cycles()).toHaveLength(2);
    await w.stop('SIGTERM');
    expect(cycles.map((c) => c.result.reason)).toEqual(['ok', 'ok']);
    const ran = builds(p);
    expect(ran).toHaveLength(2);
    expect(ran[1]!.start).toBeGreaterThanOrEqual(ran[0]!.end!);
    // The agent never saw a started while a build ran: started and its finish alternate.
    expect(buildVerbs(agent)).toEqual(['started', 'ok', 'started', 'ok']);
    expect(fs.readFileSync(path.join(p.classes, 'com', 'acme', 'Greeter.class'), 'utf8')).toBe('greeter-v5');
  });

  it('the agent restarted during the watch: it reconnects, and the next cycle proves its classes against the new session', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const w = watch(p);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    const [first] = await w.cyclesEnded(1);
    const before = agent.sessionId;
    await agent.restart();
    await waitFor(() => w.json.some((j) => j.type === 'news' && j.news === 'new-app-session'), `the new session${w.stderr.join('\n')}`);
    expect(w.json.filter((j) => j.type === 'news').map((j) => j.news)).toEqual(['watching', 'agent-lost', 'new-app-session']);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    await w.stop();
    expect(first!.result.agent!.sessionId).toBe(before);
    expect(cycles[1]!.result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, agent: { sessionId: agent.sessionId } });
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }));
    expect(agent.sessionId).not.toBe(before);
  });

  it('a class compiled outside the watch between two cycles whose reload failed is not reported live', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, {
      portFile: p.portFile,
      autoReload: true,
      watchDebounceMs: 50,
      watchPollMs: 20,
      verifyStatus: (className) => (className === 'com.acme.Outer' ? 'failed' : 'applied'),
    });
    const w = watch(p);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    // A plain compile in another terminal: no hold, the agent reloads it on its own, and fails.
    fs.writeFileSync(path.join(p.classes, 'com', 'acme', 'Outer.class'), 'outer-v2');
    await waitFor(() => agent.captures >= 2, 'the agent to reload the outside compile');
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    await w.stop();
    expect(cycles[1]!.result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, provenLive: false });
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Outer', status: 'failed' }));
    expect(cycles[1]!.line).toMatch(/⚠ 1 class live, 1 not proven in .*exit 75\)$/);
  });

  it('SIGTERM during a build stops it, sends failed, and exits 143 naming the hold left', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const w = watch(p);
    await w.watching();
    fs.writeFileSync(path.join(p.dir, 'build-sleep-ms'), '20000');
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await waitFor(() => builds(p).length === 1, 'the build to start');
    const exit = await w.stop('SIGTERM');
    expect(exit.exitCode).toBe(143);
    expect(buildVerbs(agent)).toEqual(['started', 'failed']);
    expect(agent.hold().kind).toBe('named');
    const result = w.json.at(-1)!;
    expect(result).toMatchObject({ type: 'result', action: 'watch', reason: 'interrupted', exitCode: 143, cycles: 1, hold: 'held' });
    expect(String(result.message)).toMatch(/during the build; the agent keeps the hold for owner \S+: the next run here reuses it/);
    // The interruption is said once (the watch's last words), then the last cycle's line.
    expect(w.stderr.filter((l) => l.includes('interrupted (SIGTERM)'))).toEqual([`reclazz-build: ${String(result.message)}`]);
  });

  it('started before the app: saves wait for the agent, and are built once it is there', async () => {
    const p = watchProject();
    const w = watch(p);
    await w.watching();
    expect(w.json.filter((j) => j.type === 'news').map((j) => j.news)).toEqual(['no-agent-yet', 'watching']);
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    // A window for a cycle that must not come without an agent.
    await sleep(500);
    expect(w.cycles()).toHaveLength(0);
    await agentFor(p, agents, { portFile: p.portFile });
    const [cycle] = await w.cyclesEnded(1);
    await w.stop();
    expect(cycle!.result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true });
    expect(w.json.filter((j) => j.type === 'news').map((j) => j.news)).toEqual(['no-agent-yet', 'watching', 'agent-back']);
    expect(w.stderr.some((l) => /• no agent yet \(.*\): watching sources; connecting when it is there$/.test(l))).toBe(true);
  });

  it('with --exit-on-agent-loss the watch ends when the agent goes away', async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const w = watch(p, ['--exit-on-agent-loss']);
    await w.watching();
    await agent.stop();
    const result = await w.cli;
    expect(result.exitCode).toBe(69);
    expect(w.json.at(-1)).toMatchObject({ type: 'result', action: 'watch', reason: 'agent-disconnected', cycles: 0 });
  });
});

describe('reclazz-build watch with nothing to watch', () => {
  it('no source folder and no --watch: a usage error (2) naming the folder and --watch, not a watch that waits for ever', async () => {
    const p = project();
    const run = await runCli(['watch', '--', 'true'], { cwd: p.dir });
    expect(run.stderr).toContain(`nothing to watch in ${p.dir}: no source folder there or in its modules`);
    expect(run.stderr).toContain('or name what to watch with --watch <folder>');
    expect(run.exitCode).toBe(2);
  });
});

describe('reclazz-build watch in a container', () => {
  // The watch reads its options where a single run does: a --path-map given to it reaches every cycle.
  it('takes --path-map: an agent that reports /app paths proves the class of the first save', async () => {
    const p = watchProject();
    await agentFor(p, agents, { portFile: p.portFile, pathMap: { '/app': p.dir } });
    const w = watch(p, ['--path-map', `/app=${p.dir}`]);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    const cycles = await w.cyclesEnded(1);
    await w.stop('SIGINT');
    expect([cycles[0]!.result.reason, cycles[0]!.result.exitCode], w.stderr.join('\n')).toEqual(['ok', 0]);
    expect(cycles[0]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }));
  });
});
