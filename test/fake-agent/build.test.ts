import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/fake-agent/index.js';
import { agentFor, clientOf, tempDir, writeClass } from './fixture.js';
import { type LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';


/** Wait for whichever receipt (ACK or REJECTED) for `req` comes. */
async function receipt(client: LineClient, line: string, req: string): Promise<string> {
  client.send(line);
  const e = await client.next(
    (x) => x.level === 'INFO' && /^BUILD_(ACK|REJECTED) /.test(x.message) && x.message.split(' ')[1] === req,
  );
  return e.message;
}

describe('BUILD grammar', () => {
  it('parses the verb and state case-insensitively and options in either order', () => {
    expect(parseCommand('build STARTED owner=o request=r')).toEqual({
      kind: 'build',
      state: 'started',
      request: 'r',
      owner: 'o',
    });
    expect(parseCommand('Build Ok')).toEqual({ kind: 'build', state: 'ok' });
  });

  it.each([
    ['owner= without request=', 'BUILD started owner=o1'],
    ['duplicate request=', 'BUILD started request=r1 request=r2'],
    ['duplicate owner=', 'BUILD started request=r1 owner=a owner=b'],
    ['three options', 'BUILD started request=r1 owner=o1 owner=o1'],
    ['unknown option', 'BUILD started request=r1 extra=1'],
    ['upper-case option key', 'BUILD started REQUEST=r1'],
    ['empty token', 'BUILD started request='],
    ['token with a dot', 'BUILD started request=r.1'],
    ['token of 65 chars', `BUILD started request=${'a'.repeat(65)}`],
    ['bare word option', 'BUILD started request'],
    ['unknown state', 'BUILD done request=r1'],
    ['no state', 'BUILD'],
    ['double space', 'BUILD  started request=r1'],
    ['trailing space', 'BUILD started request=r1 '],
  ])('ignores the whole line: %s', async (_name, line) => {
    const dir = tempDir();
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    client.send(line);
    client.send('DOCTOR after');
    await client.reply('DOCTOR_RESULT', 'after');
    expect(client.infos().filter((m) => !m.startsWith('DOCTOR_RESULT'))).toEqual([]);
    expect(agent.hold().kind).toBe('none');
    expect(agent.holdLog).toEqual([]);
  });

  it('accepts a 64-char token and reports the state in lower case, owner echoed as sent', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    const req = 'R'.repeat(64);
    expect(await receipt(client, `build STARTED owner=Own-er_1 request=${req}`, req)).toBe(
      `BUILD_ACK ${req} started owner=Own-er_1`,
    );
  });

  it('answers only when request= is given, and only to the requester', async () => {
    const dir = tempDir();
    const agent = await agentFor({ watchDirs: [dir] });
    const a = await clientOf(agent);
    const b = await clientOf(agent);
    a.send('BUILD started');
    await waitFor(() => agent.hold().kind === 'legacy', 'the hold to be legacy');
    expect(await receipt(a, 'BUILD started request=r2', 'r2')).toBe('BUILD_ACK r2 started');
    await b.next((e) => e.message.startsWith('Build started; holding'));
    expect(await b.never((e) => e.message.startsWith('BUILD_'), 30)).toBe(true);
    expect(a.infos().filter((m) => m.startsWith('BUILD_'))).toEqual(['BUILD_ACK r2 started']);
  });

  it('broadcasts "Build started; holding N class files until BUILD ok" before the ACK', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    writeClass(dir, 'a/A.class', 'v2');
    writeClass(dir, 'a/B.class', 'new');
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=o1', 'r1');
    expect(client.infos()).toEqual([
      'Build started; holding 2 class files until BUILD ok',
      'BUILD_ACK r1 started owner=o1',
    ]);
    await receipt(client, 'BUILD failed request=r2 owner=o1', 'r2');
    expect(client.infos().slice(2)).toEqual([
      'Build failed; holding 2 class files until BUILD ok',
      'BUILD_ACK r2 failed owner=o1',
    ]);
  });
});

