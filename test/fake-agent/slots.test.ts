import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, onCleanup } from './fixture.js';
import { LineClient } from './line-client.js';
import { waitFor } from '../support/wait.js';

async function refusedConnection(port: number): Promise<LineClient> {
  const client = await LineClient.connect(port);
  onCleanup(() => client.close());
  await client.closed;
  return client;
}

describe('lingering slots', () => {
  it('a closed client keeps its slot until the second write after its close fails; meanwhile a 6th is refused', async () => {
    const agent = await agentFor({ lingeringSlots: true, heartbeatMs: 150 });
    const clients = [];
    for (let i = 0; i < 5; i++) clients.push(await clientOf(agent));
    const [gone, watcher] = clients;
    await watcher.next((e) => e.level === 'HEARTBEAT');
    gone.close();
    await waitFor(() => agent.clientCount() === 4, 'the close');
    expect(agent.slotsInUse()).toBe(5);
    expect(agent.clients().find((c) => c.id === 1)).toMatchObject({ open: false });

    const refused = await refusedConnection(agent.port);
    expect(refused.rawText).toBe('');

    // The first heartbeat after the close is written "successfully"; the second fails.
    await watcher.next((e) => e.level === 'HEARTBEAT');
    expect(agent.slotsInUse()).toBe(5);
    expect((await refusedConnection(agent.port)).rawText).toBe('');
    await watcher.next((e) => e.level === 'HEARTBEAT');
    await waitFor(() => agent.slotsInUse() === 4, 'the slot to free');
    const sixth = await clientOf(agent);
    expect(sixth.lines).toHaveLength(1);
  });

  it('any broadcast counts as a write, not only heartbeats', async () => {
    const agent = await agentFor({ lingeringSlots: true, maxClients: 1 });
    const first = await clientOf(agent);
    first.close();
    await waitFor(() => agent.clientCount() === 0, '0 clients');
    expect((await refusedConnection(agent.port)).rawText).toBe('');
    agent.broadcast('INFO', 'one');
    expect(agent.slotsInUse()).toBe(1);
    agent.broadcast('INFO', 'two');
    expect(agent.slotsInUse()).toBe(0);
    expect((await clientOf(agent)).lines).toHaveLength(1);
  });

  it('without lingeringSlots a slot frees when its client closes', async () => {
    const agent = await agentFor({ maxClients: 1 });
    (await clientOf(agent)).close();
    await waitFor(() => agent.slotsInUse() === 0, '0 slots in use');
    expect((await clientOf(agent)).lines).toHaveLength(1);
  });
});
