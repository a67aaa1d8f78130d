/**
 * A change that needs an app restart, restarted and proven live in one command
 * (`--restart-command`, `--await-restart`): the real binary against the fake agent's own
 * binary, which restarts its app on SIGHUP as the real agent's JVM would (a new agent session,
 * a new port in the port file, a new JVM that loads the class files on disk).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { appStartsLater } from '../support/agents.js';
import { jsonResult, runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { Lines, waitFor } from '../support/wait.js';
import { editSource, startWatch, watchProject, type RunningWatch } from '../support/watch.js';
import { writeJar } from '../support/zip.js';

const FAKE_AGENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/reclazz-fake-agent.js');

interface Project {
  dir: string;
  classes: string;
  portFile: string;
}

/** A project whose app has loaded com.acme.Shape and com.acme.Greeter. */
function project(): Project {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Shape', 'shape-v1');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  return { dir, classes, portFile: path.join(dir, '.reclazz', 'agent.port') };
}

interface RunningAgent {
  pid: number;
  out: Lines;
}

const started: ChildProcess[] = [];
const watches: RunningWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
  for (const child of started.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

/** The fake agent's binary in `p`, with com.acme.Shape's reload a superclass change (restart required). */
function agentFor(p: Pick<Project, 'dir'>, extra: string[] = [], restartRequired = 'com.acme.Shape'): Promise<RunningAgent> {
  return fakeAgent(p.dir, ['--watch', 'target/classes', '--restart-required', restartRequired, ...extra]);
}

/** The fake agent's binary started in `dir` with `args` (and fast captures), once it listens. */
async function fakeAgent(dir: string, args: string[]): Promise<RunningAgent> {
  await appStartsLater();
  const child = spawn(process.execPath, [FAKE_AGENT, '--capture-delay-ms', '20', '--reload-ms', '20', ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  const out = new Lines(child.stdout!);
  await out.line(/^fake agent listening/);
  return { pid: child.pid!, out };
}

/** A build that rewrites both classes: Shape's change needs a restart. */
function build(p: Project): string[] {
  const script = `
    const fs = require('fs'), path = require('path');
    for (const [name, bytes] of [['Shape', 'shape-v2'], ['Greeter', 'greeter-v2']])
      fs.writeFileSync(path.join(${JSON.stringify(p.classes)}, 'com', 'acme', name + '.class'), bytes);`;
  return ['--', process.execPath, '-e', script];
}

/**
 * A restart command that restarts the fake agent's app and then, once the new JVM's agent has
 * written its new port, runs `then` (a shell command, in the project).
 */
function restartThenRun(portFile: string, pid: number, then: string): string {
  // One read per look: a test and a read apart could see the old file, then none (the agent removes it first).
  return `old=$(cat ${portFile}); kill -HUP ${pid}; while now=$(cat ${portFile} 2>/dev/null); [ -z "$now" ] || [ "$now" = "$old" ]; do sleep 0.02; done; ${then}`;
}

/** {@link restartThenRun} touching `file`: a class file younger than the new JVM. */
function restartThenTouch(portFile: string, pid: number, file: string): string {
  return restartThenRun(portFile, pid, `touch ${file}`);
}

const events = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('a change that needs an app restart', () => {
  it('with --restart-command: restarts the app once, and proves every class file live in the new agent session (exit 0)', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(['--json', '--restart-command', `kill -HUP ${agent.pid}`, ...build(p)], { cwd: p.dir });
    const result = jsonResult(run);
    expect(run.stderr).toContain('proven live after a restart');
    expect(result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, restarted: true });
    const back = await agent.out.line(/^fake agent restarted/);
    expect(agent.out.all.filter((l) => l.startsWith('fake agent restarted'))).toHaveLength(1);
    expect(back).toContain(`session ${String(result.restartSessionId)}`);
    const lines = events(run.stdout);
    // The result's agent is the one in the new session; the build's was another.
    const before = (lines.find((l) => l.type === 'agent')!.agent as { sessionId: string }).sessionId;
    expect(result.restartSessionId).not.toBe(before);
    expect((result.agent as { sessionId: string }).sessionId).toBe(result.restartSessionId);
    expect(lines.find((l) => l.type === 'restart-needed')).toMatchObject({
      classes: ['com.acme.Shape'],
      command: `kill -HUP ${agent.pid}`,
    });
    expect(lines.find((l) => l.type === 'restart')).toMatchObject({ exitCode: 0, command: `kill -HUP ${agent.pid}` });
    const classes = result.classes as { className: string; status: string }[];
    expect(classes.map((c) => [c.className, c.status]).sort()).toEqual([
      ['com.acme.Greeter', 'unchanged'],
      ['com.acme.Shape', 'unchanged'],
    ]);
    expect(result.hold).toBe('none');
    expect(run.exitCode).toBe(0);
  });

  it('a restart command that fails ends 75 with its exit status, and the app is not waited for', async () => {
    const p = project();
    await agentFor(p);
    const run = await runCli(['--restart-command', 'echo restarting; exit 3', ...build(p)], { cwd: p.dir });
    expect(run.stderr).toContain('restarting');
    expect(run.stderr).toMatch(/restart command FAILED \(exit status 3\)/);
    expect(run.stderr).toContain('the restart command failed (exit status 3): not proven live');
    expect(run.exitCode).toBe(75);
  });

  it('an app that never comes back ends 75 after --restart-timeout', async () => {
    const p = project();
    await agentFor(p);
    const run = await runCli(['--restart-command', 'true', '--restart-timeout', '1000', ...build(p)], { cwd: p.dir });
    expect(run.stderr).toContain('did not come back with a new agent session within 1 s');
    expect(run.exitCode).toBe(75);
  });

  it.each([
    ['whose watch list says so', ['--watch', 'target/classes']],
    ['whose DOCTOR sample is truncated', ['--watch', 'target/classes', '--watch-sample-truncated']],
    ['that watches nothing', ['--agent-on', 'attached']],
  ])(
    "another app's agent writing the same port file, %s, is not taken for the app's: 75 when the app does not come back",
    async (_, how) => {
      const p = project();
      const first = await agentFor(p);
      const app = started.at(-1)!;
      const stopped = new Promise((resolve) => app.once('exit', resolve));
      const other = tempDir();
      fs.mkdirSync(path.join(other, 'target', 'classes'), { recursive: true });
      const run = runCli(['--restart-command', `kill -TERM ${first.pid}`, '--restart-timeout', '3000', ...build(p)], { cwd: p.dir });
      await stopped;
      // It answers DOCTOR in a new agent session with VERIFY wired, and started after the build wrote its classes.
      await fakeAgent(other, ['--port-file', p.portFile, '--app-dir', other, ...how]);
      const done = await run;
      expect(done.stderr).toContain('did not come back with a new agent session within 3 s');
      expect(done.exitCode).toBe(75);
    },
  );

  it('a new JVM that loads its classes from a jar, not the class output directory, is not proven by the files there: 75', async () => {
    const p = project();
    const agent = await agentFor(p, ['--class-path', 'target/app.jar']);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', `kill -HUP ${agent.pid}`, ...build(p)], { cwd: p.dir });
    expect(run.stderr).not.toContain('at its path since before the new JVM started');
    expect(run.exitCode).toBe(75);
  });

  it('a folder above the class output directory swapped around the restart is not proven by its age: 75', async () => {
    const p = project();
    // target-old: what the app ran before this change, there before the app started.
    writeClass(path.join(p.dir, 'target-old', 'classes'), 'com.acme.Shape', 'shape-v1');
    writeClass(path.join(p.dir, 'target-old', 'classes'), 'com.acme.Greeter', 'greeter-v1');
    const agent = await agentFor(p);
    const swap = 'mv target target-new && mv target-old target';
    const back = 'mv target target-old && mv target-new target';
    const restart = `${swap}; ${restartThenRun(p.portFile, agent.pid, back)}`;
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).not.toContain('at its path since before the new JVM started');
    expect(run.stderr).not.toContain('✔');
    expect(run.exitCode).toBe(75);
  });

  it('a symbolic link to the class output directory flipped around the restart is not proven by its age: 75', async () => {
    const dir = tempDir();
    const one = path.join(dir, 'out', 'one');
    writeClass(one, 'com.acme.Shape', 'shape-v1');
    writeClass(one, 'com.acme.Greeter', 'greeter-v1');
    writeClass(path.join(dir, 'out', 'two'), 'com.acme.Shape', 'shape-v1');
    writeClass(path.join(dir, 'out', 'two'), 'com.acme.Greeter', 'greeter-v1');
    fs.mkdirSync(path.join(dir, 'target'));
    fs.symlinkSync(one, path.join(dir, 'target', 'classes'));
    const p = { dir, classes: path.join(dir, 'target', 'classes'), portFile: path.join(dir, '.reclazz', 'agent.port') };
    const agent = await agentFor(p);
    const flip = (to: string) => `ln -sfn ${path.join(dir, 'out', to)} target/classes`;
    const restart = `${flip('two')}; ${restartThenRun(p.portFile, agent.pid, flip('one'))}`;
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).not.toContain('at its path since before the new JVM started');
    expect(run.stderr).not.toContain('✔');
    expect(run.exitCode).toBe(75);
  });

  it("a jar before the class output directory on the new JVM's class path, holding the class, shadows its file there: 75", async () => {
    const p = project();
    writeJar(path.join(p.dir, 'target', 'old.jar'), { 'com/acme/Shape.class': 'shape-v0' });
    const agent = await agentFor(p, ['--class-path', `target/old.jar${path.delimiter}target/classes`]);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', `kill -HUP ${agent.pid}`, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(/com\.acme\.Shape/);
    expect(run.stderr).not.toContain('✔');
    expect(run.exitCode).toBe(75);
  });

  it('a log file the app writes in the checkout root after the restart does not stop the proof: 0', async () => {
    const p = project();
    const agent = await agentFor(p);
    const restart = restartThenRun(p.portFile, agent.pid, 'echo started > app.log');
    const run = await runCli(['--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(fs.readFileSync(path.join(p.dir, 'app.log'), 'utf8')).toBe('started\n');
    expect(run.stderr).toContain('proven live after a restart');
    expect(run.exitCode).toBe(0);
  });

  it('after the restart each class says its evidence, the new class among them, and the count is the rows', async () => {
    const p = project();
    const agent = await agentFor(p);
    const fresh = path.join(p.classes, 'com', 'acme', 'Fresh.class');
    const withFresh = [...build(p).slice(0, -1), `${build(p).at(-1)!};fs.writeFileSync(${JSON.stringify(fresh)}, 'fresh-v1');`];
    const run = await runCli(['--restart-command', `kill -HUP ${agent.pid}`, ...withFresh], { cwd: p.dir });
    const rows = run.stderr.split('\n').filter((line) => /^\s+\S+\s+com\.acme\.\w+\s/.test(line));
    expect(rows.map((line) => line.trim().split(/\s+/).slice(0, 2).join(' ')).sort()).toEqual([
      'unchanged com.acme.Fresh',
      'unchanged com.acme.Greeter',
      'unchanged com.acme.Shape',
    ]);
    // Its file's age shows what the new JVM loads, not that it has loaded it: no receipt says so.
    for (const row of rows)
      expect(row).toContain('at its path since before the new JVM started: the bytes it loads when it loads the class');
    expect(run.stderr).not.toContain('the bytes it loaded');
    expect(run.stderr).toMatch(/✔ proven live: all 3 class\(es\) of the change proven live after a restart \(3 at their path/);
    expect(run.exitCode).toBe(0);
  });

  it("a new JVM whose start cannot be seen from here ends 75 'restarted, not provable', never 0", async () => {
    const p = project();
    // DOCTOR names a process that does not exist here, as for an app in a container.
    const agent = await agentFor(p, ['--report-pid', '2147483646']);
    const run = await runCli(['--json', '--restart-command', `kill -HUP ${agent.pid}`, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(/it restarted \(agent session [0-9a-f-]+\), not provable: the app's process 2147483646 is not visible here/);
    expect(jsonResult(run)).toMatchObject({ exitCode: 75, provenLive: false, restarted: true });
    expect(run.exitCode).toBe(75);
  });

  it('a class file written after the new JVM started, with no receipt for it, is still not proven: 75', async () => {
    const p = project();
    const agent = await agentFor(p);
    const shape = path.join(p.classes, 'com', 'acme', 'Shape.class');
    const restart = restartThenTouch(p.portFile, agent.pid, shape);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(/1 class file\(s\) are still not proven live in the new JVM/);
    expect(run.exitCode).toBe(75);
  });

  it('a new class written after the new JVM started is not proven by the old JVM having not loaded it: 75', async () => {
    const p = project();
    const agent = await agentFor(p);
    const fresh = path.join(p.classes, 'com', 'acme', 'Fresh.class');
    const withFresh = [...build(p).slice(0, -1), `${build(p).at(-1)!};fs.writeFileSync(${JSON.stringify(fresh)}, 'fresh-v1');`];
    const restart = restartThenTouch(p.portFile, agent.pid, fresh);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', restart, ...withFresh], { cwd: p.dir });
    expect(run.stderr).toMatch(/1 class file\(s\) are still not proven live in the new JVM/);
    expect(run.stderr).toMatch(/com\.acme\.Fresh/);
    expect(run.exitCode).toBe(75);
  });

  it('with --await-restart: says so once, waits for the user to restart the app, then proves the change (exit 0)', async () => {
    const p = project();
    const agent = await agentFor(p);
    const cli = startCli(['--await-restart', ...build(p)], { cwd: p.dir });
    const err = new Lines(cli.stderr!);
    await err.line(/restart the app now \(from the IDE or a terminal\): waiting up to 120 s/);
    process.kill(agent.pid, 'SIGHUP');
    const run = await cli;
    expect(String(run.stderr)).toContain('proven live after a restart');
    expect(err.all.filter((l) => l.includes('restart the app now'))).toHaveLength(1);
    expect(run.exitCode).toBe(0);
  });

  it('Ctrl-C while waiting for the restart ends 130 with nothing held', async () => {
    const p = project();
    await agentFor(p);
    const cli = startCli(['--json', '--await-restart', ...build(p)], { cwd: p.dir });
    const err = new Lines(cli.stderr!);
    await err.line(/restart the app now/);
    process.kill(cli.pid!, 'SIGINT');
    const run = await cli;
    const result = jsonResult({ exitCode: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) });
    expect(result).toMatchObject({ reason: 'interrupted', hold: 'none' });
    expect(String(run.stderr)).toContain('interrupted (SIGINT) while the app restarted');
    expect(run.exitCode).toBe(130);
  });

  it('with several agents: runs the command once, waits for every agent whose app needed the restart, and proves each (exit 0)', async () => {
    const root = tempDir();
    const shared = path.join(root, 'shared', 'target', 'classes');
    writeClass(shared, 'com.acme.shared.Money', 'money-v1');
    for (const svc of ['svc-a', 'svc-b']) writeClass(path.join(root, svc, 'target', 'classes'), `com.acme.${svc.slice(-1)}.Service`, 'v1');
    // Both apps load the shared module, whose change is a superclass change.
    const [a, b] = await Promise.all(
      ['svc-a', 'svc-b'].map((svc) =>
        fakeAgent(path.join(root, svc), ['--watch', 'target/classes', '--watch', shared, '--restart-required', 'com.acme.shared.Money']),
      ),
    );
    const marker = path.join(root, 'restarts.log');
    const command = `echo once >> ${marker}; kill -HUP ${a.pid}; kill -HUP ${b.pid}`;
    const write = `require('fs').writeFileSync(${JSON.stringify(path.join(shared, 'com', 'acme', 'shared', 'Money.class'))}, 'money-v2')`;
    const run = await runCli(['--json', '--restart-command', command, '--', process.execPath, '-e', write], { cwd: root });
    const result = jsonResult(run);
    expect(fs.readFileSync(marker, 'utf8')).toBe('once\n');
    expect(result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true });
    const parts = result.agents as { restarted?: boolean; provenLive: boolean; restartSessionId?: string }[];
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part).toMatchObject({ restarted: true, provenLive: true });
    for (const agent of [a, b]) expect(await agent.out.line(/^fake agent restarted/)).toContain(`session `);
    expect(run.exitCode).toBe(0);
  });

  it('without --restart-command or --await-restart, a restart-required change still ends 75 and nothing is restarted', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(build(p), { cwd: p.dir });
    expect(run.stderr).toContain('need an app restart');
    expect(agent.out.all.some((l) => l.startsWith('fake agent restarted'))).toBe(false);
    expect(fs.existsSync(p.portFile)).toBe(true);
    expect(run.exitCode).toBe(75);
  });
});

describe('watch mode with a restart command', () => {
  it('restarts the app once per cycle that needs it, proves the change after each restart, and keeps watching', async () => {
    const p = watchProject();
    const agent = await agentFor(p, [], 'com.acme.Greeter');
    const w = startWatch(p, ['--restart-command', `kill -HUP ${agent.pid}`]);
    watches.push(w);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    await agent.out.line(/^fake agent restarted/);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    expect(cycles.map((c) => [c.result.reason, c.result.exitCode])).toEqual([
      ['ok', 0],
      ['ok', 0],
    ]);
    for (const c of cycles) expect(c.line).toMatch(/✔ 1 class live in .*after an app restart\)$/);
    expect(agent.out.all.filter((l) => l.startsWith('fake agent restarted'))).toHaveLength(2);
    expect(w.json.filter((j) => j.type === 'restart')).toHaveLength(2);
    expect(w.json.some((j) => j.type === 'news' && j.news === 'new-app-session')).toBe(true);
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
  });

  it('with --await-restart, a new save ends the wait for the restart: the cycle starts over', async () => {
    const p = watchProject();
    const agent = await agentFor(p, [], 'com.acme.Greeter');
    const w = startWatch(p, ['--await-restart']);
    watches.push(w);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await waitFor(() => w.stderr.some((l) => l.includes('restart the app now')), 'the watch to wait for the restart');
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    // The first cycle ends at the save, unproven; the next one waits for the restart in its turn.
    const [first] = await w.cyclesEnded(1);
    expect(first!.result.exitCode).toBe(75);
    await waitFor(() => w.stderr.filter((l) => l.includes('restart the app now')).length === 2, 'the next cycle to wait for the restart');
    process.kill(agent.pid, 'SIGHUP');
    const cycles = await w.cyclesEnded(2);
    expect(cycles[1]!.result).toMatchObject({ exitCode: 0, provenLive: true });
    expect(agent.out.all.filter((l) => l.startsWith('fake agent restarted'))).toHaveLength(1);
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
  });

  it('does not restart the app again for a class an earlier restart could not prove', async () => {
    const p = watchProject();
    const agent = await agentFor(p, [], 'com.acme.Greeter');
    const greeter = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const w = startWatch(p, ['--verify-timeout', '1000', '--restart-command', restartThenTouch(p.portFile, agent.pid, greeter)]);
    watches.push(w);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    expect(cycles.map((c) => c.result.exitCode)).toEqual([75, 75]);
    // The cycle's result line comes on stdout; its words on stderr may come a moment later.
    const notAgain = 'which an earlier restart in this watch could not prove: not restarted again for them';
    await waitFor(() => w.stderr.some((l) => l.includes(notAgain)), 'the second cycle to say it does not restart again');
    expect(w.stderr.join('\n')).toContain('still not proven live in the new JVM');
    expect(agent.out.all.filter((l) => l.startsWith('fake agent restarted'))).toHaveLength(1);
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
  });
});
