import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, finalVerify, tempDir, writeClass } from './fixture.js';
import { sleep, waitFor } from '../support/wait.js';

describe('the watcher (autoReload)', () => {
  it('reloads an outside compile on its own after the debounce, with no BUILD or SCAN', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], autoReload: true, watchDebounceMs: 200, watchPollMs: 20 });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    const writtenAt = Date.now();
    await client.next((e) => e.level === 'RELOAD' && e.message.startsWith('Reloaded a.A '));
    expect(Date.now() - writtenAt).toBeGreaterThanOrEqual(200);
    expect(await finalVerify(client, 'a.A', v2)).toMatchObject({ status: 'applied' });
    expect(agent.received.every((r) => r.line.startsWith('VERIFY '))).toBe(true);
    expect(agent.holdLog).toEqual([]);
  });

  it('a failed reload of an outside compile: VERIFY answers failed for those bytes', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    writeClass(dir, 'a/B.class', 'v1');
    const agent = await agentFor({
      watchDirs: [dir],
      autoReload: true,
      watchDebounceMs: 100,
      watchPollMs: 20,
      verifyStatus: (name) => (name === 'a.A' ? 'failed' : undefined),
    });
    const client = await clientOf(agent);
    const a = writeClass(dir, 'a/A.class', 'v2');
    const b = writeClass(dir, 'a/B.class', 'v2');
    expect(await finalVerify(client, 'a.A', a)).toMatchObject({ status: 'failed' });
    expect((await finalVerify(client, 'a.B', b)).status).toBe('applied');
  });

  it('waits until writes stop for the debounce time', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    // Writes 100 ms apart, well inside a debounce of 1 s even on a loaded machine.
    const agent = await agentFor({ watchDirs: [dir], autoReload: true, watchDebounceMs: 1000, watchPollMs: 20 });
    const client = await clientOf(agent);
    for (let i = 2; i < 6; i++) {
      writeClass(dir, 'A.class', `v${i}`);
      await sleep(100);
    }
    expect(agent.captures).toBe(0);
    const last = writeClass(dir, 'A.class', 'v6');
    await client.next((e) => e.level === 'RELOAD');
    expect(agent.captures).toBe(1);
    expect((await finalVerify(client, 'A', last)).status).toBe('applied');
  });

  it('leaves held output alone, and stays idle while paused or still starting', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], autoReload: true, watchDebounceMs: 50, watchPollMs: 10, startingMs: Infinity });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'A.class', 'v2');
    await sleep(150);
    expect(agent.captures).toBe(0);
    // When the watcher starts, the change made while the JVM was starting is reloaded by its start-up dispatch, not a capture.
    agent.finishStarting();
    expect((await finalVerify(client, 'A', v2)).status).toBe('applied');
    expect(agent.captures).toBe(0);
    await client.ask('BUILD started request=s1 owner=o', 'BUILD_ACK', 's1');
    writeClass(dir, 'A.class', 'v3');
    await sleep(150);
    expect(agent.captures).toBe(0);
    await client.ask('RELOAD pause request=p1', 'RELOAD_STATE', 'p1');
    await client.ask('BUILD ok request=k1 owner=o', 'BUILD_ACK', 'k1');
    await waitFor(() => agent.captures === 1, 'capture 1');
    const v4 = writeClass(dir, 'A.class', 'v4');
    await sleep(150);
    expect(agent.captures).toBe(1);
    await client.ask('RELOAD resume request=r1', 'RELOAD_STATE', 'r1');
    expect((await finalVerify(client, 'A', v4)).status).toBe('applied');
  });

  it('identical bytes rewritten create no attempt', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], autoReload: true, watchDebounceMs: 50, watchPollMs: 10 });
    await clientOf(agent);
    writeClass(dir, 'A.class', 'v1');
    await sleep(200);
    expect(agent.captures).toBe(0);
  });

  it('is off by default: a change waits for a BUILD ok, SCAN or resume', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    writeClass(dir, 'A.class', 'v2');
    await sleep(700);
    expect(agent.captures).toBe(0);
  });
});