describe('hold rules', () => {
  it('started acquires a free named hold; another owner is rejected at every state', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    expect(await receipt(client, 'BUILD started request=r1 owner=alice', 'r1')).toBe('BUILD_ACK r1 started owner=alice');
    expect(agent.hold()).toEqual({ kind: 'named', owner: 'alice', files: 0 });
    expect(await receipt(client, 'BUILD started request=r2 owner=bob', 'r2')).toBe('BUILD_REJECTED r2 started owner=bob');
    expect(await receipt(client, 'BUILD ok request=r3 owner=bob', 'r3')).toBe('BUILD_REJECTED r3 ok owner=bob');
    expect(await receipt(client, 'BUILD failed request=r4 owner=bob', 'r4')).toBe('BUILD_REJECTED r4 failed owner=bob');
    expect(await receipt(client, 'BUILD ok request=r5 owner=ALICE', 'r5')).toBe('BUILD_REJECTED r5 ok owner=ALICE');
    expect(agent.hold()).toEqual({ kind: 'named', owner: 'alice', files: 0 });
    expect(agent.holdLog.map((h) => [h.event, h.owner])).toEqual([
      ['acquired', 'alice'],
      ['rejected', 'bob'],
      ['rejected', 'bob'],
      ['rejected', 'bob'],
      ['rejected', 'ALICE'],
    ]);
  });

  it('rejects unowned commands while a named hold exists, without an owner suffix', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    expect(await receipt(client, 'BUILD started request=r2', 'r2')).toBe('BUILD_REJECTED r2 started');
    expect(await receipt(client, 'BUILD ok request=r3', 'r3')).toBe('BUILD_REJECTED r3 ok');
    client.send('BUILD ok'); // unowned without request: no reply, no change
    await sleep(60);
    expect(agent.hold().kind).toBe('named');
    expect(agent.captures).toBe(0);
  });

  it('the same owner may send started again', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    expect(await receipt(client, 'BUILD started request=r2 owner=alice', 'r2')).toBe('BUILD_ACK r2 started owner=alice');
    expect(agent.holdLog.map((h) => h.event)).toEqual(['acquired', 'reacquired']);
  });

  it('named ok or failed with no hold is rejected', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    expect(await receipt(client, 'BUILD ok request=r1 owner=alice', 'r1')).toBe('BUILD_REJECTED r1 ok owner=alice');
    expect(await receipt(client, 'BUILD failed request=r2 owner=alice', 'r2')).toBe('BUILD_REJECTED r2 failed owner=alice');
    expect(agent.hold().kind).toBe('none');
  });

  it('failed keeps the hold and its owner; files stay held', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    writeClass(dir, 'A.class', 'v2');
    expect(await receipt(client, 'BUILD failed request=r2 owner=alice', 'r2')).toBe('BUILD_ACK r2 failed owner=alice');
    await sleep(60);
    expect(agent.hold()).toEqual({ kind: 'named', owner: 'alice', files: 1 });
    expect(agent.captures).toBe(0);
    expect(await receipt(client, 'BUILD started request=r3 owner=bob', 'r3')).toBe('BUILD_REJECTED r3 started owner=bob');
    // The failed build's files join the next successful build.
    await receipt(client, 'BUILD started request=r4 owner=alice', 'r4');
    writeClass(dir, 'B.class', 'new');
    await receipt(client, 'BUILD ok request=r5 owner=alice', 'r5');
    await waitFor(() => agent.captures === 1, 'capture 1');
    expect(agent.hold()).toEqual({ kind: 'none', files: 0 });
  });

  it('ok schedules the capture; the hold is released only after it runs, rejecting others until then', async () => {
    const agent = await agentFor({ captureDelayMs: 150 });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    expect(await receipt(client, 'BUILD ok request=r2 owner=alice', 'r2')).toBe('BUILD_ACK r2 ok owner=alice');
    expect(agent.hold().kind).toBe('named');
    expect(await receipt(client, 'BUILD started request=r3 owner=bob', 'r3')).toBe('BUILD_REJECTED r3 started owner=bob');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to be none');
    expect(agent.captures).toBe(1);
    expect(agent.holdLog.map((h) => h.event)).toEqual(['acquired', 'capture-scheduled', 'rejected', 'released']);
    const released = agent.holdLog[3];
    expect(released.owner).toBe('alice');
    // The capture delay, dated by the agent itself (its timer counts from its event loop's clock, a few ms earlier at most).
    expect(released.atMs - agent.holdLog[1].atMs).toBeGreaterThanOrEqual(140);
    await client.next((e) => e.message.startsWith('Build hold released'));
    expect(await receipt(client, 'BUILD started request=r4 owner=bob', 'r4')).toBe('BUILD_ACK r4 started owner=bob');
  });

  it('a newer started or failed cancels a pending capture', async () => {
    const agent = await agentFor({ captureDelayMs: 60 });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    await receipt(client, 'BUILD ok request=r2 owner=alice', 'r2');
    await receipt(client, 'BUILD started request=r3 owner=alice', 'r3');
    await sleep(120);
    expect(agent.captures).toBe(0);
    expect(agent.hold().kind).toBe('named');
    await receipt(client, 'BUILD ok request=r4 owner=alice', 'r4');
    await receipt(client, 'BUILD failed request=r5 owner=alice', 'r5');
    await sleep(120);
    expect(agent.captures).toBe(0);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'alice' });
  });

  it('a failed capture (unreadable output) keeps the build held', async () => {
    const dir = tempDir();
    let failures = 1;
    const agent = await agentFor({ watchDirs: [dir], failCapture: () => (failures-- > 0 ? 'EACCES: permission denied, open locked/A.class' : undefined) });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    writeClass(dir, 'locked/A.class', 'x');
    await receipt(client, 'BUILD ok request=r2 owner=alice', 'r2');
    await client.next((e) => e.level === 'ERROR' && e.message.startsWith('Capture failed'));
    expect(agent.hold().kind).toBe('named');
    expect(agent.holdLog.map((h) => h.event)).toEqual(['acquired', 'capture-scheduled', 'capture-failed']);
  });
});

