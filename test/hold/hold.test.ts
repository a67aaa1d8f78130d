/** hold/hold.ts: BuildHold against the fake agent, the state machine following each exact receipt. */
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../src/agent/connection.js';
import { BuildHold } from '../../src/hold/hold.js';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { tempDir } from '../support/cli.js';

const open: Array<{ close: () => void } | FakeAgent> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await ('stop' in item ? item.stop() : item.close());
});

async function connect(agent: FakeAgent): Promise<AgentConnection> {
  const { connection } = await AgentConnection.open(agent.port, { timeoutMs: 2000 });
  open.push(connection);
  return connection;
}

describe('BuildHold', () => {
  it('none -> held -> released, again -> held -> left; another owner is refused and holds nothing', async () => {
    const agent = await startFakeAgent({ watchDirs: [tempDir()], captureDelayMs: 0, reloadMs: 0, heartbeatMs: 60_000 });
    open.push(agent);
    const hold = new BuildHold(await connect(agent), 'owner-a', 2000);
    expect(hold.state).toBe('none');
    expect(await hold.acquire({ waitMs: 0 })).toEqual({ kind: 'acquired' });
    expect(hold.state).toBe('held');
    expect(await hold.finish('ok')).toBe('ack');
    expect(hold.state).toBe('released');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the capture releases the agent's hold
    expect(await hold.acquire({ waitMs: 0 })).toEqual({ kind: 'acquired' });
    expect(await hold.finish('failed')).toBe('ack');
    expect(hold.state).toBe('left');
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'owner-a' });

    const other = new BuildHold(await connect(agent), 'owner-b', 2000);
    expect(await other.acquire({ waitMs: 0 })).toMatchObject({ kind: 'busy' });
    expect(other.state).toBe('none');
  });

  it('a closed connection makes the hold unknown without sending', async () => {
    const agent = await startFakeAgent({ watchDirs: [tempDir()], captureDelayMs: 0, reloadMs: 0, heartbeatMs: 60_000 });
    open.push(agent);
    const connection = await connect(agent);
    const hold = new BuildHold(connection, 'owner-a', 2000);
    await hold.acquire({ waitMs: 0 });
    connection.close();
    expect(await hold.finish('ok')).toBe('lost');
    expect(hold.state).toBe('unknown');
    expect(agent.received.filter((r) => r.line.startsWith('BUILD ok'))).toEqual([]);
  });
});
