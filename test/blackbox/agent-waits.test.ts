/**
 * The agent as it really behaves while the app starts, on the real binary (protocol.md "How
 * the running agent differs"): handlers not wired yet (DOCTOR's starting shape, or no answer),
 * a port file that appears late or names a port nothing answers on yet (`--wait-for-agent`), and
 * client slots that linger after a client closed. Each is waited out within its bound, with a
 * progress line, and refused at the end naming what never happened.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent, FakeAgentOptions } from '../../src/fake-agent/index.js';
import { runCli } from '../support/cli.js';
import { agentFor, buildCommand, buildRan, hasStackTrace, project, type Project } from '../support/project.js';

const agents: FakeAgent[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A project and its agent (port file at the usual place), and a build that changes Greeter. */
async function setUp(options: FakeAgentOptions = {}): Promise<{ p: Project; agent: FakeAgent; build: string[] }> {
  const p = project();
  const agent = await agentFor(p, agents, { portFile: p.portFile, ...options });
  return { p, agent, build: buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }) };
}

const PROVEN = /✔ proven live: all 1 changed class\(es\) proven live/;

describe('an agent still starting', () => {
  it('waits while DOCTOR shows the starting shape, then builds and proves', async () => {
    const { p, agent, build } = await setUp({ startingMs: 1500, startingDoctor: 'observed' });
    const run = await runCli(build, { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`waiting for the agent on port ${agent.port} to finish starting`));
    expect(run.stderr).toMatch(PROVEN);
  });

  it('waits while DOCTOR gets no answer, asking again, then builds and proves', async () => {
    const { p, agent, build } = await setUp({ startingMs: 1500, startingDoctor: 'silent' });
    const run = await runCli(['--timeout', '400', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`waiting for the agent on port ${agent.port} to finish starting`));
    expect(run.stderr).toMatch(PROVEN);
    expect(agent.received.filter((r) => r.line.startsWith('DOCTOR ')).length).toBeGreaterThanOrEqual(2);
  });

  it('refuses (69) once --wait is over, saying it is still starting; the build never ran', async () => {
    const { p, agent, build } = await setUp({ startingMs: Infinity, startingDoctor: 'observed' });
    const run = await runCli(['--wait', '800', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(new RegExp(`the agent on port ${agent.port} is still starting after waiting \\d+ ms`));
    expect(buildRan(p)).toBe(false);
    expect(hasStackTrace(run.stderr)).toBe(false);
  });
});

describe('--wait-for-agent', () => {
  it('waits for a port file that appears late', async () => {
    const { p, build } = await setUp({ portFileDelayMs: 1500 });
    expect(fs.existsSync(p.portFile)).toBe(false);
    const run = await runCli(['--wait-for-agent', '8000', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/waiting for the agent's port file to appear \(--wait-for-agent\)/);
    expect(run.stderr).toMatch(PROVEN);
  });

  it('is also read from the config file (waitForAgentMs)', async () => {
    const { p, build } = await setUp({ portFileDelayMs: 1500 });
    fs.writeFileSync(path.join(p.dir, 'reclazz.config.json'), JSON.stringify({ waitForAgentMs: 8000 }));
    const run = await runCli(build, { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(PROVEN);
  });

  it('waits for the port in the port file to answer', async () => {
    const { p, agent, build } = await setUp({ listenDelayMs: 1500 });
    const run = await runCli(['--wait-for-agent', '8000', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`waiting for the agent to answer on port ${agent.port} \\(--wait-for-agent\\)`));
    expect(run.stderr).toMatch(PROVEN);
  });

  it('says at the end that no port file appeared (69)', async () => {
    const { p, build } = await setUp({ portFileDelayMs: 60_000 });
    const run = await runCli(['--wait-for-agent', '800', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(/no port file appeared within \d+ ms \(--wait-for-agent\)/);
    expect(buildRan(p)).toBe(false);
  });

  it('says at the end that nothing answered on the port (69)', async () => {
    const { p, agent, build } = await setUp({ listenDelayMs: 60_000 });
    const run = await runCli(['--wait-for-agent', '800', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(
      new RegExp(`nothing answered on port ${agent.port} from \\S+agent\\.port within \\d+ ms \\(--wait-for-agent\\)`),
    );
    expect(buildRan(p)).toBe(false);
  });

  it('without it, a missing or stale port file is refused at once, as before', async () => {
    const missing = await setUp({ portFileDelayMs: 60_000 });
    let started = Date.now();
    const none = await runCli(missing.build, { cwd: missing.p.dir });
    expect(none.exitCode, none.stderr).toBe(69);
    expect(none.stderr).toMatch(/no running agent found/);
    expect(Date.now() - started).toBeLessThan(3000);
    const stale = await setUp({ listenDelayMs: 60_000 });
    started = Date.now();
    const silent = await runCli(stale.build, { cwd: stale.p.dir });
    expect(silent.exitCode, silent.stderr).toBe(69);
    expect(silent.stderr).toMatch(/nothing is listening on port \d+/);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

/** Opens a client, waits for its CONNECTED line, and returns it (closed after the test). */
function client(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.once('error', reject);
    socket.once('data', () => resolve(socket));
  });
}

describe('lingering client slots', () => {
  it('retries a connection closed before CONNECTED while closed clients still take the slots', async () => {
    const { p, agent, build } = await setUp({ lingeringSlots: true, heartbeatMs: 1500 });
    const five = await Promise.all(Array.from({ length: 5 }, () => client(agent.port)));
    for (const socket of five) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(agent.slotsInUse()).toBe(5);
    const run = await runCli(build, { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`waiting for a free client slot on the agent on port ${agent.port}`));
    expect(run.stderr).toMatch(PROVEN);
  });

  it('refuses with the sixth-client message once --wait is over (69)', async () => {
    const { p, agent, build } = await setUp({ heartbeatMs: 300 });
    await Promise.all(Array.from({ length: 5 }, () => client(agent.port)));
    const run = await runCli(['--wait', '800', ...build], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(/closed the connection before CONNECTED, on every try for \d+ ms \(--wait\)/);
    expect(run.stderr).toMatch(/it already serves 5 clients/);
    expect(buildRan(p)).toBe(false);
  });
});
