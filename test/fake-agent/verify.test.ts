import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, finalVerify, sha, tempDir, writeClass } from './fixture.js';
import { type LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

const VERIFY_FIELDS = [
  'requestId',
  'sessionId',
  'className',
  'expectedSha256',
  'observedSha256',
  'status',
  'source',
  'detail',
  'completedAt',
];

async function ownedBuild(client: LineClient, owner: string, n: number, write: () => void): Promise<void> {
  client.send(`BUILD started request=s${n} owner=${owner}`);
  await client.reply('BUILD_ACK', `s${n}`);
  write();
  client.send(`BUILD ok request=k${n} owner=${owner}`);
  await client.reply('BUILD_ACK', `k${n}`);
}

describe('capture and VERIFY', () => {
  it('a changed class reads running during the reload, then applied with its sha and completedAt', async () => {
    const dir = tempDir();
    const v1 = writeClass(dir, 'com/acme/Outer$Inner.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], captureDelayMs: 30, reloadMs: 150 });
    const client = await clientOf(agent);
    let v2 = '';
    await ownedBuild(client, 'o1', 1, () => (v2 = writeClass(dir, 'com/acme/Outer$Inner.class', 'v2')));

    // Before the capture: never reloaded in this session -> not_observed.
    const before = await client.verify('q0', 'com.acme.Outer$Inner', v2);
    expect(before).toMatchObject({ status: 'not_observed', observedSha256: '', completedAt: '' });

    await waitFor(() => agent.captures === 1, 'capture 1');
    const running = await client.verify('q1', 'com.acme.Outer$Inner', v2);
    expect(Object.keys(running)).toEqual(VERIFY_FIELDS);
    expect(running).toMatchObject({
      requestId: 'q1',
      sessionId: agent.sessionId,
      className: 'com.acme.Outer$Inner',
      expectedSha256: v2,
      observedSha256: v2,
      status: 'running',
      completedAt: '',
    });
    for (const value of Object.values(running)) expect(typeof value).toBe('string');

    await client.next((e) => e.level === 'RELOAD');
    const applied = await client.verify('q2', 'com.acme.Outer$Inner', v2);
    expect(applied).toMatchObject({ status: 'applied', observedSha256: v2, expectedSha256: v2 });
    expect(applied.completedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(applied.source).not.toBe('');

    // Asking for the old bytes now is a mismatch naming the new ones.
    expect(await client.verify('q3', 'com.acme.Outer$Inner', v1)).toMatchObject({
      status: 'mismatch',
      observedSha256: v2,
    });
  });

  it('emits RELOAD events "Reloaded <binary name> (<n>ms)" with names from paths', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/b/C$D.class', 'v1');
    writeClass(dir, 'Top.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    await ownedBuild(client, 'o1', 1, () => {
      writeClass(dir, 'a/b/C$D.class', 'v2');
      writeClass(dir, 'Top.class', 'v2');
      writeClass(dir, 'a/module-info.class', 'ignored');
      writeClass(dir, 'a/b/package-info.class', 'ignored');
      writeClass(dir, 'a/b/readme.txt', 'ignored');
    });
    await client.next((e) => e.level === 'RELOAD');
    await sleep(10);
    const reloads = client
      .events()
      .filter((e) => e.level === 'RELOAD')
      .map((e) => e.message)
      .sort();
    expect(reloads).toHaveLength(2);
    expect(reloads[0]).toMatch(/^Reloaded Top \(\d+ms\)$/);
    expect(reloads[1]).toMatch(/^Reloaded a\.b\.C\$D \(\d+ms\)$/);
  });

  it('until the capture, a class reloaded earlier reads mismatch with its previous sha', async () => {
    const dir = tempDir();
    writeClass(dir, 'p/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], captureDelayMs: 150 });
    const client = await clientOf(agent);
    let v2 = '';
    await ownedBuild(client, 'o1', 1, () => (v2 = writeClass(dir, 'p/A.class', 'v2')));
    await client.next((e) => e.level === 'RELOAD');
    expect((await client.verify('a2', 'p.A', v2)).status).toBe('applied');

    let v3 = '';
    await ownedBuild(client, 'o1', 2, () => (v3 = writeClass(dir, 'p/A.class', 'v3')));
    expect(await client.verify('m1', 'p.A', v3)).toMatchObject({ status: 'mismatch', observedSha256: v2 });
    await waitFor(() => agent.captures === 2, 'capture 2');
    await client.next((e) => e.level === 'RELOAD');
    expect(await client.verify('a3', 'p.A', v3)).toMatchObject({ status: 'applied', observedSha256: v3 });
  });

  it('a held failed build creates no receipt for its bytes', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    client.send('BUILD started request=s1 owner=o');
    await client.reply('BUILD_ACK', 's1');
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('BUILD failed request=f1 owner=o');
    await client.reply('BUILD_ACK', 'f1');
    await sleep(80);
    expect((await client.verify('v', 'A', v2)).status).toBe('not_observed');
  });

  it('identical bytes rebuilt keep the earlier applied receipt', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    let v2 = '';
    await ownedBuild(client, 'o', 1, () => (v2 = writeClass(dir, 'A.class', 'v2')));
    await client.next((e) => e.level === 'RELOAD');
    const first = await client.verify('a1', 'A', v2);
    await ownedBuild(client, 'o', 2, () => writeClass(dir, 'A.class', 'v2'));
    await waitFor(() => agent.captures === 2, 'capture 2');
    await sleep(60);
    expect(await client.verify('a2', 'A', v2)).toEqual({ ...first, requestId: 'a2' });
  });

  it('a class not loaded before the reload is unverified with a detail', async () => {
    const dir = tempDir();
    // A reload long enough for the VERIFY sent at its start to find it running on a loaded machine.
    const agent = await agentFor({ watchDirs: [dir], reloadMs: 2000 });
    const client = await clientOf(agent);
    let fresh = '';
    await ownedBuild(client, 'o', 1, () => (fresh = writeClass(dir, 'n/New.class', 'new')));
    await waitFor(() => agent.captures === 1, 'capture 1');
    expect((await client.verify('r', 'n.New', fresh)).status).toBe('running');
    await client.next((e) => e.message === 'New class detected: n.New');
    const result = await finalVerify(client, 'n.New', fresh);
    expect(result.status).toBe('unverified');
    expect(result.detail).toBe('Class was not uniquely loaded before the batch, or input class names were ambiguous');
    expect(result.completedAt).not.toBe('');
  });

  it('verifyStatus decides the final status: failed', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    writeClass(dir, 'B.class', 'v1');
    const agent = await agentFor({
      watchDirs: [dir],
      verifyStatus: (name) => (name === 'A' ? 'failed' : undefined),
    });
    const client = await clientOf(agent);
    let a = '';
    let b = '';
    await ownedBuild(client, 'o', 1, () => {
      a = writeClass(dir, 'A.class', 'v2');
      b = writeClass(dir, 'B.class', 'v2');
    });
    await client.next((e) => e.level === 'ERROR' && e.message.includes('Reload failed for A'));
    await sleep(5);
    expect((await client.verify('a', 'A', a)).status).toBe('failed');
    expect((await client.verify('b', 'B', b)).status).toBe('applied');
  });

  it('a WARN in a batch (verifyStatus unverified) makes every member unverified', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    writeClass(dir, 'B.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], verifyStatus: (name) => (name === 'A' ? 'unverified' : 'applied') });
    const client = await clientOf(agent);
    let b = '';
    await ownedBuild(client, 'o', 1, () => {
      writeClass(dir, 'A.class', 'v2');
      b = writeClass(dir, 'B.class', 'v2');
    });
    await client.next((e) => e.level === 'WARN');
    await sleep(5);
    const result = await client.verify('b', 'B', b);
    expect(result.status).toBe('unverified');
    expect(result.detail).toContain('warning');
  });

  it('the same binary name in two watched dirs is unverified (duplicate input name)', async () => {
    const one = tempDir();
    const two = tempDir();
    writeClass(one, 'A.class', 'v1');
    writeClass(two, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [one, two] });
    const client = await clientOf(agent);
    let v2 = '';
    await ownedBuild(client, 'o', 1, () => {
      v2 = writeClass(one, 'A.class', 'v2');
      writeClass(two, 'A.class', 'v2');
    });
    await waitFor(() => agent.captures === 1, 'capture 1');
    await sleep(60);
    expect(await client.verify('d', 'A', v2)).toMatchObject({ status: 'unverified' });
  });

  it('SCAN with no hold triggers a capture and is never answered; with a hold it does nothing', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('scan');
    await client.next((e) => e.level === 'RELOAD');
    expect(agent.captures).toBe(1);
    expect((await client.verify('s', 'A', v2)).status).toBe('applied');

    client.send('BUILD started request=s1 owner=o');
    await client.reply('BUILD_ACK', 's1');
    writeClass(dir, 'A.class', 'v3');
    client.send('SCAN');
    await sleep(80);
    expect(agent.captures).toBe(1);
    expect(agent.hold()).toMatchObject({ kind: 'named', files: 1 });
    expect(client.infos().filter((m) => /^[A-Z_]+ /.test(m) && !m.startsWith('VERIFY_RESULT') && !m.startsWith('BUILD_ACK'))).toEqual([]);
  });

  it('a late completion of an earlier attempt never completes a newer attempt with the same bytes', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    // Three captures within the first attempt's reload, the third a second after the first: the
    // first attempt ends a second before the third, time enough to ask in between.
    const agent = await agentFor({ watchDirs: [dir], captureDelayMs: 1, reloadMs: 2000 });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('SCAN');
    await waitFor(() => agent.captures === 1, 'capture 1');
    await sleep(1000);
    writeClass(dir, 'A.class', 'v3');
    client.send('SCAN');
    await waitFor(() => agent.captures === 2, 'capture 2');
    writeClass(dir, 'A.class', 'v2');
    client.send('SCAN');
    await waitFor(() => agent.captures === 3, 'capture 3');
    expect(client.events().filter((e) => e.level === 'RELOAD')).toEqual([]);
    // The first attempt (v2) completes now; the third (also v2) is still running.
    await client.next((e) => e.level === 'RELOAD');
    expect((await client.verify('r', 'A', v2)).status).toBe('running');
    await waitFor(() => client.events().filter((e) => e.level === 'RELOAD').length === 3, 'three reloads');
    expect((await client.verify('a', 'A', v2)).status).toBe('applied');
  });

  it('restart() empties the ledger: earlier receipts read not_observed with a new sessionId', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('SCAN');
    await client.next((e) => e.level === 'RELOAD');
    const before = await client.verify('x', 'A', v2);
    await agent.restart();
    const again = await clientOf(agent);
    const after = await again.verify('y', 'A', v2);
    expect(after.status).toBe('not_observed');
    expect(after.sessionId).not.toBe(before.sessionId);
  });
});

