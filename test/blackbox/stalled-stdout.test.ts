/**
 * A reader that stops reading our stdout must not make us stop reading the agent's socket
 * (protocol.md "A client that stops reading harms others": the agent's outbox for us fills, it
 * drops lines and WARNs on whatever thread broadcasts, which can turn a reload batch
 * `unverified`). `events --json` and a build run with `--json` are piped into a process that
 * never reads while the agent floods them; the agent must see every line taken.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { cliCommand, cliEnv } from '../support/cli.js';
import { agentFor, buildCommand, buildRan, project, release } from '../support/project.js';
import { waitFor } from '../support/wait.js';

const agents: FakeAgent[] = [];
const groups: number[] = [];
afterEach(async () => {
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** Runs `cli | sleep 600` (a reader that never reads) in a process group of its own, stderr to `errFile`. */
function stalled(args: string[], cwd: string, errFile: string): number {
  const shell = execa('sh', ['-c', `${cliCommand(args)} 2> ${errFile} | sleep 600`], {
    cwd,
    env: cliEnv(),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
    detached: true,
  });
  groups.push(shell.pid!);
  return shell.pid!;
}

/** Broadcasts `count` events of about 1 KB to every client, a few at a time so the socket can flow. */
async function flood(agent: FakeAgent, level: string, count: number): Promise<void> {
  const message = 'x'.repeat(1000);
  for (let i = 0; i < count; i += 100) {
    for (let j = i; j < i + 100; j++) agent.broadcast(level, `${j} ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The agent's first client (the CLI), once it is connected. */
async function theClient(agent: FakeAgent) {
  await waitFor(() => agent.clients().length === 1, 'the CLI to connect');
  const id = agent.clients()[0]!.id;
  return () => agent.clients().find((c) => c.id === id)!;
}

/**
 * A control: a client that never reads, connected beside the CLI. Its drops show the flood is
 * more than an outbox holds, so the CLI's none mean it kept reading. Closed by `close`.
 */
async function nonReader(agent: FakeAgent): Promise<{ dropped: () => number; close: () => void }> {
  const socket = net.connect(agent.port, '127.0.0.1');
  socket.pause();
  await waitFor(() => agent.clients().length === 2, 'the control client to connect');
  const id = agent.clients()[1]!.id;
  return { dropped: () => agent.clients().find((c) => c.id === id)?.dropped ?? 0, close: () => socket.destroy() };
}

describe('stdout that is never read', () => {
  it('events --json: the socket is still drained, nothing dropped', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    stalled(['events', '--json'], p.dir, path.join(p.dir, 'err.log'));
    const client = await theClient(agent);
    const control = await nonReader(agent);
    await flood(agent, 'INFO', 5000);
    await waitFor(() => client().queued === 0, 'the flood to be taken');
    expect(control.dropped()).toBeGreaterThan(0);
    control.close();
    expect(client()).toMatchObject({ open: true, dropped: 0 });
  });

  it('a build with --json: the socket is still drained while the agent floods it, and the run still proves', async () => {
    const p = project();
    const agent = await agentFor(p, agents, { portFile: p.portFile });
    const errFile = path.join(p.dir, 'err.log');
    const go = path.join(p.dir, 'go');
    stalled(['--json', ...buildCommand(p, { until: go, writes: { 'com.acme.Greeter': 'greeter-v2' } })], p.dir, errFile);
    const client = await theClient(agent);
    await waitFor(() => buildRan(p), 'the build to start');
    const control = await nonReader(agent);
    // RELOAD events become `agent-event` JSON lines on stdout: several MB for a pipe that takes 64 KB.
    await flood(agent, 'RELOAD', 5000);
    await waitFor(() => client().queued === 0, 'the flood to be taken');
    expect(control.dropped()).toBeGreaterThan(0);
    control.close();
    expect(client()).toMatchObject({ open: true, dropped: 0 });
    // The flood came during the build; now it may end.
    release(go);
    await waitFor(() => fs.readFileSync(errFile, 'utf8').includes('proven live'), 'the verdict');
    expect(fs.readFileSync(errFile, 'utf8')).toMatch(/✔ proven live: all 1 changed class\(es\) proven live/);
  });
});