describe('a held class file the capture cannot read (agent ReloadQueue.acceptBuild, capture)', () => {
  it('keeps the hold with its owner after an acknowledged ok, every later ok failing, until the file exists again', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Foo.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    writeClass(dir, 'a/Foo.class', 'v2');
    const inner = join(dir, 'a', 'Foo$1.class');
    writeClass(dir, 'a/Foo$1.class', 'v1');
    await receipt(client, 'BUILD failed request=r2 owner=alice', 'r2');
    // The fix no longer has the inner class: the build deletes it, which the agent ignores.
    rmSync(inner);
    const error = `Failed to read class file ${inner}: NoSuchFileException: ${inner}`;
    for (const n of [3, 4]) {
      expect(await receipt(client, `BUILD ok request=r${n} owner=alice`, `r${n}`)).toBe(`BUILD_ACK r${n} ok owner=alice`);
      await client.next((e) => e.level === 'ERROR' && e.message === error);
      expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'alice' });
    }
    expect(agent.captures).toBe(0);
    writeClass(dir, 'a/Foo$1.class', 'v2');
    await receipt(client, 'BUILD ok request=r5 owner=alice', 'r5');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to be released');
    expect(agent.holdLog.map((h) => h.event)).toEqual([
      'acquired',
      'failed',
      'capture-scheduled',
      'capture-failed',
      'capture-scheduled',
      'capture-failed',
      'capture-scheduled',
      'released',
    ]);
  });
});