describe('VERIFY validation', () => {
  const good = sha('x');
  it.each([
    ['lower-case verb', `verify t1 a.B ${good}`],
    ['three words', `VERIFY t1 a.B`],
    ['five words', `VERIFY t1 a.B ${good} extra`],
    ['upper-case hex', `VERIFY t1 a.B ${good.toUpperCase()}`],
    ['short hash', `VERIFY t1 a.B ${good.slice(1)}`],
    ['bad token', `VERIFY t.1 a.B ${good}`],
    ['empty segment', `VERIFY t1 a..B ${good}`],
    ['leading digit', `VERIFY t1 a.1B ${good}`],
    ['slash', `VERIFY t1 a/B ${good}`],
    ['module-info', `VERIFY t1 module-info ${good}`],
    ['package-info', `VERIFY t1 a.package-info ${good}`],
    ['format character', `VERIFY t1 a.B\u200b ${good}`],
    ['control character', `VERIFY t1 a.B\u0001 ${good}`],
    ['257 characters', `VERIFY t1 ${'a'.repeat(257)} ${good}`],
  ])('gives no reply: %s', async (_name, line) => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    client.send(line);
    client.send('DOCTOR after');
    await client.reply('DOCTOR_RESULT', 'after');
    expect(client.infos().some((m) => m.startsWith('VERIFY_RESULT'))).toBe(false);
  });

  it('accepts 256 characters, $ and unicode identifiers', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    for (const name of ['a'.repeat(256), 'com.acme.Outer$Inner$1', 'é.Ω_$x', '$', '_']) {
      expect((await client.verify('t', name, good)).status).toBe('not_observed');
    }
  });
});

