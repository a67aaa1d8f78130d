/**
 * The README's Quick start as a user copies it: its restart script, run as written, starts the
 * "app" (the fake agent) in the foreground, and run again stops that one, waits until it is gone
 * (its agent deletes the port file on the way out) and starts a new one, whose port file stays;
 * handed to `reclazz-build --restart-command`, it restarts the app for a new superclass, the change
 * is proven in the new JVM, and the app it started outlives the run.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { afterThisTest } from '../support/cleanup.js';
import { cliEnv, runCli, tempDir, writeClass } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { classBytes } from '../fake-agent/fixture.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The Quick start's `restart-app.sh`: the body of its `cat > restart-app.sh <<'EOF'` block. */
function restartScript(): string {
  const quickStart = README.slice(README.indexOf('\n## Quick start\n'), README.indexOf('\n## Connect your app\n'));
  const body = /^cat > restart-app\.sh <<'EOF'\n([\s\S]*?)^EOF$/m.exec(quickStart)?.[1];
  expect(body, "the Quick start's restart script").toBeDefined();
  return body!;
}

/** A project with compiled classes, the script in it, and `reclazz-fake-agent` on PATH as after the install. */
function project(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir();
  writeClass(path.join(dir, 'target', 'classes'), 'com.acme.App', classBytes('com.acme.App', 'java.lang.Object'));
  fs.writeFileSync(path.join(dir, 'restart-app.sh'), restartScript(), { mode: 0o755 });
  const bin = path.join(tempDir(), 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(path.join(ROOT, 'bin', 'reclazz-fake-agent.js'), path.join(bin, 'reclazz-fake-agent'));
  return { dir, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` } };
}

/** Runs `./restart-app.sh` in `dir`, as a terminal or a restart would; stopped after the test if still running. */
function runScript(dir: string, env: NodeJS.ProcessEnv) {
  const child = spawn(path.join(dir, 'restart-app.sh'), [], { cwd: dir, env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  afterThisTest(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, exited };
}

/** The agent session and pid `reclazz-build doctor --json` reports in `dir`. */
async function doctorOf(dir: string): Promise<{ sessionId: string; port: number }> {
  const run = await runCli(['doctor', '--json'], { cwd: dir, env: cliEnv() });
  expect(run.exitCode, run.stderr).toBe(0);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { doctor: { sessionId: string }; endpoint: { port: number } };
  return { sessionId: result.doctor.sessionId, port: result.endpoint.port };
}

describe("the Quick start's restart script", () => {
  it('starts the app, and run again stops it, waits until it is gone and starts a new one that keeps its port file', async () => {
    const { dir, env } = project();
    const portFile = path.join(dir, '.reclazz', 'agent.port');
    const first = runScript(dir, env);
    await waitFor(() => fs.existsSync(portFile), 'the first port file', { timeoutMs: 20_000 });
    const before = await doctorOf(dir);
    // exec: the pid file names the running agent itself.
    expect(Number(fs.readFileSync(path.join(dir, '.reclazz', 'app.pid'), 'utf8'))).toBe(first.child.pid);

    const second = runScript(dir, env);
    await first.exited;
    await waitFor(() => fs.existsSync(portFile) && Number(fs.readFileSync(portFile, 'utf8')) !== before.port, 'the new port file', {
      timeoutMs: 20_000,
    });
    const after = await doctorOf(dir);
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(Number(fs.readFileSync(path.join(dir, '.reclazz', 'app.pid'), 'utf8'))).toBe(second.child.pid);
    // The old agent had deleted its port file (on its way out) before the new one wrote its own.
    expect(Number(fs.readFileSync(portFile, 'utf8'))).toBe(after.port);

    // As the Quick start says: kill "$(cat .reclazz/app.pid)" stops it, and its port file goes with it.
    process.kill(Number(fs.readFileSync(path.join(dir, '.reclazz', 'app.pid'), 'utf8')), 'SIGTERM');
    await second.exited;
    expect(fs.existsSync(portFile)).toBe(false);
  }, 60_000);
});

describe("the Quick start's restart, as written", () => {
  it('reclazz-build --restart-command ./restart-app.sh: a new superclass restarts the app, the change is proven in the new JVM (0), and the app outlives the run', async () => {
    const { dir, env } = project();
    const portFile = path.join(dir, '.reclazz', 'agent.port');
    const first = runScript(dir, env);
    await waitFor(() => fs.existsSync(portFile), 'the first port file', { timeoutMs: 20_000 });
    const before = await doctorOf(dir);
    // The build gives com.acme.App a new superclass, which the JVM cannot redefine.
    const file = path.join(dir, 'target', 'classes', 'com', 'acme', 'App.class');
    const write = `require('fs').writeFileSync(${JSON.stringify(file)}, Buffer.from(${JSON.stringify(classBytes('com.acme.App', 'com.acme.Base').toString('base64'))}, 'base64'))`;
    const run = await runCli(['--json', '--restart-command', './restart-app.sh', '--', process.execPath, '-e', write], {
      cwd: dir,
      env: { ...cliEnv(), PATH: env.PATH },
    });
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(result, run.stderr).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, restarted: true });
    await first.exited;
    // The app the script started runs on after the run, and answers in the session that proved the change.
    const pid = Number(fs.readFileSync(path.join(dir, '.reclazz', 'app.pid'), 'utf8'));
    afterThisTest(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    });
    const after = await doctorOf(dir);
    expect(after.sessionId).not.toBe(before.sessionId);
    expect(after.sessionId).toBe(result.restartSessionId);
    expect(run.exitCode).toBe(0);
  }, 60_000);
});
