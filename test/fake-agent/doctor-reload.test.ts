import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, doctor, tempDir, writeClass } from './fixture.js';
import { sleep, waitFor } from '../support/wait.js';

describe('DOCTOR', () => {
  it('answers the requester with every observed field', async () => {
    const dirs = [tempDir(), tempDir()];
    const agent = await agentFor({ watchDirs: [...dirs, '/definitely/not/here'] });
    const client = await clientOf(agent);
    const other = await clientOf(agent);
    const result = await doctor(client, 'doc-1');
    expect(Object.keys(result)).toEqual([
      'requestId',
      'status',
      'detail',
      'sessionId',
      'agentVersion',
      'pid',
      'javaVersion',
      'vmName',
      'workingDirectory',
      'watcherState',
      'buildHold',
      'watchedDirectoryCount',
      'unwatchableDirectoryCount',
      'watchSampleTruncated',
      'watchedDirectories',
      'buildOwnershipSupported',
      'verifySupported',
      'scanSupported',
      'reloadConfirmed',
    ]);
    expect(result).toMatchObject({
      requestId: 'doc-1',
      status: 'observed',
      sessionId: agent.sessionId,
      agentVersion: '1.4.0-fake',
      pid: String(agent.jvm!.pid),
      workingDirectory: realpathSync(process.cwd()),
      watcherState: 'watching',
      buildHold: 'none',
      // A watched directory missing at start is never watched, and is no registration (agent SpringBootContext, FileWatcher).
      watchedDirectoryCount: 2,
      unwatchableDirectoryCount: 0,
      watchSampleTruncated: false,
      watchedDirectories: [...dirs].sort(),
      buildOwnershipSupported: true,
      verifySupported: true,
      scanSupported: true,
      reloadConfirmed: false,
    });
    for (const key of ['detail', 'javaVersion', 'vmName']) expect(typeof result[key]).toBe('string');
    expect(await other.never((e) => e.message.startsWith('DOCTOR_RESULT'), 30)).toBe(true);
  });

  it('samples at most 8 directories and reports the hold kind without the owner', async () => {
    const root = tempDir();
    const dirs = Array.from({ length: 10 }, (_, i) => {
      const dir = join(root, `d${i}`);
      writeClass(dir, 'A.class', 'a');
      return dir;
    });
    const agent = await agentFor({ watchDirs: dirs });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=secret-owner');
    await client.reply('BUILD_ACK', 'r1');
    const message = await client.ask('DOCTOR d', 'DOCTOR_RESULT', 'd');
    expect(message).not.toContain('secret-owner');
    const result = JSON.parse(message.slice('DOCTOR_RESULT d '.length));
    expect(result).toMatchObject({
      watchedDirectoryCount: 10,
      watchSampleTruncated: true,
      buildHold: 'named',
    });
    expect(result.watchedDirectories).toEqual(dirs.slice(0, 8));
  });

  it('reports a legacy hold', async () => {
    const agent = await agentFor();
    const client = await clientOf(agent);
    client.send('BUILD started');
    await waitFor(() => agent.hold().kind === 'legacy', 'the hold to be legacy');
    expect((await doctor(client, 'd')).buildHold).toBe('legacy');
  });

  it.each([
    ['notReady', { notReady: true }],
    ['old agent', { agentVersion: null }],
  ] as const)('%s: DOCTOR, VERIFY and RELOAD get no reply', async (_name, options) => {
    const agent = await agentFor(options);
    const client = await clientOf(agent);
    client.send('DOCTOR d1');
    client.send(`VERIFY v1 a.B ${'0'.repeat(64)}`);
    client.send('RELOAD status request=r1');
    client.send('PENDING');
    await client.next((e) => e.message === 'Nothing from this session needs a restart.');
    expect(await client.never((e) => /^(DOCTOR_RESULT|VERIFY_RESULT|RELOAD_STATE) /.test(e.message), 50)).toBe(true);
  });
});

