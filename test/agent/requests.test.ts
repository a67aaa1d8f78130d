/**
 * HEALTH's count of reload attempts (src/agent/requests.ts `askReloadCount`) over a real
 * connection: the fake agent's own lines as it reloads and fails, the agent's sentence forms,
 * and no count at all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../src/agent/connection.js';
import { askReloadCount } from '../../src/agent/requests.js';
import { formatEvent, startFakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const step of cleanups.splice(0).reverse()) await step();
});

/** A fake agent watching a folder with class A, and a connection to it. */
async function connected(options: FakeAgentOptions = {}): Promise<{ connection: AgentConnection; dir: string; scan: () => void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-health-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'A.class'), 'a-1');
  const agent = await startFakeAgent({ watchDirs: [dir], captureDelayMs: 0, reloadMs: 0, heartbeatMs: 60_000, ...options });
  cleanups.push(() => agent.stop());
  const { connection } = await AgentConnection.open(agent.port, { timeoutMs: 2000 });
  cleanups.push(() => connection.close());
  return { connection, dir, scan: () => connection.send('SCAN') };
}

/** HEALTH answered with these lines (as the agent words them) instead of the fake agent's own. */
const answering = (...lines: string[]): FakeAgentOptions => ({
  intercept: (cmd) => (cmd.verb === 'HEALTH' ? { kind: 'reply', lines: lines.map((m) => formatEvent('INFO', m)) } : undefined),
});

describe('askReloadCount', () => {
  it("counts the agent's reloads and failures since it started", async () => {
    let failing = false;
    const { connection, dir, scan } = await connected({ verifyStatus: () => (failing ? 'failed' : undefined) });
    expect(await askReloadCount(connection, 2000)).toBe(0);
    fs.writeFileSync(path.join(dir, 'A.class'), 'a-2');
    scan();
    await expect.poll(() => askReloadCount(connection, 2000)).toBe(1);
    failing = true;
    fs.writeFileSync(path.join(dir, 'A.class'), 'a-3');
    scan();
    await expect.poll(() => askReloadCount(connection, 2000)).toBe(2);
  });

  it("reads each of the agent's sentence forms, and the largest of several answers", async () => {
    const count = async (...lines: string[]) => askReloadCount((await connected(answering(...lines))).connection, 2000);
    expect(await count('Reclazz 1.3.0, up 5 minutes.', 'Nothing has reloaded yet this session.')).toBe(0);
    expect(await count('1 reload: 0 structural, 1 method bodies.')).toBe(1);
    expect(await count('0 reloads: 0 structural, 0 method bodies, and 1 failure.')).toBe(1);
    expect(await count('600 reloads: 100 structural, 500 method bodies, and 12 failures.')).toBe(612);
    expect(await count('3 reloads: 1 structural, 2 method bodies.', '511 reloads: 11 structural, 500 method bodies.')).toBe(511);
  });

  it('is undefined when no count line comes before the marker, or the marker does not come', async () => {
    const { connection } = await connected(answering('Reclazz 1.3.0, up 5 minutes.', '3 reloads so far'));
    expect(await askReloadCount(connection, 2000)).toBeUndefined();
    const silent = await connected({ intercept: (cmd) => (cmd.verb === 'DOCTOR' ? { kind: 'ignore' } : undefined) });
    expect(await askReloadCount(silent.connection, 200)).toBeUndefined();
  });
});
