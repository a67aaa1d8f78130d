import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../src/fake-agent/index.js';
import { agentFor, clientOf, onCleanup, tempDir } from './fixture.js';
import { LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('port file', () => {
  it('holds the decimal port without newline and is removed on stop()', async () => {
    const portFile = join(tempDir(), 'nested', 'dir', 'agent.port');
    const agent = await agentFor({ portFile });
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
    expect(agent.port).toBeGreaterThan(0);
    await agent.stop();
    expect(existsSync(portFile)).toBe(false);
    await agent.stop(); // idempotent
  });

  it("stop() deletes it whatever port it names, as the agent does: a JVM that stops after another wrote its port deletes that one's", async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const old = await agentFor({ portFile });
    const fresh = await agentFor({ portFile });
    expect(readFileSync(portFile, 'utf8')).toBe(String(fresh.port));
    await old.stop();
    expect(existsSync(portFile)).toBe(false);
  });

  it('is written by rename: no temp file is left beside it', async () => {
    const dir = tempDir();
    await agentFor({ portFile: join(dir, 'agent.port') });
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir)).toEqual(['agent.port']);
  });

  it('listens on 127.0.0.1 only', async () => {
    const agent = await agentFor();
    const { connect } = await import('node:net');
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      const socket = connect({ host: '::1', port: agent.port });
      socket.on('connect', () => {
        socket.destroy();
        resolve(null);
      });
      socket.on('error', resolve);
    });
    expect(error).not.toBeNull();
  });
});

describe('stream', () => {
  it('starts with CONNECTED carrying version, agent and an ISO UTC timestamp', async () => {
    const agent = await agentFor();
    const client = await LineClient.connect(agent.port);
    onCleanup(() => client.close());
    const first = await client.next(() => true);
    expect(client.lines[0]).toBe(first.raw);
    expect(Object.keys(first)).toEqual(['level', 'message', 'timestamp', 'version', 'agent', 'raw']);
    expect(first).toMatchObject({
      level: 'CONNECTED',
      message: 'Agent status server connected',
      version: 1,
      agent: '1.4.0-fake',
    });
    expect(first.timestamp).toMatch(ISO_MS_Z);
    expect(client.rawText.endsWith('\n')).toBe(true);
    expect(client.rawText).not.toContain('\r');
  });

  it('honours protocolVersion and agentVersion; agentVersion null omits "agent"', async () => {
    const a = await agentFor({ protocolVersion: 7, agentVersion: '2.0.0' });
    const ca = await LineClient.connect(a.port);
    onCleanup(() => ca.close());
    expect(await ca.next(() => true)).toMatchObject({ version: 7, agent: '2.0.0' });

    const old = await agentFor({ agentVersion: null });
    const co = await LineClient.connect(old.port);
    onCleanup(() => co.close());
    const connected = await co.next(() => true);
    expect(connected.level).toBe('CONNECTED');
    expect('agent' in connected).toBe(false);
    expect(connected.version).toBe(1);
  });

  it('sends HEARTBEAT with an empty message at a fixed rate', async () => {
    const agent = await agentFor({ heartbeatMs: 40 });
    const client = await clientOf(agent);
    const beats: number[] = [];
    for (let i = 0; i < 3; i++) {
      const beat = await client.next((e) => e.level === 'HEARTBEAT');
      expect(beat.message).toBe('');
      expect(beat.timestamp).toMatch(ISO_MS_Z);
      beats.push(Date.parse(beat.timestamp));
    }
    // By the agent's own stamps: two periods apart at least; the upper bound only rules out a stall
    // (a loaded machine delays timers by far more than a period).
    expect(beats[2] - beats[0]).toBeGreaterThanOrEqual(60);
    expect(beats[2] - beats[0]).toBeLessThan(5000);
  });

  it('keeps heartbeats flowing while other lines flow', async () => {
    const agent = await agentFor({ heartbeatMs: 30 });
    const client = await clientOf(agent);
    const spam = setInterval(() => agent.broadcast('INFO', 'busy'), 5);
    onCleanup(() => clearInterval(spam));
    await client.next((e) => e.level === 'HEARTBEAT');
    await client.next((e) => e.level === 'HEARTBEAT');
    expect(client.infos()).toContain('busy');
  });

  it('broadcast() reaches every client with extra fields after the standard ones', async () => {
    const agent = await agentFor();
    const a = await clientOf(agent);
    const b = await clientOf(agent);
    agent.broadcast('STRUCTURAL_RELOAD', 'Structural reload of a.B', { type: 'structural' });
    for (const c of [a, b]) {
      const e = await c.next((x) => x.level === 'STRUCTURAL_RELOAD');
      expect(Object.keys(e)).toEqual(['level', 'message', 'timestamp', 'type', 'raw']);
      expect(e.type).toBe('structural');
    }
  });

  it('truncates messages longer than 4096 characters', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    agent.broadcast('INFO', 'x'.repeat(4096));
    agent.broadcast('INFO', 'y'.repeat(5000));
    expect((await client.next((e) => e.level === 'INFO')).message).toBe('x'.repeat(4096));
    expect((await client.next((e) => e.level === 'INFO')).message).toBe('y'.repeat(4096) + '...(truncated)');
    expect(JSON.parse(formatEvent('INFO', 'z'.repeat(4097))).message).toHaveLength(4096 + 14);
  });

  it('ends lines with \\r\\n when crlf is set', async () => {
    const agent = await agentFor({ crlf: true, heartbeatMs: 20 });
    const client = await clientOf(agent);
    await client.next((e) => e.level === 'HEARTBEAT');
    expect(client.lines.length).toBeGreaterThanOrEqual(2);
    for (const line of client.lines) expect(line.endsWith('\r')).toBe(true);
    expect(client.rawText.split('\r\n').length).toBe(client.lines.length + 1);
  });
});

