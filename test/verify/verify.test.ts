/**
 * The VERIFY loop against the fake agent over a real connection: verdicts per receipt
 * status, "not captured yet" mismatches, the capacity rule, lost replies, session change,
 * closed connection, deadline and interrupt.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../src/agent/connection.js';
import { type FakeAgent, type FakeAgentOptions, formatEvent, type InterceptCommand, startFakeAgent } from '../../src/fake-agent/index.js';
import { verifyClasses, type VerifyTarget } from '../../src/verify/round.js';
import { verdictWords } from '../../src/report/verdict-words.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step();
});

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

interface Setup {
  agent: FakeAgent;
  connection: AgentConnection;
  dir: string;
  /** Writes class `name` (`com.acme.A`) with `bytes`. */
  write(name: string, bytes: string): void;
  /** A build under the hold: BUILD started, `edit`, BUILD ok (the agent then captures). */
  build(edit: () => void): Promise<void>;
}

async function setup(classes: Record<string, string>, options: FakeAgentOptions = {}): Promise<Setup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-verify-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, bytes: string): void => {
    const file = path.join(dir, ...name.split('.')) + '.class';
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, bytes);
  };
  for (const [name, bytes] of Object.entries(classes)) write(name, bytes);
  const agent = await startFakeAgent({ watchDirs: [dir], captureDelayMs: 0, reloadMs: 0, heartbeatMs: 60_000, ...options });
  cleanups.push(() => agent.stop());
  const { connection } = await AgentConnection.open(agent.port, { timeoutMs: 2000 });
  cleanups.push(() => connection.close());
  let n = 0;
  const build = async (edit: () => void): Promise<void> => {
    n += 1;
    const ack = (request: string) => (e: { level: string; message: string }) =>
      e.level === 'INFO' && e.message.startsWith(`BUILD_ACK ${request} `);
    await connection.request(`BUILD started request=s${n} owner=o`, (e) => (ack(`s${n}`)(e) ? e : undefined), 'started', 2000);
    edit();
    await connection.request(`BUILD ok request=k${n} owner=o`, (e) => (ack(`k${n}`)(e) ? e : undefined), 'ok', 2000);
  };
  return { agent, connection, dir, write, build };
}

function target(s: Setup, name: string, bytes: string, previous?: string): VerifyTarget {
  return {
    className: name,
    path: path.join(s.dir, ...name.split('.')) + '.class',
    sha256: sha(bytes),
    ...(previous === undefined ? {} : { previousSha256s: [sha(previous)] }),
  };
}