describe('RELOAD', () => {
  it('pause, status and resume answer RELOAD_STATE to the requester', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    expect(await client.ask('RELOAD pause request=p1', 'RELOAD_STATE', 'p1')).toBe(
      'RELOAD_STATE p1 pause paused=true pendingClasses=0 pendingActions=0 buildHold=none',
    );
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('SCAN'); // cannot bypass pause
    await sleep(60);
    expect(await client.ask('RELOAD status request=s1', 'RELOAD_STATE', 's1')).toBe(
      'RELOAD_STATE s1 status paused=true pendingClasses=1 pendingActions=0 buildHold=none',
    );
    expect(agent.captures).toBe(0);
    expect(await client.ask('RELOAD resume request=r1', 'RELOAD_STATE', 'r1')).toBe(
      'RELOAD_STATE r1 resume paused=false pendingClasses=1 pendingActions=0 buildHold=none',
    );
    // Resume schedules a scan.
    await client.next((e) => e.level === 'RELOAD');
    expect((await client.verify('v', 'A', v2)).status).toBe('applied');
  });

  it('resume never releases a build hold; BUILD ok still releases it while paused', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    client.send('BUILD started request=b1 owner=o');
    await client.reply('BUILD_ACK', 'b1');
    await client.ask('RELOAD pause request=p1', 'RELOAD_STATE', 'p1');
    expect(await client.ask('RELOAD resume request=r1', 'RELOAD_STATE', 'r1')).toMatch(/ buildHold=named$/);
    await client.ask('RELOAD pause request=p2', 'RELOAD_STATE', 'p2');
    writeClass(dir, 'A.class', 'v2');
    client.send('BUILD ok request=b2 owner=o');
    await client.reply('BUILD_ACK', 'b2');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to be none');
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toBe(
      'RELOAD_STATE s status paused=true pendingClasses=1 pendingActions=0 buildHold=none',
    );
  });

  it.each(['RELOAD Pause request=r1', 'reload pause request=r1', 'RELOAD stop request=r1', 'RELOAD pause', 'RELOAD pause owner=r1', 'RELOAD pause request=r!'])(
    'ignores %s',
    async (line) => {
      const agent = await agentFor();
      const client = await clientOf(agent);
      client.send(line);
      client.send('DOCTOR after');
      await client.reply('DOCTOR_RESULT', 'after');
      expect(client.infos().some((m) => m.startsWith('RELOAD_STATE'))).toBe(false);
    },
  );
});

describe('PENDING, HEALTH, DIAGNOSE', () => {
  it('broadcast INFO lines to every client, case-insensitively', async () => {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const a = await clientOf(agent);
    const b = await clientOf(agent);
    writeClass(dir, 'A.class', 'v2');
    a.send('pending');
    a.send('Health');
    a.send('SCAN');
    await b.next((e) => e.level === 'RELOAD');
    a.send('diagnose A');
    a.send('DIAGNOSE Missing');
    a.send('DIAGNOSE bad..name');
    for (const c of [a, b]) {
      await c.next((e) => e.message.startsWith('Either the build has not run'));
      const infos = c.infos();
      expect(infos).toContain('Automatic reload: paused=false pendingClasses=1 pendingActions=0 buildHold=none');
      expect(infos).toContain('Nothing from this session needs a restart.');
      expect(infos.some((m) => /^Reclazz 1\.4\.0-fake, up \d+ seconds?\.$/.test(m))).toBe(true);
      expect(infos).toContain('1 directory watched, holding 1 file.');
      expect(infos).toContain('Reclazz diagnosis for A');
      expect(infos.some((m) => m.startsWith(`Compiled file: ${join(dir, 'A.class')} (last built `))).toBe(true);
      expect(infos.some((m) => /^Last attempt \d+s ago: reloaded \(reloaded in \d+ms\), from /.test(m))).toBe(true);
      expect(infos).toContain('Reclazz diagnosis for Missing');
      expect(infos).toContain('No compiled .class file for this name under any watched directory.');
      expect(infos.some((m) => m.includes('bad..name'))).toBe(false);
    }
  });
});
