/**
 * Refusals before anything is sent, the end of a run when the agent closes the connection
 * right after the last receipt the run needed, and the user's class files only ever read.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { BIN, runCli } from '../support/cli.js';
import { agentFor, buildCommand, buildRan, flow, hasStackTrace, project, type Project } from '../support/project.js';
import { isReply, messageOf, startProxy, type Proxy } from '../support/proxy.js';

const agents: FakeAgent[] = [];
const proxies: Proxy[] = [];
afterEach(async () => {
  await Promise.all([...agents.splice(0).map((a) => a.stop()), ...proxies.splice(0).map((p) => p.stop())]);
});

/** A TCP listener that counts connections, named by the project's port file. */
async function countingListener(p: Project): Promise<{ connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
  fs.writeFileSync(p.portFile, String((server.address() as net.AddressInfo).port));
  return { connections: () => connections, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('refused before connecting', () => {
  it('inside another safe build (RECLAZZ_SAFE_BUILD_ACTIVE=1): exit 69, no connection, the build never runs', async () => {
    const p = project();
    const listener = await countingListener(p);
    const run = await runCli(buildCommand(p), { cwd: p.dir, env: { RECLAZZ_SAFE_BUILD_ACTIVE: '1' } });
    await listener.close();
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(/refusing to run inside another safe build \(RECLAZZ_SAFE_BUILD_ACTIVE=1 is set\)/);
    expect(run.stderr).toMatch(/next: run the inner build command directly/);
    expect(listener.connections()).toBe(0);
    expect(buildRan(p)).toBe(false);
  });

  it('the build command gets RECLAZZ_SAFE_BUILD_ACTIVE=1, so a nested reclazz-build is refused', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const seen = path.join(p.dir, 'nested.json');
    const script = `
      const r = require('child_process').spawnSync(process.execPath, [${JSON.stringify(BIN)}, '--', 'true'], { encoding: 'utf8' });
      require('fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ env: process.env.RECLAZZ_SAFE_BUILD_ACTIVE, status: r.status, stderr: r.stderr }));`;
    const run = await runCli(['--', process.execPath, '-e', script], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const nested = JSON.parse(fs.readFileSync(seen, 'utf8')) as { env: string; status: number; stderr: string };
    expect(nested.env).toBe('1');
    expect(nested.status).toBe(69);
    expect(nested.stderr).toMatch(/refusing to run inside another safe build/);
    expect(flow(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD ok']);
  });

  it.each([
    [['gradle', '--continuous', 'classes'], '--continuous'],
    [['gradle', '-t', 'classes'], '-t'],
    [['--', 'gradle', 'classes', '--continuous'], '--continuous'],
    [['--', './gradlew', '-t', 'classes'], '-t'],
  ])('Gradle continuous mode %j: exit 2, no connection (it never finishes, so no ok could follow)', async (args, flag) => {
    const p = project();
    const listener = await countingListener(p);
    const run = await runCli(args, { cwd: p.dir });
    await listener.close();
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain(`✘ not run: Gradle's ${flag} never finishes, so the hold could never be released with BUILD ok\n`);
    expect(run.stderr).toContain(
      `next: for a build on every save, use reclazz-build watch (reclazz-build watch gradle classes); for one build, drop ${flag}`,
    );
    expect(listener.connections()).toBe(0);
  });
});

describe('the agent closes the connection right after the last receipt the run needed: not an error', () => {
  async function closingAfter(p: Project, last: (line: string) => boolean): Promise<FakeAgent> {
    const agent = await agentFor(p, agents);
    const proxy = await startProxy(agent.port, { fromAgent: (line) => (last(line) ? { close: true, lines: [line] } : undefined) });
    proxies.push(proxy);
    fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
    fs.writeFileSync(p.portFile, String(proxy.port));
    return agent;
  }

  it('after the ok receipt when nothing needs verifying: exit 0', async () => {
    const p = project();
    const agent = await closingAfter(p, (line) => isReply(line, 'BUILD_ACK', 'ok'));
    const run = await runCli(buildCommand(p), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/build ok and acknowledged; no class that was loaded before changed bytes/);
    expect(flow(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD ok']);
  });

  it('after the ok receipt with --no-verify: exit 0', async () => {
    const p = project();
    await closingAfter(p, (line) => isReply(line, 'BUILD_ACK', 'ok'));
    const run = await runCli(['--no-verify', ...buildCommand(p, { writes: { 'com.acme.Greeter': 'v2' } })], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/1 changed class\(es\) not verified \(--no-verify\)/);
  });

  it('after the failed receipt of a failed build: the build tool’s exit status', async () => {
    const p = project();
    const agent = await closingAfter(p, (line) => isReply(line, 'BUILD_ACK', 'failed'));
    // It wrote a class file, so failed keeps the hold (one that wrote nothing is released with ok).
    const run = await runCli(buildCommand(p, { exit: 3, writes: { 'com.acme.Outer': 'outer-half' } }), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(3);
    expect(agent.hold().kind).toBe('named');
  });

  it('after the last VERIFY result: exit 0', async () => {
    const p = project();
    let applied = 0;
    const agent = await closingAfter(
      p,
      (line) => isReply(line, 'VERIFY_RESULT') && messageOf(line)!.includes('"status":"applied"') && ++applied === 2,
    );
    const run = await runCli(buildCommand(p, { writes: { 'com.acme.Greeter': 'v2', 'com.acme.Outer': 'v2' } }), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/all 2 changed class\(es\) proven live/);
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(agent.received.filter((r) => r.line.startsWith('DOCTOR')).length).toBe(1); // no reconnect was needed
  });
});

describe("the user's class files are only ever read", () => {
  it('a run leaves every class file the build did not write exactly as it was (bytes, inode, times)', async () => {
    const p = project();
    await agentFor(p, agents, { portFile: p.portFile });
    const files = ['com/acme/Greeter.class', 'com/acme/Outer.class', 'com/acme/Outer$Inner.class'].map((f) => path.join(p.classes, f));
    const stamp = (file: string) => {
      const s = fs.statSync(file);
      return { bytes: fs.readFileSync(file, 'utf8'), ino: s.ino, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, mode: s.mode };
    };
    const before = files.map(stamp);
    expect((await runCli(buildCommand(p, { writes: { 'com.acme.Greeter': 'v2' } }), { cwd: p.dir })).exitCode).toBe(0);
    expect((await runCli(buildCommand(p, { exit: 1 }), { cwd: p.dir })).exitCode).toBe(1);
    expect(files.slice(1).map(stamp)).toEqual(before.slice(1));
    expect(stamp(files[0]!).bytes).toBe('v2');
  });
});
