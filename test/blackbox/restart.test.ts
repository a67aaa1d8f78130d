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
/** Project folders whose restart script started an app of its own (its pid in `app.pid`): stopped after each test. */
const restartedIn: string[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
  // The command ran in a session (and process group) of its own: what is left of it there (a script still
  // waiting, the app it started) is stopped, and the app wherever it is.
  for (const dir of restartedIn.splice(0)) {
    const group = groupOf(pidIn(dir, 'restart.pid'));
    const app = appPid(dir);
    if (group !== undefined) signal(-group);
    if (app !== undefined) signal(app);
    const gone = (pid: number | undefined) => pid === undefined || !running(pid);
    await waitFor(() => gone(group) && gone(app), `what the restart script in ${dir} started to stop`);
  }
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

/** The app's start as a restart script runs it: the fake agent's binary in the project folder, as {@link agentFor} starts it, then `args`. */
function appStart(args: string[]): string {
  return [process.execPath, FAKE_AGENT, '--capture-delay-ms', '20', '--reload-ms', '20', ...args].map((w) => `'${w}'`).join(' ');
}

/** Script lines that stop the app `pid` and wait until it is gone, as a restart script must before it starts the new one. */
const stopOld = (pid: number) => `kill -TERM ${pid}; while kill -0 ${pid} 2>/dev/null; do sleep 0.02; done`;

/**
 * Writes `lines` as the project's `restart.sh` and returns the restart command that runs it. An app it
 * starts writes its pid to `app.pid` and is stopped after the test.
 */
function restartScript(dir: string, lines: string[]): string {
  fs.writeFileSync(path.join(dir, 'restart.sh'), `echo $$ > restart.pid\n${lines.join('\n')}\n`);
  restartedIn.push(dir);
  return 'sh restart.sh';
}

/** The pid a restart script wrote to `<dir>/<name>`, if it did. */
/**
 * An app whose JVM ends 3 s after SIGTERM (its own shutdown time; its agent's socket and port file
 * go at once), and a restart script that sends SIGTERM and starts the new app without waiting.
 */
async function slowToStop(): Promise<{ p: Project; oldPid: string; restart: string }> {
  const p = project();
  const old = await agentFor(p, ['--shutdown-ms', '3000']);
  const doctor = await runCli(['doctor', '--json'], { cwd: p.dir });
  const oldPid = (jsonResult(doctor).doctor as { pid: string }).pid;
  const restart = restartScript(p.dir, [
    `kill -TERM ${old.pid}`,
    `nohup ${appStart(['--watch', 'target/classes'])} &`,
    'echo $! > app.pid',
  ]);
  return { p, oldPid, restart };
}

function pidIn(dir: string, name: string): number | undefined {
  const file = path.join(dir, name);
  return fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8').trim()) : undefined;
}

/** The app's pid a restart script wrote to `<dir>/app.pid`. */
const appPid = (dir: string) => pidIn(dir, 'app.pid');

/** The process group of `pid`, while it runs. */
function groupOf(pid: number | undefined): number | undefined {
  try {
    return pid === undefined ? undefined : Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** SIGTERM to `pid` (a group when negative), if it is still there. */
function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // gone meanwhile
  }
}

/** Whether process `pid` runs (a zombie no longer does). */
function running(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The agent session of whatever agent answers DOCTOR in `dir` now, by a run of `reclazz-build doctor`. */
async function doctorSession(dir: string): Promise<string> {
  const run = await runCli(['doctor', '--json'], { cwd: dir });
  expect(run.exitCode, run.stderr).toBe(0);
  return (jsonResult(run).doctor as { sessionId: string }).sessionId;
}

/**
 * A restart script that stops the app (`pid`), runs `first` (script lines), starts it again in the
 * background (with `args`), and once its new JVM listens, runs `then` (a script line). Only then does
 * the app's port file name the new agent (written to a file of its own, moved into place), so the run
 * never sees the new agent session before `then` ran. Each restart adds a line to `restarts.log`.
 */
function restartThenRun(p: Pick<Project, 'dir'>, pid: number, then: string, args: string[], first: string[] = []): string {
  return restartScript(p.dir, [
    'echo restart >> restarts.log',
    stopOld(pid),
    ...first,
    `nohup ${appStart(['--port-file', '.reclazz/next.port', ...args])} &`,
    'echo $! > app.pid',
    'while [ ! -s .reclazz/next.port ]; do sleep 0.02; done',
    then,
    'mv .reclazz/next.port .reclazz/agent.port',
  ]);
}

/** {@link restartThenRun} touching `file`: a class file younger than the new JVM. */
function restartThenTouch(p: Pick<Project, 'dir'>, pid: number, file: string, args: string[]): string {
  return restartThenRun(p, pid, `touch '${file}'`, args);
}

/** How many times a restart script of {@link restartThenTouch} ran in `dir`. */
const restarts = (dir: string) =>
  fs.existsSync(path.join(dir, 'restarts.log')) ? fs.readFileSync(path.join(dir, 'restarts.log'), 'utf8').split('\n').length - 1 : 0;

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

  it('an app run with java -jar target/app.jar holding the class: said once, and the end names the jar, not a rebuild: 75', async () => {
    const p = project();
    writeJar(path.join(p.dir, 'target', 'app.jar'), { 'com/acme/Shape.class': 'shape-v1', 'com/acme/Greeter.class': 'greeter-v1' });
    const agent = await agentFor(p, ['--jar', 'target/app.jar']);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', `kill -HUP ${agent.pid}`, ...build(p)], { cwd: p.dir });
    const jar = fs.realpathSync(path.join(p.dir, 'target', 'app.jar'));
    expect(run.stderr.split(`loads this project's classes from the jar ${jar}`)).toHaveLength(2);
    expect(run.stderr).toContain(`from ${jar}, not from ${fs.realpathSync(p.classes)}, so no rebuild or restart shows the change`);
    expect(run.stderr).toMatch(/next: the new JVM loads com\.acme\.\w+ from /);
    expect(run.stderr).not.toContain('rebuild with reclazz-build, or restart the app once more');
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
    const restart = restartThenRun(p, agent.pid, back, ['--watch', 'target/classes'], [swap]);
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
    const restart = restartThenRun(p, agent.pid, flip('one'), ['--watch', 'target/classes'], [flip('two')]);
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
    const restart = restartThenRun(p, agent.pid, 'echo started > app.log', ['--watch', 'target/classes']);
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
    const restart = restartThenTouch(p, agent.pid, shape, ['--watch', 'target/classes']);
    const run = await runCli(['--verify-timeout', '1000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(/1 class file\(s\) are still not proven live in the new JVM/);
    expect(run.exitCode).toBe(75);
  });

  it('a new class written after the new JVM started is not proven by the old JVM having not loaded it: 75', async () => {
    const p = project();
    const agent = await agentFor(p);
    const fresh = path.join(p.classes, 'com', 'acme', 'Fresh.class');
    const withFresh = [...build(p).slice(0, -1), `${build(p).at(-1)!};fs.writeFileSync(${JSON.stringify(fresh)}, 'fresh-v1');`];
    const restart = restartThenTouch(p, agent.pid, fresh, ['--watch', 'target/classes']);
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

describe('a restart command that starts the app itself', () => {
  const log = (p: Project) => path.join(p.dir, '.reclazz', 'restart.log');

  it('a script that starts the app in the background (nohup … &): 0, proven in the new JVM, and the app answers DOCTOR after the run', async () => {
    const p = project();
    const old = await agentFor(p);
    const restart = restartScript(p.dir, [stopOld(old.pid), `nohup ${appStart(['--watch', 'target/classes'])} &`, 'echo $! > app.pid']);
    const run = await runCli(['--json', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    const result = jsonResult(run);
    expect(result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, restarted: true });
    expect(run.stderr).toContain(`restarting the app with: sh restart.sh (detached; its output in ${log(p)})`);
    expect(events(run.stdout).find((l) => l.type === 'restart')).toMatchObject({ exitCode: 0, appBack: false });
    // The script ended: nothing of it runs on but the app, which it left to the log.
    expect(events(run.stdout).some((l) => l.type === 'restart-running')).toBe(false);
    const app = appPid(p.dir)!;
    expect(running(app)).toBe(true);
    expect(await doctorSession(p.dir)).toBe(result.restartSessionId);
    await waitFor(() => fs.readFileSync(log(p), 'utf8').includes('fake agent listening'), "the app's output in the restart log");
    expect(run.exitCode).toBe(0);
  });

  it('a script that runs the app in the foreground: 0, proven in the new JVM, the command left running as the app, which answers DOCTOR after the run', async () => {
    const p = project();
    const old = await agentFor(p);
    const restart = restartScript(p.dir, [
      stopOld(old.pid),
      'echo starting the app',
      'echo $$ > app.pid',
      `exec ${appStart(['--watch', 'target/classes'])}`,
    ]);
    const run = await runCli(['--json', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    const result = jsonResult(run);
    expect(result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, restarted: true });
    const app = appPid(p.dir)!;
    // Its output shown as it came, and where the rest goes.
    expect(run.stderr).toContain('starting the app');
    // The command (its shell) runs on with the app.
    const left = events(run.stdout).find((l) => l.type === 'restart-running') as { pid: number; log: string };
    expect(left).toMatchObject({ log: log(p) });
    expect(run.stderr).toContain(
      `restart command still running (pid ${left.pid}): left running, as it may be the app; its output goes on into ${log(p)}`,
    );
    expect(events(run.stdout).some((l) => l.type === 'restart')).toBe(false);
    expect(running(left.pid)).toBe(true);
    expect(running(app)).toBe(true);
    expect(await doctorSession(p.dir)).toBe(result.restartSessionId);
    expect(run.exitCode).toBe(0);
  });

  it('Ctrl-C while the app restarts ends the wait (130), not the app the command started', async () => {
    const p = project();
    await agentFor(p);
    // An app still starting: its agent wires itself never.
    const slow = appStart(['--watch', 'target/classes', '--port-file', '.reclazz/slow.port', '--starting-ms', 'forever']);
    const restart = restartScript(p.dir, ['echo $$ > app.pid', `exec ${slow}`]);
    const cli = startCli(['--restart-command', restart, ...build(p)], { cwd: p.dir });
    const err = new Lines(cli.stderr!);
    await err.line(/fake agent listening/);
    process.kill(cli.pid!, 'SIGINT');
    const run = await cli;
    const app = appPid(p.dir)!;
    expect(String(run.stderr)).toContain('interrupted (SIGINT) while the app restarted');
    const left = /restart command still running \(pid (\d+)\): left running/.exec(String(run.stderr));
    expect(left, String(run.stderr)).not.toBeNull();
    expect(run.exitCode).toBe(130);
    expect(running(Number(left![1]))).toBe(true);
    expect(running(app)).toBe(true);
  });

  it('a command that exits non-zero after the app came back is told, and the proof stands on its own evidence', async () => {
    const p = project();
    const old = await agentFor(p);
    const shape = path.join(p.classes, 'com', 'acme', 'Shape.class');
    // Once the run asks the new app to VERIFY (it proves the change), the script fails.
    const restart = restartThenTouch(p, old.pid, shape, ['--watch', 'target/classes', '--log']);
    fs.appendFileSync(path.join(p.dir, 'restart.sh'), "while ! grep -q '] VERIFY ' .reclazz/restart.log; do sleep 0.02; done\nexit 3\n");
    const run = await runCli(['--json', '--verify-timeout', '3000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(events(run.stdout).find((l) => l.type === 'restart')).toMatchObject({ exitCode: 3, appBack: true });
    expect(run.stderr).toMatch(
      /restart command ended with exit status 3 in .*, after the app came back: what is proven in the new JVM rests on its own evidence/,
    );
    expect(run.stderr).not.toContain('the restart command failed');
    expect(run.stderr).toMatch(/1 class file\(s\) are still not proven live in the new JVM/);
    expect(run.exitCode).toBe(75);
  });

  it("a new app whose port file the old one deletes as it stops: the run says so, asks the new app's port, and proves the change (0)", async () => {
    const p = project();
    const old = await agentFor(p);
    // The new app starts first, and is not ready until the old one has stopped.
    const restart = restartScript(p.dir, [
      'before=$(cat .reclazz/agent.port)',
      `nohup ${appStart(['--watch', 'target/classes', '--log', '--starting-ms', '4000'])} &`,
      'echo $! > app.pid',
      'while now=$(cat .reclazz/agent.port 2>/dev/null); [ -z "$now" ] || [ "$now" = "$before" ]; do sleep 0.02; done',
      "while ! grep -q '] DOCTOR ' .reclazz/restart.log; do sleep 0.02; done",
      stopOld(old.pid),
    ]);
    const run = await runCli(['--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(
      new RegExp(`the port file ${p.portFile} named port \\d+ of a new JVM, and is gone: asking port \\d+ directly`),
    );
    expect(run.stderr).toContain('stop the old app before starting the new one, or give each JVM a portFile= of its own');
    expect(run.stderr).toContain('proven live after a restart');
    expect(fs.existsSync(p.portFile)).toBe(false);
    expect(run.exitCode).toBe(0);
  });

  it('a script that starts a new app without stopping the old one (no app.pid yet): 75, the old JVM named, never a ✔ from the new one beside it', async () => {
    const p = project();
    await agentFor(p);
    const doctor = await runCli(['doctor', '--json'], { cwd: p.dir });
    const oldPid = (jsonResult(doctor).doctor as { pid: string }).pid;
    // Its stop step finds no app.pid, so the old app runs on; the new one writes the port file.
    const restart = restartScript(p.dir, [
      '[ -f app.pid ] && kill $(cat app.pid)',
      `nohup ${appStart(['--watch', 'target/classes'])} &`,
      'echo $! > app.pid',
    ]);
    const run = await runCli(['--restart-timeout', '3000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(running(appPid(p.dir)!)).toBe(true);
    expect(run.stderr).toContain(`a new one answers, but the old app's JVM, pid ${oldPid}, still runs: waiting for it to stop`);
    expect(run.stderr).toMatch(
      new RegExp(`its old JVM \\(pid ${oldPid}, agent session [0-9a-f-]+\\) still runs the code from before the change`),
    );
    expect(run.stderr).toContain('stop the old app first');
    expect(run.stderr).not.toContain('✔');
    expect(run.exitCode).toBe(75);
  });

  it('a script that stops the old app and starts the new one at once, the old JVM taking 3 s to end: waits for it, then proves the change (0)', async () => {
    const { p, oldPid, restart } = await slowToStop();
    const run = await runCli(['--json', '--restart-timeout', '20000', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    const result = jsonResult(run);
    // It said what it waited for while the old JVM ended, and the change is proven only once it had.
    expect(run.stderr).toContain(`a new one answers, but the old app's JVM, pid ${oldPid}, still runs: waiting for it to stop`);
    expect(running(Number(oldPid))).toBe(false);
    expect(result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, restarted: true });
    expect(await doctorSession(p.dir)).toBe(result.restartSessionId);
    expect(run.exitCode).toBe(0);
  });

  it('a restart timeout shorter than the old JVM takes to end: 75, saying the old app was still stopping and to raise --restart-timeout, not to stop it first', async () => {
    const { p, oldPid, restart } = await slowToStop();
    // 1.5 s: long enough for the script's kill to land even on a loaded machine, short of the old JVM's 3 s to end.
    const run = await runCli(['--restart-timeout', '1500', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toMatch(
      new RegExp(
        `did not come back with a new agent session within 1.5 s: its old JVM \\(pid ${oldPid}, agent session [0-9a-f-]+\\) was still stopping`,
      ),
    );
    expect(run.stderr).toContain('raise --restart-timeout <ms> (in milliseconds)');
    expect(run.stderr).not.toContain('stop the old app first');
    expect(run.stderr).not.toContain('✔');
    expect(run.exitCode).toBe(75);
  });

  it('a port file deleted as the old app stopped, and no app back: 75, saying so and what to fix, not only that it waited', async () => {
    const p = project();
    const old = await agentFor(p);
    const restart = restartScript(p.dir, [stopOld(old.pid)]);
    const run = await runCli(['--restart-timeout', '1500', '--restart-command', restart, ...build(p)], { cwd: p.dir });
    expect(run.stderr).toContain(`(its port file ${p.portFile} is gone: the old app stopped, and no new one has written it yet)`);
    expect(run.stderr).toContain('did not come back with a new agent session within 1.5 s');
    expect(run.stderr).toContain(`its port file ${p.portFile} was deleted during the wait and no agent wrote it again`);
    expect(run.stderr).toContain('stop the old app before starting the new one, or give each JVM a portFile= of its own');
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
    // The app restarted by design: no news says its agent was lost, and each cycle's new app session is told after it.
    const told = () => w.json.filter((j) => j.type === 'news' || j.type === 'cycle').map((j) => (j.type === 'cycle' ? 'cycle' : j.news));
    await waitFor(
      () => told().filter((t) => t === 'new-app-session').length === 2,
      () => `the second new app session: ${told().join(' ')}`,
    );
    expect(told()).toEqual(['watching', 'cycle', 'new-app-session', 'cycle', 'new-app-session']);
    const back = w.json.filter((j) => j.type === 'news' && j.news === 'new-app-session').map((j) => String(j.line));
    for (const line of back)
      expect(line).toContain("the app restarted for the last build's change (its line above says what was proven there)");
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
  });

  it('a restart script that runs the app in the foreground: the cycle proves the change, and the app outlives the cycle and the watch', async () => {
    const p = watchProject();
    const old = await agentFor(p, [], 'com.acme.Greeter');
    const restart = restartScript(p.dir, [stopOld(old.pid), 'echo $$ > app.pid', `exec ${appStart(['--watch', 'target/classes'])}`]);
    const w = startWatch(p, ['--restart-command', restart]);
    watches.push(w);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    const [cycle] = await w.cyclesEnded(1);
    expect(cycle!.result).toMatchObject({ exitCode: 0, provenLive: true });
    const app = appPid(p.dir)!;
    const left = w.json.find((j) => j.type === 'restart-running') as { pid: number };
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
    expect(running(left.pid)).toBe(true);
    expect(running(app)).toBe(true);
    expect(await doctorSession(p.dir)).toBe((cycle!.result as { restartSessionId?: string }).restartSessionId);
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
    const w = startWatch(p, [
      '--verify-timeout',
      '1000',
      '--restart-command',
      restartThenTouch(p, agent.pid, greeter, ['--watch', 'target/classes', '--restart-required', 'com.acme.Greeter']),
    ]);
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
    expect(restarts(p.dir)).toBe(1);
    expect((await w.stop('SIGINT')).exitCode).toBe(130);
  });
});
