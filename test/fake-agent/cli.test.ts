import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
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
import { onCleanup, sha, tempDir, writeClass } from './fixture.js';
import { LineClient, until } from './line-client.js';

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
    await c2.next((e) => e.message.startsWith('Agent '));
    expect(notReady.hold().kind).toBe('none');
  });

  it('rejects bad arguments', async () => {
    const stderr = process.stderr.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      await expect(runFakeAgentCli(['--verify-status', 'maybe'])).rejects.toThrow();
      await expect(runFakeAgentCli(['--port', 'x'])).rejects.toThrow();
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
    writeFileSync(join(pkg, 'package.json'), '{"type":"module"}');
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
      await until(() => stdout.includes('\n'), 10_000, 'the ready line');
      const portFile = join(cwd, '.reclazz', 'agent.port');
      const port = Number(readFileSync(portFile, 'utf8'));
      expect(stdout).toBe(`fake agent listening on 127.0.0.1:${port} (port file ${portFile})\n`);

      const client = await LineClient.ready(port);
      onCleanup(() => client.close());
      const doctor = await client.ask('DOCTOR d1', 'DOCTOR_RESULT', 'd1');
      expect(JSON.parse(doctor.slice('DOCTOR_RESULT d1 '.length))).toMatchObject({
        watchedDirectories: [join(cwd, 'classes')],
        workingDirectory: cwd,
      });
      await until(() => stderr.includes('DOCTOR d1'), 2000, 'the logged command');
      expect(stderr).toBe('[client 1] DOCTOR d1\n');

      child.kill(signal);
      expect(await exited).toBe(0);
      expect(existsSync(portFile)).toBe(false);
      await client.closed;
    },
    20_000,
  );

  it('--help shows usage with examples and exits 0', () => {
    const help = execFileSync(process.execPath, [join(pkg, 'bin/reclazz-fake-agent.js'), '--help'], { encoding: 'utf8' });
    expect(help).toContain('Usage: reclazz-fake-agent');
    expect(help).toContain('--reject-started');
    expect(help).toContain('Examples:');
  });
});
