import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFakeAgentCli } from '../../src/fake-agent/cli-run.js';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { doctor, finalVerify, isRunning, onCleanup, sha, tempDir, writeClass } from './fixture.js';
import { LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

const root = resolve(import.meta.dirname, '../..');

/** Run the CLI in-process; returns the agent and what it printed. */
async function run(args: string[]): Promise<{ agent: FakeAgent; out: string }> {
  let out = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk);
      done();
    },
  });
  const agent = await runFakeAgentCli(args, sink);
  onCleanup(() => agent.stop());
  return { agent, out };
}

async function connected(agent: FakeAgent): Promise<LineClient> {
  const client = await LineClient.ready(agent.port);
  onCleanup(() => client.close());
  return client;
}

describe('runFakeAgentCli', () => {
  it('prints the ready line and writes the port file', async () => {
    const portFile = join(tempDir(), 'p', 'agent.port');
    const { agent, out } = await run(['--port-file', portFile]);
    expect(out).toBe(`fake agent listening on 127.0.0.1:${agent.port} (port file ${portFile})\n`);
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
  });

  it('passes timings, watch dirs and --verify-status through', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const { agent } = await run([
      '--port-file', join(dir, 'port'), '--watch', dir, '--capture-delay-ms', '5', '--reload-ms', '5',
      '--heartbeat-ms', '30', '--verify-status', 'failed',
    ]);
    const client = await connected(agent);
    await client.next((e) => e.level === 'HEARTBEAT');
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    client.send('SCAN');
    await client.next((e) => e.level === 'ERROR');
    expect((await client.verify('v', 'a.A', v2)).status).toBe('failed');
  });

  it('--reject-started answers BUILD_REJECTED and takes no hold', async () => {
    const { agent } = await run(['--port-file', join(tempDir(), 'port'), '--reject-started']);
    const client = await connected(agent);
    expect(await client.ask('BUILD started request=r1 owner=o', 'BUILD_REJECTED', 'r1')).toBe(
      'BUILD_REJECTED r1 started owner=o',
    );
    expect(agent.hold().kind).toBe('none');
  });

  it('--silent drops the replies of a verb (repeatable, case-insensitive) but still acts', async () => {
    const { agent } = await run(['--port-file', join(tempDir(), 'port'), '--silent', 'build', '--silent', 'VERIFY']);
    const client = await connected(agent);
    client.send('BUILD started request=r1 owner=o');
    client.send(`VERIFY v1 a.B ${sha('x')}`);
    client.send('DOCTOR d');
    await client.reply('DOCTOR_RESULT', 'd');
    expect(client.infos().filter((m) => /^(BUILD_|VERIFY_)/.test(m))).toEqual([]);
    expect(agent.hold().kind).toBe('named');
  });

  it('--old-agent, --not-ready and --crlf', async () => {
    const old = (await run(['--port-file', join(tempDir(), 'port'), '--old-agent', '--crlf'])).agent;
    const client = await connected(old);
    expect('agent' in client.events()[0]).toBe(false);
    expect(client.lines[0].endsWith('\r')).toBe(true);
    const notReady = (await run(['--port-file', join(tempDir(), 'port'), '--not-ready'])).agent;
    const c2 = await connected(notReady);
    c2.send('BUILD started request=r1 owner=o');
    c2.send('HEALTH');
    await c2.next((e) => e.message.startsWith('Reclazz '));
    expect(notReady.hold().kind).toBe('none');
  });

  it('passes the stand-in JVM and container switches through', async () => {
    const project = tempDir();
    const classes = join(project, 'target', 'classes');
    mkdirSync(classes, { recursive: true });
    const { agent } = await run([
      '--port-file', join(tempDir(), 'agent.port'), '--app-dir', project, '--watch', classes,
      '--path-map', `/app=${project}`, '--watch-sample-truncated',
    ]);
    const client = await connected(agent);
    expect(await doctor(client, 'd')).toMatchObject({
      pid: String(agent.jvm!.pid),
      workingDirectory: '/app',
      watchedDirectories: ['/app/target/classes'],
      watchSampleTruncated: true,
    });
    const other = (await run(['--port-file', join(tempDir(), 'p'), '--report-pid', '77', '--report-working-dir', '/elsewhere', '--no-stand-in-jvm'])).agent;
    expect(other.jvm).toBeUndefined();
    expect(await doctor(await connected(other), 'd')).toMatchObject({ pid: '77', workingDirectory: '/elsewhere' });
  });

  it('passes the start-up switches through', async () => {
    const dir = tempDir();
    const { agent } = await run(['--port-file', join(dir, 'agent.port'), '--starting-ms', 'forever', '--starting-doctor', 'silent', '--port-file-delay-ms', '150']);
    expect(agent.starting).toBe(true);
    expect(existsSync(join(dir, 'agent.port'))).toBe(false);
    const client = await connected(agent);
    client.send('DOCTOR d');
    client.send('PENDING');
    await client.next((e) => e.message === 'Nothing from this session needs a restart.');
    expect(client.infos().some((m) => m.startsWith('DOCTOR_RESULT'))).toBe(false);
    await waitFor(() => existsSync(join(dir, 'agent.port')), 'the port file');
    const late = (await run(['--port-file', join(tempDir(), 'agent.port'), '--listen-delay-ms', '100', '--starting-ms', '50'])).agent;
    await expect(LineClient.connect(late.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await late.listening;
    expect((await doctor(await connected(late), 'd')).verifySupported).toBe(true);
    const staged = (
      await run([
        '--port-file', join(tempDir(), 'agent.port'), '--starting-ms', 'forever', '--verify-wired-ms', '0',
        '--watcher-start-ms', 'forever', '--scan-timeout-ms', '100',
      ])
    ).agent;
    expect(await doctor(await connected(staged), 'd')).toMatchObject({ verifySupported: true, buildOwnershipSupported: false });
    staged.finishStarting();
    expect(await doctor(await connected(staged), 'd')).toMatchObject({ buildOwnershipSupported: true, watcherState: 'starting' });
  });

  it("passes the agent's options and the stand-in's command line through", async () => {
    const dir = tempDir();
    writeClass(dir, 'p/ATest.class', 'v1');
    const { agent } = await run([
      '--port-file', join(tempDir(), 'agent.port'), '--watch', dir, '--exclude-pattern', '*Test.class',
      '--agent-args', `watchDirs=${dir},excludePatterns=*Test.class`, '--class-path', join(dir, 'lib.jar'), '--agent-on', 'JAVA_TOOL_OPTIONS',
    ]);
    const environ = readFileSync(`/proc/${agent.jvm!.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContainEqual(expect.stringMatching(new RegExp(`^JAVA_TOOL_OPTIONS=-javaagent:\\S+=watchDirs=${dir},excludePatterns=\\*Test\\.class$`)));
    expect(readFileSync(`/proc/${agent.jvm!.pid}/cmdline`, 'utf8').split('\0')).toContain(join(dir, 'lib.jar'));
    const client = await connected(agent);
    const v2 = writeClass(dir, 'p/ATest.class', 'v2');
    client.send('SCAN');
    await waitFor(() => agent.captures === 1, 'the capture');
    expect((await client.verify('v', 'p.ATest', v2)).status).toBe('not_observed');
  });

  it('passes the batch, watcher and slot switches through', async () => {
    const dir = tempDir();
    for (const name of ['A', 'B', 'Bad', 'Moved']) writeClass(dir, `p/${name}.class`, 'v1');
    const { agent } = await run([
      '--port-file', join(dir, 'port'), '--watch', dir, '--auto-reload', '--watch-debounce-ms', '50',
      '--unreadable-class', 'p.Bad', '--restart-required', 'p.Moved=p.X->p.Y', '--new-bean', 'p.Bean=refused', '--lingering-slots',
      '--capture-delay-ms', '5', '--reload-ms', '5',
    ]);
    const client = await connected(agent);
    const a = writeClass(dir, 'p/A.class', 'v2');
    expect((await finalVerify(client, 'p.A', a)).status).toBe('applied');
    writeClass(dir, 'p/Bad.class', 'v2');
    await client.next((e) => e.level === 'ERROR' && e.message.startsWith(`Failed to read class file ${join(dir, 'p', 'Bad.class')}: `));
    const moved = writeClass(dir, 'p/Moved.class', 'v2');
    expect((await finalVerify(client, 'p.Moved', moved)).detail).toBe(
      'WARN: p.Moved: superclass change not applied; restart required. Still extends X instead of Y. Eligible method bodies will be attempted separately.',
    );
    const bean = writeClass(dir, 'p/Bean.class', 'v1');
    expect((await finalVerify(client, 'p.Bean', bean)).status).toBe('failed');
    const second = await connected(agent);
    second.close();
    await waitFor(() => agent.clientCount() === 1, '1 clients');
    expect(agent.slotsInUse()).toBe(2);
  });

  it('passes --hostile features through', async () => {
    const { agent } = await run(['--port-file', join(tempDir(), 'port'), '--hostile', 'messages', '--hostile', 'doctor']);
    const client = await connected(agent);
    expect(client.events()[0].message).toContain('\u001b');
    expect(String((await doctor(client, 'd')).vmName)).toContain('\u001b[2J');
    const silent = (await run(['--port-file', join(tempDir(), 'port'), '--hostile', 'silent-connect'])).agent;
    const raw = await LineClient.connect(silent.port);
    onCleanup(() => raw.close());
    await sleep(50);
    expect(raw.rawText).toBe('');
  });

  it('rejects bad arguments', async () => {
    const stderr = process.stderr.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      await expect(runFakeAgentCli(['--verify-status', 'maybe'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--port', 'x'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--hostile', 'rude'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--path-map', '/app'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--starting-ms', 'soon'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--starting-doctor', 'loud'])).rejects.toThrow();
    } finally {
      process.stderr.write = stderr;
    }
  });
});

describe('reclazz-fake-agent binary', () => {
  // Compile the fake agent into a scratch package so this test does not depend on (or
  // disturb) the project's dist/, which the other half of the project also builds.
  let pkg = '';
  beforeAll(() => {
    // Not tempDir(): that one is removed after each test.
    pkg = mkdtempSync(join(tmpdir(), 'fake-agent-bin-'));
    execFileSync(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '--outDir', join(pkg, 'dist'), '--rootDir', join(root, 'src'),
        '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
        '--strict', '--skipLibCheck', join(root, 'src/fake-agent/cli.ts'),
      ],
      { stdio: 'inherit' },
    );
    mkdirSync(join(pkg, 'bin'));
    copyFileSync(join(root, 'bin/reclazz-fake-agent.js'), join(pkg, 'bin/reclazz-fake-agent.js'));
    mkdirSync(join(pkg, 'docs'));
    copyFileSync(join(root, 'docs/fake-agent.md'), join(pkg, 'docs/fake-agent.md'));
    writeFileSync(join(pkg, 'package.json'), '{"name":"reclazz-build","version":"0.0.0-test","type":"module"}');
    symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
  }, 60_000);
  afterAll(() => rmSync(pkg, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'defaults the port file to .reclazz/agent.port, logs commands with --log, and on %s deletes it and exits 0',
    async (signal) => {
      const cwd = tempDir();
      mkdirSync(join(cwd, 'classes'));
      const child = spawn(
        process.execPath,
        [join(pkg, 'bin/reclazz-fake-agent.js'), '--watch', 'classes', '--log'],
        { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      onCleanup(() => void child.kill('SIGKILL'));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
      await waitFor(() => stdout.includes('\n'), 'the ready line');
      const portFile = join(cwd, '.reclazz', 'agent.port');
      const port = Number(readFileSync(portFile, 'utf8'));
      expect(stdout).toBe(`fake agent listening on 127.0.0.1:${port} (port file ${portFile})\n`);

      const client = await LineClient.ready(port);
      onCleanup(() => client.close());
      const doctor = await client.ask('DOCTOR d1', 'DOCTOR_RESULT', 'd1');
      expect(JSON.parse(doctor.slice('DOCTOR_RESULT d1 '.length))).toMatchObject({
        watchedDirectories: [join(cwd, 'classes')],
        workingDirectory: realpathSync(cwd),
      });
      await waitFor(() => stderr.includes('DOCTOR d1'), 'the logged command');
      expect(stderr).toBe('[client 1] DOCTOR d1\n');

      child.kill(signal);
      expect(await exited).toBe(0);
      expect(existsSync(portFile)).toBe(false);
      await client.closed;
    },
    20_000,
  );

  it('--help shows usage with examples, points at the guide the package ships, and exits 0', () => {
    const help = execFileSync(process.execPath, [join(pkg, 'bin/reclazz-fake-agent.js'), '--help'], { encoding: 'utf8' });
    expect(help).toContain('Usage: reclazz-fake-agent');
    expect(help).toContain('--reject-started');
    expect(help).toContain('--hostile <feature>');
    expect(help).toContain('Examples:');
    expect(help).not.toContain('protocol.md');
    expect(help.replace(/\s+/g, ' ')).toContain(`Documented in ${join(pkg, 'docs', 'fake-agent.md')}.`);
    // That guide exists, and the package ships it (test/package/pack.test.ts installs it).
    expect(readFileSync(join(root, 'docs/fake-agent.md'), 'utf8')).toMatch(/^# The fake agent$/m);
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files).toContain('docs');
  });

  it('a killed fake agent leaves no stand-in JVM behind (its stdin closes)', async () => {
    const cwd = tempDir();
    const child = spawn(process.execPath, [join(pkg, 'bin/reclazz-fake-agent.js')], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    onCleanup(() => void child.kill('SIGKILL'));
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    await waitFor(() => stdout.includes('\n'), 'the ready line');
    const client = await LineClient.ready(Number(readFileSync(join(cwd, '.reclazz', 'agent.port'), 'utf8')));
    onCleanup(() => client.close());
    const result = await doctor(client, 'd');
    const pid = Number(result.pid);
    expect(pid).not.toBe(child.pid);
    expect(result.workingDirectory).toBe(realpathSync(cwd));
    expect(isRunning(pid)).toBe(true);
    child.kill('SIGKILL');
    await waitFor(() => !isRunning(pid), 'the stand-in to exit');
  }, 20_000);
});
