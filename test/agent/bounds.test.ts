/**
 * Bounds against a hostile or busy agent, in-process: VERIFY never has more requests in
 * flight than its window (far below the agent's 1000-line outbox), even for thousands of
 * classes; the connection never buffers more than 64 KiB of one line, however long the line.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection, MAX_LINE_BYTES } from '../../src/agent/connection.js';
import { askDoctor } from '../../src/agent/requests.js';
import { VERIFY_WINDOW, verifyClasses, type VerifyTarget } from '../../src/verify/round.js';

const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const CONNECTED = '{"level":"CONNECTED","message":"Agent status server connected","version":1,"agent":"test"}\n';

async function serve(onClient: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write(CONNECTED);
    onClient(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

function targets(n: number): VerifyTarget[] {
  return Array.from({ length: n }, (_, i) => ({
    className: `com.acme.C${i}`,
    path: `/x/C${i}.class`,
    sha256: createHash('sha256').update(String(i)).digest('hex'),
  }));
}

/** A peer that answers VERIFY `applied` after a short random delay, tracking requests in flight. */
async function verifyPeer(): Promise<{ port: number; maxInFlight: () => number; asked: () => number }> {
  let inFlight = 0;
  let max = 0;
  let asked = 0;
  const port = await serve((socket) => {
    let pending = '';
    socket.on('data', (chunk) => {
      pending += String(chunk);
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const [verb, token, className, sha] = pending.slice(0, nl).split(' ');
        pending = pending.slice(nl + 1);
        if (verb !== 'VERIFY') continue;
        asked += 1;
        inFlight += 1;
        max = Math.max(max, inFlight);
        setTimeout(
          () => {
            inFlight -= 1;
            const receipt = {
              requestId: token,
              sessionId: 's1',
              className,
              expectedSha256: sha,
              observedSha256: sha,
              status: 'applied',
              source: 'test',
              detail: '',
              completedAt: new Date().toISOString(),
            };
            socket.write(`${JSON.stringify({ level: 'INFO', message: `VERIFY_RESULT ${token} ${JSON.stringify(receipt)}` })}\n`);
          },
          Math.floor(Math.random() * 3),
        );
      }
    });
  });
  return { port, maxInFlight: () => max, asked: () => asked };
}

describe('VERIFY requests in flight', () => {
  it('3000 changed classes: every one verified, never more than the window in flight', async () => {
    const peer = await verifyPeer();
    const { connection } = await AgentConnection.open(peer.port, { timeoutMs: 2000 });
    try {
      const report = await verifyClasses(connection, targets(3000), { sessionId: 's1', timeoutMs: 30_000, capacity: 10_000 });
      expect(report.verdicts.filter((v) => v.status === 'applied')).toHaveLength(3000);
      expect(peer.maxInFlight()).toBeGreaterThan(1);
      expect(peer.maxInFlight()).toBeLessThanOrEqual(VERIFY_WINDOW);
      expect(VERIFY_WINDOW).toBeLessThanOrEqual(100); // well below the agent's 1000-line outbox
      console.log(`bounds: 3000 classes verified with at most ${peer.maxInFlight()} VERIFY requests in flight (window ${VERIFY_WINDOW})`);
    } finally {
      connection.close();
    }
  });

  it('beyond the agent receipt capacity (512): stops asking once capacity is reached, still bounded', async () => {
    const peer = await verifyPeer();
    const { connection } = await AgentConnection.open(peer.port, { timeoutMs: 2000 });
    try {
      const report = await verifyClasses(connection, targets(2000), { sessionId: 's1', timeoutMs: 30_000 });
      expect(report.capacityLimited).toBe(true);
      expect(report.verdicts.filter((v) => v.status === 'beyond-capacity').length).toBeGreaterThan(0);
      expect(peer.maxInFlight()).toBeLessThanOrEqual(VERIFY_WINDOW);
      expect(peer.asked()).toBeLessThan(512 + VERIFY_WINDOW + 1);
    } finally {
      connection.close();
    }
  });
});

describe('line bounds', () => {
  it('a 5 MiB line is discarded whole without buffering more than 64 KiB, and the next line still works', async () => {
    let client!: net.Socket;
    const port = await serve((socket) => (client = socket));
    const { connection } = await AgentConnection.open(port, { timeoutMs: 2000 });
    try {
      const peek = () => (connection as unknown as { pendingBytes: number }).pendingBytes;
      let maxBuffered = 0;
      const chunk = Buffer.alloc(64 * 1024 + 1, 0x61);
      for (let i = 0; i < 80; i++) {
        await new Promise<void>((resolve) => client.write(chunk, () => resolve()));
        await new Promise((resolve) => setImmediate(resolve));
        maxBuffered = Math.max(maxBuffered, peek());
      }
      client.write('\n');
      const answer = askDoctor(connection, 2000);
      const token = await new Promise<string>((resolve) => client.once('data', (d) => resolve(String(d).trim().split(' ')[1]!)));
      const doctor = { requestId: token, status: 'unavailable', detail: 'test' };
      client.write(`${JSON.stringify({ level: 'INFO', message: `DOCTOR_RESULT ${token} ${JSON.stringify(doctor)}` })}\r\n`);
      expect(await answer).toEqual({ kind: 'unavailable', detail: 'test' });
      expect(maxBuffered).toBeLessThanOrEqual(MAX_LINE_BYTES);
      expect(connection.malformedLines).toBe(1);
    } finally {
      connection.close();
    }
  });

  it('a request on a connection the agent already closed fails cleanly (no unhandled rejection)', async () => {
    let client!: net.Socket;
    const port = await serve((socket) => (client = socket));
    const { connection } = await AgentConnection.open(port, { timeoutMs: 2000 });
    client.destroy();
    while (!connection.closed) await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(askDoctor(connection, 500)).rejects.toMatchObject({ name: 'AgentConnectionError', kind: 'closed' });
  });

  it('an already aborted signal sends nothing', async () => {
    const lines: string[] = [];
    const port = await serve((socket) => socket.on('data', (d) => lines.push(String(d))));
    const { connection } = await AgentConnection.open(port, { timeoutMs: 2000 });
    try {
      const controller = new AbortController();
      controller.abort('SIGINT');
      await expect(askDoctor(connection, 500, controller.signal)).rejects.toMatchObject({ kind: 'aborted' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toEqual([]);
    } finally {
      connection.close();
    }
  });
});
