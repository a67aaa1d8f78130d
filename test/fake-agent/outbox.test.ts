import { describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { agentFor, clientOf, finalVerify, tempDir, writeClass } from './fixture.js';
import { type LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

/** Broadcast until client `id`'s socket stops draining and its outbox holds exactly `limit` lines, none dropped yet. */
async function fillOutbox(agent: FakeAgent, id: number, limit: number): Promise<void> {
  const info = () => agent.clients().find((c) => c.id === id)!;
  const big = 'z'.repeat(4000);
  const deadline = Date.now() + 10_000;
  while (info().queued === 0) {
    expect(Date.now()).toBeLessThan(deadline);
    for (let i = 0; i < 50 && info().queued === 0; i++) agent.broadcast('INFO', big);
    if (info().queued === 0) await sleep(1);
  }
  while (info().queued < limit) agent.broadcast('INFO', 'filler');
  expect(info()).toMatchObject({ queued: limit, dropped: 0 });
}

/** A batch of three changed classes, captured by SCAN from `reader`; returns the verdict of each. */
async function batchOfThree(agent: FakeAgent, reader: LineClient, dir: string): Promise<string[]> {
  const hashes = ['A', 'B', 'C'].map((name) => writeClass(dir, `${name}.class`, `${name} v2`));
  reader.send('SCAN');
  await waitFor(() => agent.captures === 1, 'capture 1');
  const results = [];
  for (const [i, name] of ['A', 'B', 'C'].entries()) results.push(await finalVerify(reader, name, hashes[i], 5000));
  return results.map((r) => `${r.status}: ${r.detail}`);
}

async function setup(): Promise<{ agent: FakeAgent; dir: string }> {
  const dir = tempDir();
  for (const name of ['A', 'B', 'C']) writeClass(dir, `${name}.class`, `${name} v1`);
  return { agent: await agentFor({ watchDirs: [dir], outboxLimit: 20, reloadMs: 30 }), dir };
}

describe('a client that stops reading', () => {
  it('overflows during a batch: the "not keeping up" WARN makes the whole batch unverified', async () => {
    const { agent, dir } = await setup();
    const stuck = await clientOf(agent);
    stuck.socket.pause();
    const reader = await clientOf(agent);
    await fillOutbox(agent, 1, 20);
    const verdicts = await batchOfThree(agent, reader, dir);
    expect(verdicts).toEqual(Array(3).fill('unverified: WARN: Status client 1 is not keeping up; dropped 1 event(s)'));
    expect(reader.events().filter((e) => e.level === 'WARN').map((e) => e.message)).toEqual([
      'Status client 1 is not keeping up; dropped 1 event(s)',
    ]);
  });

  it('a client that keeps reading leaves the same batch applied', async () => {
    const { agent, dir } = await setup();
    const slow = await clientOf(agent);
    const reader = await clientOf(agent);
    for (let i = 0; i < 200; i++) agent.broadcast('INFO', 'z'.repeat(4000));
    const verdicts = await batchOfThree(agent, reader, dir);
    expect(verdicts.every((v) => v.startsWith('applied: '))).toBe(true);
    await waitFor(() => slow.lines.length >= 200 + 4, 'the slow client\'s 204 lines');
    expect(agent.clients().map((c) => c.dropped)).toEqual([0, 0]);
  });

  it('drops every line past the outbox, receipts included, warning at the first drop and every 1000th', async () => {
    const agent = await agentFor({ outboxLimit: 5 });
    const stuck = await clientOf(agent);
    stuck.socket.pause();
    const reader = await clientOf(agent);
    await fillOutbox(agent, 1, 5);
    for (let i = 0; i < 2000; i++) agent.broadcast('INFO', `extra ${i}`);
    stuck.send('DOCTOR lost');
    await waitFor(() => agent.received.length === 1, 'command 1 received');
    const warns = () => reader.events().filter((e) => e.level === 'WARN').map((e) => e.message);
    await waitFor(() => warns().length === 3, 'three warnings');
    expect(warns()).toEqual([1, 1000, 2000].map((n) => `Status client 1 is not keeping up; dropped ${n} event(s)`));
    expect(agent.clients()[0].dropped).toBeGreaterThan(2000);
    stuck.socket.resume();
    await sleep(100);
    expect(stuck.lines.some((line) => line.includes('DOCTOR_RESULT lost'))).toBe(false);
  });
});
