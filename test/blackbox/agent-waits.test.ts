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
import { startFakeAgent, writePortFile, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { jsonResult, runCli, startCli, type CliRun } from '../support/cli.js';
import { agentFor, buildCommand, buildRan, hasStackTrace, project, type Project } from '../support/project.js';
import { Lines, waitFor } from '../support/wait.js';

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

/**
 * Starts the CLI with `args`; once it says `waiting` on stderr (it waits for what the test holds
 * back), runs `then` (the test lets it happen) and returns the finished run.
 */
async function whenWaiting(p: Project, args: string[], waiting: RegExp, then: () => unknown): Promise<CliRun> {
  const cli = startCli(args, { cwd: p.dir });
  const stderr = new Lines(cli.stderr!);
  try {
    await stderr.line(waiting);
  } finally {
    await then();
  }
  const result = await cli;
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe('an agent still starting', () => {
  it('waits while DOCTOR shows the starting shape, then builds and proves', async () => {
    const { p, agent, build } = await setUp({ startingMs: Infinity, startingDoctor: 'observed' });
    const waiting = new RegExp(`waiting for the agent on port ${agent.port} to finish starting`);
    const run = await whenWaiting(p, build, waiting, () => agent.finishStarting());
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(PROVEN);
  });

  it('waits while DOCTOR gets no answer, asking again, then builds and proves', async () => {
    const { p, agent, build } = await setUp({ startingMs: Infinity, startingDoctor: 'silent' });
    const waiting = new RegExp(`waiting for the agent on port ${agent.port} to finish starting`);
    const run = await whenWaiting(p, ['--timeout', '400', ...build], waiting, async () => {
      // Asked again while still silent, then it finishes starting.
      await expect.poll(() => agent.received.filter((r) => r.line.startsWith('DOCTOR ')).length).toBeGreaterThanOrEqual(2);
      agent.finishStarting();
    });
    expect(run.exitCode, run.stderr).toBe(0);
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
  /** The agent's port file written only once the CLI says it waits for it (the app still starting). */
  const portFileLate = async (args: string[], config?: object) => {
    const { p, agent, build } = await setUp({ portFile: undefined });
    if (config) fs.writeFileSync(path.join(p.dir, 'reclazz.config.json'), JSON.stringify(config));
    // Written whole, as the agent does (temp file and rename): a plain write can be read empty.
    return whenWaiting(p, [...args, ...build], /waiting for the agent's port file to appear \(--wait-for-agent\)/, () =>
      writePortFile(p.portFile, agent.port),
    );
  };

  it('waits for a port file that appears late', async () => {
    const run = await portFileLate(['--wait-for-agent', '30000']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(PROVEN);
  });

  it('is also read from the config file (waitForAgentMs)', async () => {
    const run = await portFileLate([], { waitForAgentMs: 30000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(PROVEN);
  });

  it('waits for the port in the port file to answer', async () => {
    // The port file names a port nothing listens on until the CLI says it waits for an answer.
    const { p, agent, build } = await setUp();
    const port = agent.port;
    await agent.stop();
    fs.writeFileSync(p.portFile, String(port));
    const waiting = new RegExp(`waiting for the agent to answer on port ${port} \\(--wait-for-agent\\)`);
    const run = await whenWaiting(p, ['--wait-for-agent', '30000', ...build], waiting, async () => {
      agents.push(await startFakeAgent({ port, watchDirs: [p.classes], captureDelayMs: 20, reloadMs: 20, heartbeatMs: 0 }));
    });
    expect(run.exitCode, run.stderr).toBe(0);
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
    // At once: the run's own time (start-up aside) is far below what a wait would take.
    const missing = await setUp({ portFileDelayMs: 60_000 });
    const none = await runCli(['--json', ...missing.build], { cwd: missing.p.dir });
    expect(none.exitCode, none.stderr).toBe(69);
    expect(none.stderr).toMatch(/no running agent found/);
    expect(jsonResult(none).durationMs).toBeLessThan(3000);
    const stale = await setUp({ listenDelayMs: 60_000 });
    const silent = await runCli(['--json', ...stale.build], { cwd: stale.p.dir });
    expect(silent.exitCode, silent.stderr).toBe(69);
    expect(silent.stderr).toMatch(/nothing is listening on port \d+/);
    expect(jsonResult(silent).durationMs).toBeLessThan(3000);
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
    const { p, agent, build } = await setUp({ lingeringSlots: true, heartbeatMs: 0 });
    const five = await Promise.all(Array.from({ length: 5 }, () => client(agent.port)));
    for (const socket of five) socket.destroy();
    expect(agent.slotsInUse()).toBe(5);
    // The agent notices a closed client when a write to it fails: its heartbeats, sent once the CLI waits.
    const waiting = new RegExp(`waiting for a free client slot on the agent on port ${agent.port}`);
    const heartbeats = () => {
      agent.broadcast('HEARTBEAT', '');
      return agent.slotsInUse() < 5;
    };
    const run = await whenWaiting(p, build, waiting, () => waitFor(heartbeats, 'a slot to free', { pollMs: 100 }));
    expect(run.exitCode, run.stderr).toBe(0);
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
