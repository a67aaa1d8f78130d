/**
 * The build's processes on the real binary: a build is over when its whole process group has
 * exited (late writes are detected, a lingering process is stopped after 5 s and named), a
 * daemon that detached into a session of its own is left alone, and a build that outlived a
 * killed run keeps the next run from saying ✔ while it may still write.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex, type FakeAgent } from '../../src/fake-agent/index.js';
import { cliCommand, cliEnv, jsonResult, runCli, runInTerminal, startCli } from '../support/cli.js';
import { agentFor, hasStackTrace, processGone, project, release, type Project } from '../support/project.js';
import { Lines, waitFor } from '../support/wait.js';

const agents: FakeAgent[] = [];
/** Processes (or, negative, process groups) a test leaves running on purpose: killed after it. */
const strays: number[] = [];
afterEach(async () => {
  for (const id of strays.splice(0)) {
    try {
      process.kill(id, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** How long a lingering process would run by itself, in s: far longer than the 5 s it is given. */
const SLEEPER_S = 60;

/** A run that stopped it is over well before it would have ended (a bound with room for a loaded machine). */
const STOPPED_BY_MS = 30_000;

/** Shell: wait until the file `go` exists in the working folder (the test lets the build go on). */
const UNTIL_GO = 'while [ ! -e go ]; do sleep 0.05; done';

/** A project with its agent, and `new.class` beside it: new bytes for com.acme.Greeter. */
async function setUp(): Promise<{ p: Project; agent: FakeAgent; greeter: string }> {
  const p = project();
  const agent = await agentFor(p, agents, { portFile: p.portFile });
  fs.writeFileSync(path.join(p.dir, 'new.class'), 'greeter-v2');
  return { p, agent, greeter: path.join('target', 'classes', 'com', 'acme', 'Greeter.class') };
}

/**
 * SIGKILL to the CLI alone, and wait until it is gone (not for its output to end: the build it
 * started still holds the same pipes).
 */
async function killHard(cli: ReturnType<typeof startCli>): Promise<void> {
  const pid = cli.pid!;
  cli.kill('SIGKILL');
  void cli.catch(() => undefined);
  await waitFor(() => processGone(pid), 'the killed CLI to be gone');
}

function readPid(file: string): number {
  return Number(fs.readFileSync(file, 'utf8').trim());
}

describe('a build is over when its process group has exited', () => {
  it('detects and verifies a class file written by a background process after the command exited', async () => {
    const { p, greeter } = await setUp();
    const run = await runCli(['--', 'sh', '-c', `(sleep 1; cp new.class ${greeter}) & exit 0`], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/class files: 1 changed/);
    expect(run.stderr).toMatch(/applied +com\.acme\.Greeter/);
    expect(run.stderr).toMatch(/✔ proven live: all 1 changed class\(es\) proven live/);
    expect(run.stderr).not.toMatch(/still ran/);
  });

  it('stops a process still running 5 s after the command exited, names it, and lets the pipeline end', async () => {
    const { p } = await setUp();
    const pidFile = path.join(p.dir, 'sleeper.pid');
    const started = Date.now();
    // The sleeper inherits the run's stdout: `| cat` ends only when it is gone.
    const run = await execa(
      'sh',
      ['-c', `${cliCommand(['--', 'sh', '-c', `sleep ${SLEEPER_S} & echo $! > ${pidFile}; echo done`])} | cat`],
      {
        cwd: p.dir,
        env: cliEnv(),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        timeout: 2 * SLEEPER_S * 1000,
      },
    );
    const elapsed = Date.now() - started;
    const sleeper = readPid(pidFile);
    strays.push(sleeper);
    expect(run.exitCode, String(run.stderr)).toBe(0);
    // The 5 s after the command exited, and then the stop: long before the sleeper would have ended.
    expect(elapsed).toBeGreaterThanOrEqual(5000);
    expect(elapsed).toBeLessThan(STOPPED_BY_MS);
    expect(String(run.stdout)).toBe('done');
    expect(String(run.stderr)).toMatch(
      new RegExp(
        `warning: 1 process\\(es\\) of the build still ran 5 s after its command exited, so they were stopped \\(SIGTERM, then SIGKILL\\): ${sleeper} sleep ${SLEEPER_S}`,
      ),
    );
    expect(processGone(sleeper)).toBe(true);
    expect(hasStackTrace(String(run.stderr))).toBe(false);
  });

  it('in a terminal (the build shares our process group): a lingering process is stopped and named too', async () => {
    const { p } = await setUp();
    const pidFile = path.join(p.dir, 'sleeper.pid');
    const started = Date.now();
    const run = await runInTerminal(cliCommand(['--', 'sh', '-c', `sleep ${SLEEPER_S} & echo $! > ${pidFile}; echo done`]), {
      cwd: p.dir,
      env: { CI: 'true', NO_COLOR: '1' },
      timeoutMs: 2 * SLEEPER_S * 1000,
    });
    const sleeper = readPid(pidFile);
    strays.push(sleeper);
    expect(run.exitCode, run.output).toBe(0);
    expect(Date.now() - started).toBeLessThan(STOPPED_BY_MS);
    expect(run.output).toMatch(
      new RegExp(`still ran 5 s after its command exited, so they were stopped \\(SIGTERM, then SIGKILL\\): ${sleeper} sleep ${SLEEPER_S}`),
    );
    expect(processGone(sleeper)).toBe(true);
  });

  it('in a terminal: a background job with a process group of its own (set -m) is waited for, and its late write is verified', async () => {
    const p = project();
    const failing = sha256Hex(Buffer.from('greeter-v2'));
    const agent = await agentFor(p, agents, {
      portFile: p.portFile,
      verifyStatus: (_name, sha) => (sha === failing ? 'failed' : undefined),
    });
    fs.writeFileSync(path.join(p.dir, 'new.class'), 'greeter-v2');
    const greeter = path.join('target', 'classes', 'com', 'acme', 'Greeter.class');
    // The job writes a second after its shell exited: a run that did not wait for it has said its
    // verdict by then (the window is what is tested; nothing the job could await would let both
    // a run that waits and one that does not go on).
    const run = await runInTerminal(cliCommand(['--', 'sh', '-c', `set -m; (sleep 1; cp new.class ${greeter}) & exit 0`]), {
      cwd: p.dir,
      env: { CI: 'true', NO_COLOR: '1' },
    });
    // The job wrote after its shell exited: the run waited for it, found the change and its failed reload.
    expect(run.exitCode, run.output).toBe(75);
    expect(run.output).toMatch(/class files: 1 changed/);
    expect(run.output).toMatch(/failed +com\.acme\.Greeter/);
    expect(run.output).not.toMatch(/✔/);
    expect(agent.received.some((r) => r.line.startsWith('VERIFY ') && r.line.endsWith(` com.acme.Greeter ${failing}`))).toBe(true);
  });

  it("in a terminal: a job of the terminal's shell that starts during the build is not the build's, neither waited for nor stopped", async () => {
    const { p } = await setUp();
    const sleeper = path.join(p.dir, 'sleeper.pid');
    // The shell's own job waits for the build to start, then starts a sleep of its own; the
    // build ends once that sleep has started. Waited for, the sleep would be stopped after 5 s.
    const job = `(while [ ! -f started ]; do sleep 0.05; done; sleep 8 & echo $! > ${sleeper}; wait) &`;
    const cli = cliCommand(['--', 'sh', '-c', `touch started; while [ ! -s ${sleeper} ]; do sleep 0.02; done`]);
    const run = await runInTerminal(`${job} ${cli}; echo "exit=$?"; kill -0 "$(cat ${sleeper})" && echo sleeper-alive`, {
      cwd: p.dir,
      env: { CI: 'true', NO_COLOR: '1' },
    });
    strays.push(readPid(sleeper));
    expect(run.output).toMatch(/exit=0/);
    expect(run.output).toMatch(/sleeper-alive/);
    expect(run.output).not.toMatch(/still ran/);
  });

  // Like the Gradle daemon, it also lets go of the run's stdio (else the test's pipes would wait for it).
  it('leaves alone a daemon that detached into a session of its own (setsid), and does not wait for it, but proves nothing while it runs', async () => {
    const { p } = await setUp();
    const pidFile = path.join(p.dir, 'daemon.pid');
    const run = await runCli(['--json', '--', 'sh', '-c', `setsid sleep 30 < /dev/null > /dev/null 2>&1 & echo $! > ${pidFile}; exit 0`], {
      cwd: p.dir,
    });
    const daemon = readPid(pidFile);
    strays.push(daemon);
    const result = jsonResult(run) as ReturnType<typeof jsonResult> & { message: string; hint: string; provenLive: boolean };
    expect(run.stderr).not.toMatch(/still ran/);
    // Not the 5 s a build's lingering process gets (the run's own time, start-up aside).
    expect(result.durationMs).toBeLessThan(5000);
    expect(processGone(daemon)).toBe(false);
    // It may write class files whenever it likes: no ✔ while it runs, and it is named.
    expect(run.exitCode, run.stderr).toBe(75);
    expect(result.provenLive).toBe(false);
    expect(result.message).toMatch(
      new RegExp(`1 process\\(es\\) the build started still run after it, in a session of their own: ${daemon} sleep 30`),
    );
    expect(result.message).toMatch(/they may still write class files after this check/);
    expect(result.hint).toMatch(new RegExp(`stop them \\(kill ${daemon}\\)`));
  });

  it('a daemon (setsid) that writes a class file a moment after the build exited is waited for a moment, and its write is proven', async () => {
    const { p, agent, greeter } = await setUp();
    const script = `setsid sh -c 'sleep 0.2; cp new.class ${greeter}' < /dev/null > /dev/null 2>&1 & exit 0`;
    const run = await runCli(['--', 'sh', '-c', script], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/class files: 1 changed/);
    expect(run.stderr).toMatch(/✔ proven live: all 1 changed class\(es\) proven live/);
    expect(agent.received.some((r) => r.line.startsWith('VERIFY ') && r.line.includes(' com.acme.Greeter '))).toBe(true);
  });

  it('a daemon (setsid) still running after the build, writing later, never gets a ✔: the run says it may still write', async () => {
    const { p, greeter } = await setUp();
    const pidFile = path.join(p.dir, 'daemon.pid');
    // It writes once let go (after the run's checks), as a daemon writes ~0.1-0.3 s after the build on a slow machine.
    const script = `setsid sh -c '${UNTIL_GO}; cp new.class ${greeter}' < /dev/null > /dev/null 2>&1 & echo $! > ${pidFile}; exit 0`;
    const run = await runCli(['--', 'sh', '-c', script], { cwd: p.dir });
    const daemon = readPid(pidFile);
    strays.push(daemon);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).not.toMatch(/✔/);
    expect(run.stderr).toMatch(new RegExp(`still run after it, in a session of their own: ${daemon} sh -c while`));
    release(path.join(p.dir, 'go'));
    await waitFor(() => fs.readFileSync(path.join(p.dir, greeter), 'utf8') === 'greeter-v2', 'the daemon to write');
  });

  it("a daemon started with a cleared environment (env -i setsid) still running after the build never gets a ✔ either: it keeps the build's mark", async () => {
    const { p, greeter } = await setUp();
    const pidFile = path.join(p.dir, 'daemon.pid');
    // Without the build's environment, so without its token: the limit the build's processes inherit still marks it.
    const script = `env -i PATH=/usr/bin:/bin setsid sh -c '${UNTIL_GO}; cp new.class ${greeter}' < /dev/null > /dev/null 2>&1 & echo $! > ${pidFile}; exit 0`;
    const run = await runCli(['--', 'sh', '-c', script], { cwd: p.dir });
    const daemon = readPid(pidFile);
    strays.push(daemon);
    expect(run.stderr).not.toMatch(/✔/);
    expect(run.stderr).toMatch(new RegExp(`still run after it, in a session of their own: ${daemon} sh -c while`));
    expect(run.exitCode, run.stderr).toBe(75);
    release(path.join(p.dir, 'go'));
    await waitFor(() => fs.readFileSync(path.join(p.dir, greeter), 'utf8') === 'greeter-v2', 'the daemon to write');
  });

  it('a build daemon that serves requests (its main class: the Gradle daemon) started by the build and left running does not stop the ✔', async () => {
    const { p, greeter } = await setUp();
    const pidFile = path.join(p.dir, 'daemon.pid');
    // A stand-in with the Gradle daemon's main class among its arguments: its writes for a build end before its client exits.
    const daemon = `setsid '${process.execPath}' -e 'setTimeout(() => undefined, 30000)' org.gradle.launcher.daemon.bootstrap.GradleDaemon 8.5`;
    const script = `${daemon} < /dev/null > /dev/null 2>&1 & echo $! > ${pidFile}; cp new.class ${greeter}`;
    const run = await runCli(['--', 'sh', '-c', script], { cwd: p.dir });
    strays.push(readPid(pidFile));
    expect(processGone(readPid(pidFile))).toBe(false);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/✔ proven live: all 1 changed class\(es\) proven live/);
  });

  it("a daemon (setsid) that keeps the build's output pipes open holds neither the run nor the hold; a failed build's last lines are still kept", async () => {
    const { p, agent } = await setUp();
    const pidFile = path.join(p.dir, 'daemon.pid');
    const script = `setsid sleep ${SLEEPER_S} & echo $! > ${pidFile}; echo started; echo broken >&2; exit 3`;
    const run = await runCli(['--json', '--', 'sh', '-c', script], { cwd: p.dir });
    const daemon = readPid(pidFile);
    strays.push(daemon);
    const result = jsonResult(run) as ReturnType<typeof jsonResult> & { build: { exitCode: number; output: string[] } };
    expect(result.build).toMatchObject({ exitCode: 3, output: ['started', 'broken'] });
    // The build's exit ends it, not the end of pipes the daemon holds for its 60 s.
    expect(result.durationMs).toBeLessThan(5000);
    expect(processGone(daemon)).toBe(false);
    // It wrote nothing: the hold was released (BUILD ok captures nothing) without waiting for the daemon.
    expect(agent.received.filter((r) => /^BUILD (started|ok|failed) /i.test(r.line)).map((r) => r.line.split(' ')[1])).toEqual([
      'started',
      'ok',
    ]);
    expect(agent.hold().kind).toBe('none');
    expect(run.exitCode, run.stderr).toBe(3);
  });
});

describe('a build that outlived a killed run', () => {
  it('keeps the next run from building, and from saying ✔, while it may still write; it waits within --wait, then refuses 69 naming it', async () => {
    const { p, greeter } = await setUp();
    const first = startCli(['--', 'sh', '-c', `${UNTIL_GO}; cp new.class ${greeter}; sleep 1`], { cwd: p.dir });
    const holder = path.join(p.dir, '.reclazz', 'build.lock.holder');
    await waitFor(() => fs.existsSync(holder) && fs.readFileSync(holder, 'utf8').includes('"build"'), 'the build recorded with the lock');
    const pgid = (JSON.parse(fs.readFileSync(holder, 'utf8')) as { build: { pgid: number } }).build.pgid;
    strays.push(-pgid);
    await killHard(first);

    const second = await runCli(['--wait', '1500', '--', 'sh', '-c', `touch ${path.join(p.dir, 'second-ran')}`], { cwd: p.dir });
    expect(second.exitCode, second.stderr).toBe(69);
    expect(second.stderr).not.toMatch(/✔/);
    expect(fs.existsSync(path.join(p.dir, 'second-ran'))).toBe(false);
    expect(second.stderr).toMatch(
      new RegExp(`waiting for the build of an earlier run that is gone to end \\(process group ${pgid}: sh -c 'while`),
    );
    expect(second.stderr).toMatch(
      new RegExp(`the build of an earlier run that is gone \\(killed\\?\\) still runs after \\d+ ms: process group ${pgid}, sh -c 'while`),
    );
    // Never signalled: the orphan is still there, and goes on to write once let go.
    expect(processGone(pgid)).toBe(false);
    release(path.join(p.dir, 'go'));
    await waitFor(() => fs.readFileSync(path.join(p.dir, greeter), 'utf8') === 'greeter-v2', 'the orphan to write');
    expect(hasStackTrace(second.stderr)).toBe(false);
  });

  it('goes on once that build has ended within --wait', async () => {
    const { p } = await setUp();
    const first = startCli(['--', 'sh', '-c', UNTIL_GO], { cwd: p.dir });
    const holder = path.join(p.dir, '.reclazz', 'build.lock.holder');
    await waitFor(() => fs.existsSync(holder) && fs.readFileSync(holder, 'utf8').includes('"build"'), 'the build recorded with the lock');
    const pgid = (JSON.parse(fs.readFileSync(holder, 'utf8')) as { build: { pgid: number } }).build.pgid;
    strays.push(-pgid);
    await killHard(first);
    const second = startCli(['--wait', '30000', '--', 'true'], { cwd: p.dir });
    // It waits; the orphan ends only once that was said.
    await new Lines(second.stderr!).line(/waiting for the build of an earlier run that is gone to end/);
    release(path.join(p.dir, 'go'));
    const ended = await second;
    expect(ended.exitCode, String(ended.stderr)).toBe(0);
  });
});
