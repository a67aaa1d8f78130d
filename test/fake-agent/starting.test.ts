import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, doctor, tempDir, writeClass } from './fixture.js';
import { LineClient, sleep, until } from './line-client.js';

const NO_REPLY = /^(BUILD_ACK|BUILD_REJECTED|VERIFY_RESULT|RELOAD_STATE) /;

/** Send BUILD, VERIFY, RELOAD and SCAN, then PENDING as a marker that they were processed. */
async function askAllButDoctor(client: LineClient): Promise<void> {
  client.send('BUILD started request=b1 owner=o');
  client.send(`VERIFY v1 A ${'0'.repeat(64)}`);
  client.send('RELOAD pause request=r1');
  client.send('SCAN');
  client.send('PENDING');
  await client.next((e) => e.message === 'Nothing from this session needs a restart.');
}

describe('still starting', () => {
  it('observed mode: DOCTOR says unwired; BUILD, VERIFY, RELOAD get no reply and change nothing; then it wires itself', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const startedAt = Date.now();
    const agent = await agentFor({ watchDirs: [dir], startingMs: 800, verifyWiredMs: Infinity });
    const client = await clientOf(agent);
    expect(agent.starting).toBe(true);
    const early = await doctor(client, 'd1');
    expect(early).toMatchObject({
      status: 'observed',
      sessionId: '',
      watcherState: 'unavailable',
      buildHold: 'unavailable',
      watchedDirectoryCount: 0,
      watchedDirectories: [],
      watchSampleTruncated: false,
      buildOwnershipSupported: false,
      verifySupported: false,
      scanSupported: false,
      reloadConfirmed: false,
      pid: String(agent.jvm!.pid),
    });
    writeClass(dir, 'A.class', 'v2');
    await askAllButDoctor(client);
    expect(await client.never((e) => NO_REPLY.test(e.message), 50)).toBe(true);
    expect(agent.hold().kind).toBe('none');
    expect(agent.captures).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(800);

    await until(() => !agent.starting, 2000, 'wiring');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(790);
    expect(await doctor(client, 'd2')).toMatchObject({ sessionId: agent.sessionId, watcherState: 'watching', verifySupported: true });
    expect(await client.ask('BUILD started request=b2 owner=o', 'BUILD_ACK', 'b2')).toBe('BUILD_ACK b2 started owner=o');
  });

  it('silent mode: DOCTOR gets no answer either', async () => {
    const agent = await agentFor({ startingMs: Infinity, startingDoctor: 'silent' });
    const client = await clientOf(agent);
    client.send('DOCTOR d1');
    await askAllButDoctor(client);
    expect(await client.never((e) => e.message.startsWith('DOCTOR_RESULT') || NO_REPLY.test(e.message), 50)).toBe(true);
  });

  it('Infinity lasts until finishStarting(); restart() starts again', async () => {
    const agent = await agentFor({ startingMs: Infinity });
    const client = await clientOf(agent);
    await sleep(50);
    expect((await doctor(client, 'd1')).verifySupported).toBe(false);
    agent.finishStarting();
    expect(agent.starting).toBe(false);
    expect((await doctor(client, 'd2')).verifySupported).toBe(true);
    await agent.restart();
    expect(agent.starting).toBe(true);
    expect((await doctor(await clientOf(agent), 'd3')).sessionId).toBe('');
  });

  it('notReady is the same as starting forever with a silent DOCTOR', async () => {
    const agent = await agentFor({ notReady: true });
    expect(agent.starting).toBe(true);
    const client = await clientOf(agent);
    client.send('DOCTOR d1');
    client.send('HEALTH');
    await client.next((e) => e.message.startsWith('Reclazz '));
    expect(await client.never((e) => e.message.startsWith('DOCTOR_RESULT'), 30)).toBe(true);
  });
});

describe('a port file that comes late', () => {
  it('portFileDelayMs: the socket listens at once, the port file appears after the delay', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const agent = await agentFor({ portFile, portFileDelayMs: 300 });
    const startedAt = Date.now();
    expect(existsSync(portFile)).toBe(false);
    await clientOf(agent);
    await until(() => existsSync(portFile), 2000, 'the port file');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(280);
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
  });

  it('listenDelayMs: the port file names a port nothing listens on until the delay passed', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const agent = await agentFor({ portFile, listenDelayMs: 300 });
    const startedAt = Date.now();
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
    await expect(LineClient.connect(agent.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await agent.listening;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(280);
    expect((await clientOf(agent)).lines).toHaveLength(1);
  });

  it('stop() before the delayed listen: nothing listens later and the port file is gone', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const agent = await agentFor({ portFile, listenDelayMs: 100 });
    await agent.stop();
    await expect(agent.listening).rejects.toThrow('stopped before it listened');
    await sleep(150);
    expect(existsSync(portFile)).toBe(false);
    await expect(LineClient.connect(agent.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