describe('legacy (unowned) builds', () => {
  it('an unowned started takes a legacy hold; an unowned ok releases it after the capture', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    expect(await receipt(client, 'BUILD started request=r1', 'r1')).toBe('BUILD_ACK r1 started');
    expect(agent.hold()).toEqual({ kind: 'legacy', files: 0 });
    expect(await receipt(client, 'BUILD started request=r2', 'r2')).toBe('BUILD_ACK r2 started');
    expect(await receipt(client, 'BUILD ok request=r3', 'r3')).toBe('BUILD_ACK r3 ok');
    expect(agent.hold().kind).toBe('legacy');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to be none');
    expect(agent.holdLog.map((h) => h.event)).toEqual(['acquired', 'reacquired', 'capture-scheduled', 'released']);
  });

  it('works without request= (no receipts)', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    client.send('BUILD started');
    await waitFor(() => agent.hold().kind === 'legacy', 'the hold to be legacy');
    client.send('build OK');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to be none');
    expect(client.infos().filter((m) => m.startsWith('BUILD_'))).toEqual([]);
  });

  it('a named command cannot take a legacy hold', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1', 'r1');
    expect(await receipt(client, 'BUILD started request=r2 owner=alice', 'r2')).toBe('BUILD_REJECTED r2 started owner=alice');
    expect(await receipt(client, 'BUILD ok request=r3 owner=alice', 'r3')).toBe('BUILD_REJECTED r3 ok owner=alice');
    expect(agent.hold()).toEqual({ kind: 'legacy', files: 0 });
  });

  it('an unowned failed keeps the legacy hold', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1', 'r1');
    expect(await receipt(client, 'BUILD failed request=r2', 'r2')).toBe('BUILD_ACK r2 failed');
    await sleep(60);
    expect(agent.hold().kind).toBe('legacy');
  });

  it('an unowned ok with no hold is acknowledged and schedules a capture', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    expect(await receipt(client, 'BUILD ok request=r1', 'r1')).toBe('BUILD_ACK r1 ok');
    await waitFor(() => agent.captures === 1, 'capture 1');
    expect(agent.hold().kind).toBe('none');
  });
});

describe('not ready, old agent, hold warning', () => {
  it('notReady: BUILD gets no reply and changes nothing', async () => {
    const agent = await agentFor({ notReady: true });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o1');
    client.send('BUILD started request=r2');
    client.send('HEALTH');
    await client.next((e) => e.message.startsWith('Reclazz '));
    expect(await client.never((e) => e.message.startsWith('BUILD_'), 50)).toBe(true);
    expect(agent.hold().kind).toBe('none');
    expect(agent.holdLog).toEqual([]);
  });

  it('old agent (agentVersion null): owner is neither enforced nor echoed', async () => {
    const agent = await agentFor({ agentVersion: null });
    const client = await clientOf(agent);
    expect(await receipt(client, 'BUILD started request=r1 owner=alice', 'r1')).toBe('BUILD_ACK r1 started');
    expect(await receipt(client, 'BUILD started request=r2 owner=bob', 'r2')).toBe('BUILD_ACK r2 started');
    expect(agent.hold()).toEqual({ kind: 'legacy', files: 0 });
  });

  it('warns once when a hold sees no result for holdWarnMs', async () => {
    const agent = await agentFor({ holdWarnMs: 50 });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    const warn = await client.next((e) => e.level === 'WARN');
    expect(warn.message).toMatch(/^Build hold active for .* without a BUILD result/);
    expect(await client.never((e) => e.level === 'WARN' && e.raw !== warn.raw, 120)).toBe(true);
  });

  it('HEALTH reports the hold with its start time while held', async () => {
    const dir = tempDir();
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    await receipt(client, 'BUILD started request=r1 owner=alice', 'r1');
    writeClass(dir, 'x/Y.class', 'y');
    client.send('health');
    const held = await client.next((e) => e.message.startsWith('Build holding'));
    expect(held.message).toMatch(
      /^Build holding 1 class files since \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z; waiting for BUILD ok$/,
    );
    expect(held.message).not.toContain('alice');
  });
});
