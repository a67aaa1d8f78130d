import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, doctor, tempDir, writeClass } from './fixture.js';
import { LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

const NO_REPLY = /^(BUILD_ACK|BUILD_REJECTED|VERIFY_RESULT|RELOAD_STATE) /;

/**
 * A delayed port file or listen: long enough that starting the agent and connecting to it
 * (milliseconds) end well inside it on a loaded machine, for the checks of what is not there yet.
 */
const DELAY_MS = 1000;

/** A timer never fires early, but Node dates it from the event loop's clock (whole ms), not Date.now(). */
const TIMER_SLACK_MS = 2;

/**
 * Date.now() at the start of an event-loop turn: a timer set later in this turn is dated from
 * the loop's clock read just before, so no lower bound measured from here can come out short.
 */
async function clockAtTurn(): Promise<number> {
  await sleep(0);
  return Date.now();
}

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
  it('observed mode: DOCTOR says unwired; BUILD, VERIFY, RELOAD get no reply and change nothing; then it is wired', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], startingMs: Infinity });
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

    agent.finishStarting();
    expect(await doctor(client, 'd2')).toMatchObject({ sessionId: agent.sessionId, watcherState: 'watching', verifySupported: true });
    expect(await client.ask('BUILD started request=b2 owner=o', 'BUILD_ACK', 'b2')).toBe('BUILD_ACK b2 started owner=o');
  });

  it('startingMs: it wires itself that long after it started, not before', async () => {
    const startedAt = await clockAtTurn();
    const agent = await agentFor({ startingMs: 300 });
    await waitFor(() => !agent.starting, 'the agent to wire itself');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300 - TIMER_SLACK_MS);
    expect((await doctor(await clientOf(agent), 'd1')).verifySupported).toBe(true);
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
    const startedAt = await clockAtTurn();
    const agent = await agentFor({ portFile, portFileDelayMs: DELAY_MS });
    await clientOf(agent);
    // Connected, and the port file is not there yet (the delay is the window).
    expect(existsSync(portFile)).toBe(false);
    await waitFor(() => existsSync(portFile), 'the port file');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(DELAY_MS - TIMER_SLACK_MS);
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
  });

  it('listenDelayMs: the port file names a port nothing listens on until the delay passed', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const startedAt = await clockAtTurn();
    const agent = await agentFor({ portFile, listenDelayMs: DELAY_MS });
    expect(readFileSync(portFile, 'utf8')).toBe(String(agent.port));
    // Refused within the delay (the window).
    await expect(LineClient.connect(agent.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await agent.listening;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(DELAY_MS - TIMER_SLACK_MS);
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