describe('clients', () => {
  it('accepts a 6th connection and closes it before CONNECTED', async () => {
    const agent = await agentFor();
    for (let i = 0; i < 5; i++) await clientOf(agent);
    expect(agent.clientCount()).toBe(5);
    const sixth = await LineClient.connect(agent.port);
    onCleanup(() => sixth.close());
    await sixth.closed;
    expect(sixth.rawText).toBe('');
    expect(agent.clientCount()).toBe(5);
  });

  it('frees a slot when a client leaves', async () => {
    const agent = await agentFor({ maxClients: 1 });
    const first = await clientOf(agent);
    first.close();
    await waitFor(() => agent.clientCount() === 0, '0 clients');
    const second = await clientOf(agent);
    expect(second.lines).toHaveLength(1);
  });

  it('closes the connection on a command line of 513 characters, not 512', async () => {
    const agent = await agentFor();
    const ok = await clientOf(agent);
    ok.send('X'.repeat(512));
    ok.send('DOCTOR d512');
    await ok.reply('DOCTOR_RESULT', 'd512');

    const bad = await clientOf(agent);
    bad.send('X'.repeat(513));
    await bad.closed;
    expect(agent.received.map((r) => r.line.length)).toEqual([512, 'DOCTOR d512'.length]);
  });

  it('closes the connection when a partial line grows past 512 without a newline', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    client.send('Y'.repeat(300), true);
    await sleep(20);
    expect(client.ended).toBe(false);
    client.send('Y'.repeat(213), true);
    await client.closed;
    expect(agent.received).toEqual([]);
  });

  it('ignores \\r in command lines and splits on \\n across packets', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    client.send('DOC', true);
    await sleep(10);
    client.send('TOR crlf1\r\nDOCTOR cr\rlf2\n', true);
    await client.reply('DOCTOR_RESULT', 'crlf1');
    await client.reply('DOCTOR_RESULT', 'crlf2');
    expect(agent.received.map((r) => r.line)).toEqual(['DOCTOR crlf1', 'DOCTOR crlf2']);
  });

  it('gives no answer to unknown or malformed commands', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    for (const line of ['HELLO', '', 'doctor d1', 'DOCTOR  d1', 'DOCTOR d1 ', 'DOCTOR', 'DOCTOR bad!token', 'SCAN now']) {
      client.send(line);
    }
    client.send('DOCTOR last');
    await client.reply('DOCTOR_RESULT', 'last');
    expect(client.infos().filter((m) => !m.startsWith('DOCTOR_RESULT last '))).toEqual([]);
    expect(agent.received).toHaveLength(9);
  });

  it('records every received line with client ids in order', async () => {
    const agent = await agentFor();
    const a = await clientOf(agent);
    const b = await clientOf(agent);
    a.send('SCAN');
    await waitFor(() => agent.received.length === 1, 'command 1 received');
    b.send('PENDING');
    await waitFor(() => agent.received.length === 2, 'command 2 received');
    expect(agent.received.map(({ client, line }) => ({ client, line }))).toEqual([
      { client: 1, line: 'SCAN' },
      { client: 2, line: 'PENDING' },
    ]);
    expect(agent.received[0].atMs).toBeLessThanOrEqual(agent.received[1].atMs);
  });
});