describe('ledger', () => {
  it('keeps the latest receipts of 512 classes, evicting the least recently updated', async () => {
    const dir = tempDir();
    for (let i = 0; i < 520; i++) writeClass(dir, `p/C${i}.class`, `v1-${i}`);
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    // First batch: C0..C9 only.
    for (let i = 0; i < 10; i++) writeClass(dir, `p/C${i}.class`, `v2-${i}`);
    client.send('SCAN');
    await waitFor(() => agent.captures === 1, 'capture 1');
    await client.next((e) => e.level === 'RELOAD');
    // Second batch: the other 510 classes, and C0 again (updated most recently).
    for (let i = 10; i < 520; i++) writeClass(dir, `p/C${i}.class`, `v2-${i}`);
    writeClass(dir, 'p/C0.class', 'v3-0');
    client.send('SCAN');
    await waitFor(() => agent.captures === 2, 'capture 2');
    await sleep(80);
    // 511 classes from batch 2 + 9 from batch 1 = 520 > 512: 8 of C1..C9 evicted, one kept.
    const early = [];
    for (let i = 1; i < 10; i++) early.push((await client.verify(`e${i}`, `p.C${i}`, sha(`v2-${i}`))).status);
    expect(early.filter((s) => s === 'not_observed')).toHaveLength(8);
    expect(early.filter((s) => s === 'applied')).toHaveLength(1);
    expect((await client.verify('z', 'p.C0', sha('v3-0'))).status).toBe('applied');
    expect((await client.verify('last', 'p.C519', sha('v2-519'))).status).toBe('applied');
  });

  it('ledgerSize bounds the ledger', async () => {
    const dir = tempDir();
    for (let i = 0; i < 3; i++) writeClass(dir, `C${i}.class`, 'a');
    const agent = await agentFor({ watchDirs: [dir], ledgerSize: 2 });
    const client = await clientOf(agent);
    writeClass(dir, 'C0.class', 'b');
    client.send('SCAN');
    await waitFor(() => agent.captures === 1, 'capture 1');
    writeClass(dir, 'C1.class', 'b');
    client.send('SCAN');
    await waitFor(() => agent.captures === 2, 'capture 2');
    writeClass(dir, 'C2.class', 'b');
    client.send('SCAN');
    await waitFor(() => agent.captures === 3, 'capture 3');
    await sleep(60);
    expect((await client.verify('a', 'C0', sha('b'))).status).toBe('not_observed');
    expect((await client.verify('b', 'C1', sha('b'))).status).toBe('applied');
    expect((await client.verify('c', 'C2', sha('b'))).status).toBe('applied');
  });
});