describe('verifyClasses', () => {
  it('proves classes applied, after reading not_observed and running first', async () => {
    const s = await setup({ 'com.acme.A': 'a1', 'com.acme.B$Inner': 'b1' }, { captureDelayMs: 50, reloadMs: 150 });
    await s.build(() => {
      s.write('com.acme.A', 'a2');
      s.write('com.acme.B$Inner', 'b2');
    });
    const progress: number[] = [];
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a2'), target(s, 'com.acme.B$Inner', 'b2')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 5000,
      onProgress: (p) => progress.push(p.final),
    });
    expect(report.verdicts.map((v) => v.status)).toEqual(['applied', 'applied']);
    expect(report.capacityLimited).toBe(false);
    expect(report.requests).toBeGreaterThan(2);
    expect(progress).toEqual([1, 2]);
  });

  it('keeps polling a mismatch that names the bytes from before the build (not captured yet)', async () => {
    const s = await setup({ 'com.acme.A': 'a1' }, { captureDelayMs: 300 });
    await s.build(() => s.write('com.acme.A', 'a2'));
    await new Promise((resolve) => setTimeout(resolve, 500)); // a2 is now the applied receipt
    await s.build(() => s.write('com.acme.A', 'a3'));
    // Until the capture (300 ms), VERIFY a3 reads "mismatch, observed a2".
    const pending = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a3', 'a2')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 5000,
    });
    expect(pending.verdicts[0]!.status).toBe('applied');
    expect(pending.requests).toBeGreaterThan(1);
  });

  it('without the bytes from before, that same early mismatch is final', async () => {
    const s = await setup({ 'com.acme.A': 'a1' }, { captureDelayMs: 300 });
    await s.build(() => s.write('com.acme.A', 'a2'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await s.build(() => s.write('com.acme.A', 'a3'));
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a3')], { sessionId: s.agent.sessionId, timeoutMs: 5000 });
    expect(report.verdicts[0]).toMatchObject({ status: 'mismatch', receipt: { observedSha256: sha('a2') } });
  });

  it('a mismatch naming any other bytes is final', async () => {
    const s = await setup({ 'com.acme.A': 'a1' });
    await s.build(() => s.write('com.acme.A', 'a2'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'something else', 'a1')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 5000,
    });
    expect(report.verdicts[0]).toMatchObject({ status: 'mismatch', receipt: { observedSha256: sha('a2') } });
  });

  it('failed and unverified receipts are final and not proof', async () => {
    const s = await setup(
      { 'com.acme.A': 'a1', 'com.acme.B': 'b1' },
      { verifyStatus: (name) => (name === 'com.acme.A' ? 'failed' : undefined) },
    );
    await s.build(() => {
      s.write('com.acme.A', 'a2');
      s.write('com.acme.B', 'b2');
      s.write('com.acme.New', 'n1'); // not loaded before: unverified
    });
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a2'), target(s, 'com.acme.New', 'n1')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 5000,
    });
    expect(report.verdicts.map((v) => v.status)).toEqual(['failed', 'unverified']);
  });

  it('stops once as many classes as the agent keeps receipts for are final, naming the rest beyond capacity', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `com.acme.C${i}`);
    const s = await setup(Object.fromEntries(names.map((n) => [n, `${n} v1`])), { ledgerSize: 8 });
    await s.build(() => names.forEach((n) => s.write(n, `${n} v2`)));
    const report = await verifyClasses(
      s.connection,
      names.map((n) => target(s, n, `${n} v2`)),
      { sessionId: s.agent.sessionId, timeoutMs: 5000, capacity: 8 },
    );
    expect(report.capacityLimited).toBe(true);
    expect(report.verdicts.filter((v) => v.status === 'applied')).toHaveLength(8);
    expect(report.verdicts.filter((v) => v.status === 'beyond-capacity')).toHaveLength(12);
    expect(verdictWords(report.verdicts.find((v) => v.status === 'beyond-capacity')!)).toContain('only 8');
  });

  it('asks again when a reply is lost, and ignores the late reply to the old token', async () => {
    const dropped = new Set<string>();
    const late: string[] = [];
    const intercept = (cmd: InterceptCommand) => {
      if (cmd.verb !== 'VERIFY' || dropped.has(cmd.words[2]!)) return undefined;
      dropped.add(cmd.words[2]!);
      late.push(cmd.words[1]!);
      return { kind: 'delay' as const, ms: 1500 };
    };
    const s = await setup({ 'com.acme.A': 'a1' }, { intercept });
    await s.build(() => s.write('com.acme.A', 'a2'));
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a2')], { sessionId: s.agent.sessionId, timeoutMs: 5000 });
    expect(report.verdicts[0]!.status).toBe('applied');
    expect(report.lostReplies).toBe(1);
    expect(report.verdicts[0]!.receipt!.requestId).not.toBe(late[0]);
  });

  it('a receipt from another session ends the round: the app restarted', async () => {
    const s = await setup(
      { 'com.acme.A': 'a1' },
      {
        intercept: (cmd) => {
          if (cmd.verb !== 'VERIFY') return undefined;
          const body = {
            requestId: cmd.words[1],
            sessionId: 'other',
            className: cmd.words[2],
            expectedSha256: cmd.words[3],
            observedSha256: '',
            status: 'not_observed',
            source: '',
            detail: '',
            completedAt: '',
          };
          return { kind: 'reply', lines: [formatEvent('INFO', `VERIFY_RESULT ${cmd.words[1]} ${JSON.stringify(body)}`)] };
        },
      },
    );
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a1')], { sessionId: s.agent.sessionId, timeoutMs: 5000 });
    expect(report.sessionChangedTo).toBe('other');
    expect(report.verdicts[0]!.status).toBe('session-changed');
  });

  it('a closed connection ends the round with connection-lost', async () => {
    const s = await setup({ 'com.acme.A': 'a1' }, { intercept: (cmd) => (cmd.verb === 'VERIFY' ? { kind: 'close' } : undefined) });
    const report = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'a1')], { sessionId: s.agent.sessionId, timeoutMs: 5000 });
    expect(report.verdicts[0]!.status).toBe('connection-lost');
  });

  it('the deadline ends the round; an abort interrupts it', async () => {
    const s = await setup({ 'com.acme.A': 'a1' });
    const timedOut = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'never built')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 300,
    });
    expect(timedOut.verdicts[0]).toMatchObject({ status: 'timeout', why: { kind: 'deadline', last: 'not_observed' } });
    expect(verdictWords(timedOut.verdicts[0]!)).toBe('still not_observed at the deadline');
    const controller = new AbortController();
    setTimeout(() => controller.abort('SIGINT'), 100);
    const interrupted = await verifyClasses(s.connection, [target(s, 'com.acme.A', 'never built')], {
      sessionId: s.agent.sessionId,
      timeoutMs: 5000,
      signal: controller.signal,
    });
    expect(interrupted.verdicts[0]!.status).toBe('interrupted');
  });

  it('keeps at most `window` requests in flight and asks each of many classes about once when they are applied at once', async () => {
    const names = Array.from({ length: 300 }, (_, i) => `com.acme.p${i % 7}.C${i}`);
    let inFlight = 0;
    let most = 0;
    const s = await setup(Object.fromEntries(names.map((n) => [n, `${n} v1`])), {
      intercept: (cmd) => {
        if (cmd.verb !== 'VERIFY') return undefined;
        inFlight += 1;
        most = Math.max(most, inFlight);
        setImmediate(() => (inFlight -= 1));
        return undefined;
      },
    });
    await s.build(() => names.forEach((n) => s.write(n, `${n} v2`)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const report = await verifyClasses(
      s.connection,
      names.map((n) => target(s, n, `${n} v2`)),
      { sessionId: s.agent.sessionId, timeoutMs: 5000, window: 16 },
    );
    expect(report.verdicts.every((v) => v.status === 'applied')).toBe(true);
    expect(report.requests).toBe(300);
    expect(most).toBeLessThanOrEqual(16);
  });
});
