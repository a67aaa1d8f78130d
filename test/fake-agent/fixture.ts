/** Temp class-output directories for the fake agent's tests. */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { LineClient } from './line-client.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-agent-test-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Write `content` to `root/rel` (parents created); returns its sha256 hex. */
export function writeClass(root: string, rel: string, content: string): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return sha(content);
}

export function sha(content: string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Start a fake agent with fast test timings, stopped after the test. */
export async function agentFor(options: FakeAgentOptions = {}): Promise<FakeAgent> {
  const agent = await startFakeAgent({ heartbeatMs: 60_000, captureDelayMs: 20, reloadMs: 20, ...options });
  cleanups.push(() => agent.stop());
  return agent;
}

/** Connect a client that has seen CONNECTED; closed after the test. */
export async function clientOf(agent: FakeAgent): Promise<LineClient> {
  const client = await LineClient.ready(agent.port);
  cleanups.push(() => client.close());
  return client;
}

/** Register an extra cleanup step. */
export function onCleanup(step: () => Promise<void> | void): void {
  cleanups.push(step);
}