describe('outbox', () => {
  it('drops lines for a client that does not read and warns the others', async () => {
    const agent = await agentFor({ outboxLimit: 50 });
    const stuck = await clientOf(agent);
    stuck.socket.pause();
    const reader = await clientOf(agent);
    const big = 'z'.repeat(4000);
    const warned = () =>
      reader.events().some((e) => e.level === 'WARN' && e.message.includes('Status client 1 is not keeping up'));
    const deadline = Date.now() + 10_000;
    while (!warned()) {
      expect(Date.now()).toBeLessThan(deadline);
      for (let i = 0; i < 40; i++) agent.broadcast('INFO', big);
      await sleep(1);
    }
    // Receipts are dropped too: the stuck client asks, but its answer cannot be queued.
    stuck.send('DOCTOR lost1');
    await waitFor(() => agent.received.length === 1, 'command 1 received');
    expect(reader.events().filter((e) => e.level === 'WARN')).toHaveLength(1);
    // The reader is unaffected and still answered.
    expect(await reader.ask('DOCTOR fine', 'DOCTOR_RESULT', 'fine')).toMatch(/^DOCTOR_RESULT fine \{/);
    // When the stuck client finally reads, it gets at most what was queued, never lost1's answer.
    stuck.socket.resume();
    await sleep(100);
    expect(stuck.lines.some((l) => l.includes('DOCTOR_RESULT lost1'))).toBe(false);
    expect(stuck.lines.length).toBeLessThan(reader.lines.length);
  });
});

describe('restart and stop', () => {
  it('restart() drops clients and gives a new session on the same port', async () => {
    const agent = await agentFor();
    const before = agent.sessionId;
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o1');
    await client.reply('BUILD_ACK', 'r1');
    await agent.restart();
    await client.closed;
    expect(agent.sessionId).not.toBe(before);
    expect(agent.hold().kind).toBe('none');
    const again = await clientOf(agent);
    const doctor = await again.ask('DOCTOR d', 'DOCTOR_RESULT', 'd');
    expect(JSON.parse(doctor.slice('DOCTOR_RESULT d '.length))).toMatchObject({
      sessionId: agent.sessionId,
      buildHold: 'none',
    });
  });

  it('restartJvm() restarts the app as the agent does: port file gone, a new session, a new JVM, a new port written', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const agent = await agentFor({ portFile });
    const before = { session: agent.sessionId, port: agent.port, pid: agent.jvm?.pid };
    const client = await clientOf(agent);
    const restarting = agent.restartJvm();
    await client.closed;
    await restarting;
    expect(agent.sessionId).not.toBe(before.session);
    expect(agent.jvm?.pid).not.toBe(before.pid);
    expect(agent.port).not.toBe(before.port);
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
    const again = await clientOf(agent);
    const doctor = await again.ask('DOCTOR d', 'DOCTOR_RESULT', 'd');
    expect(JSON.parse(doctor.slice('DOCTOR_RESULT d '.length))).toMatchObject({ sessionId: agent.sessionId, pid: String(agent.jvm?.pid) });
  });

  it('honours a fixed sessionId', async () => {
    const agent = await agentFor({ sessionId: 'fixed-session' });
    expect(agent.sessionId).toBe('fixed-session');
  });

  it('stop() closes clients and the server', async () => {
    const agent = await agentFor({ heartbeatMs: 10 });
    const client = await clientOf(agent);
    await agent.stop();
    await client.closed;
    await expect(LineClient.connect(agent.port)).rejects.toThrow();
  });
});
