/**
 * The fake agent against what the real agent's source shows (GitHub onurkat/reclazz): DOCTOR's
 * sample of the watcher's registrations (watcher/FileWatcher.java doctorEvidence), the start-up
 * wiring order (agent/ReclazzAgent.java initialize), the watcher's late start, its start-up
 * dispatch (FileWatcher.registerDirectories, dispatchClassesChangedDuringStartup; held by
 * ReloadQueue.submitClassBatch), its end, and a BUILD ok that waits for it (FileWatcher.startWatching
 * and scanNow, agent/ReloadQueue.java acceptBuild),
 * excludePatterns (config/AgentConfig.java), the pause (ReloadQueue.healthLine and acceptBuild),
 * and the stand-in JVM's command line (what the Maven plugin's `prepare-agent` writes).
 */
import { mkdirSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, doctor, finalVerify, tempDir, writeClass } from './fixture.js';
import { waitFor } from '../support/wait.js';

const SCAN_FAILED =
  'Accepting build output failed: IllegalStateException: Build scan did not finish; build remains held (caused by TimeoutException)';

/** A Maven module: target/classes with `packages` package folders, src/main/resources with `resources` folders. */
function mavenModule(packages: number, resources: number): { dir: string; classes: string; resources: string } {
  const dir = tempDir();
  const classes = join(dir, 'target', 'classes');
  for (let i = 0; i < packages; i++) writeClass(classes, `com/acme/p${i}/A.class`, `a${i}`);
  const res = join(dir, 'src', 'main', 'resources');
  for (let i = 0; i < resources; i++) mkdirSync(join(res, `r${i}`), { recursive: true });
  return { dir, classes, resources: res };
}

describe("DOCTOR's watched directories: a sample of the watcher's registrations", () => {
  it('counts every folder under the root and its resource tree; lists the first 8 in String order', async () => {
    const m = mavenModule(3, 7);
    const agent = await agentFor({ watchDirs: [m.classes] });
    const result = await doctor(await clientOf(agent), 'd');
    const registered = [
      m.classes,
      join(m.classes, 'com'),
      join(m.classes, 'com', 'acme'),
      ...[0, 1, 2].map((i) => join(m.classes, 'com', 'acme', `p${i}`)),
      m.resources,
      ...[0, 1, 2, 3, 4, 5, 6].map((i) => join(m.resources, `r${i}`)),
    ].sort();
    expect(result).toMatchObject({
      watcherState: 'watching',
      watchedDirectoryCount: 14,
      watchSampleTruncated: true,
      // src/main/resources sorts before target/classes: the class root itself is not in the sample.
      watchedDirectories: registered.slice(0, 8),
    });
    expect(result.watchedDirectories).not.toContain(m.classes);
  });

  it('a small project: the whole set, untruncated', async () => {
    const m = mavenModule(1, 0);
    const result = await doctor(await clientOf(await agentFor({ watchDirs: [m.classes] })), 'd');
    expect(result).toMatchObject({
      watchedDirectoryCount: 4,
      watchSampleTruncated: false,
      watchedDirectories: [m.classes, join(m.classes, 'com'), join(m.classes, 'com', 'acme'), join(m.classes, 'com', 'acme', 'p0')],
    });
  });

  it('a folder the build creates later is registered; a watched directory missing at start never is', async () => {
    const m = mavenModule(1, 0);
    const late = join(tempDir(), 'late');
    const agent = await agentFor({ watchDirs: [m.classes, late] });
    writeClass(m.classes, 'org/new/B.class', 'b');
    writeClass(late, 'x/C.class', 'c');
    const client = await clientOf(agent);
    const result = await doctor(client, 'd');
    expect(result.watchedDirectories).toContain(join(m.classes, 'org', 'new'));
    expect((result.watchedDirectories as string[]).some((dir) => dir.startsWith(late))).toBe(false);
    client.send('BUILD ok request=k');
    await client.reply('BUILD_ACK', 'k');
    await waitFor(() => agent.captures === 1, 'the capture');
    expect((await client.verify('v', 'x.C', '0'.repeat(64))).status).toBe('not_observed');
  });
});

describe('start-up wiring order', () => {
  it('VERIFY is wired before ownership: DOCTOR shows the session but no hold view; BUILD and RELOAD get no reply', async () => {
    const dir = tempDir();
    const v1 = writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], startingMs: 600, verifyWiredMs: 0 });
    const client = await clientOf(agent);
    expect(await doctor(client, 'd1')).toMatchObject({
      sessionId: agent.sessionId,
      verifySupported: true,
      scanSupported: true,
      buildOwnershipSupported: false,
      buildHold: 'unavailable',
      watcherState: 'unavailable',
      watchedDirectoryCount: 0,
    });
    expect((await client.verify('v1', 'a.A', v1)).status).toBe('not_observed');
    client.send('DIAGNOSE a.A');
    await client.next((e) => e.message === 'Reclazz diagnosis for a.A');
    client.send('BUILD started request=b1 owner=o');
    client.send('RELOAD status request=r1');
    client.send('DOCTOR marker');
    await client.reply('DOCTOR_RESULT', 'marker');
    expect(client.infos().some((m) => /^(BUILD_ACK|BUILD_REJECTED|RELOAD_STATE) /.test(m))).toBe(false);
    await waitFor(() => !agent.starting, 'the agent to wire itself');
    expect(await doctor(client, 'd2')).toMatchObject({ buildOwnershipSupported: true, buildHold: 'none', watcherState: 'watching' });
  });
});

describe('the watcher starts late (startupDelaySec)', () => {
  it('nothing registered while starting; a BUILD ok then fails after the scan timeout and the hold stays named', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], watcherStartMs: Infinity, scanTimeoutMs: 200 });
    const client = await clientOf(agent);
    expect(await doctor(client, 'd1')).toMatchObject({ watcherState: 'starting', buildOwnershipSupported: true, watchedDirectoryCount: 0 });
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    expect(await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2')).toBe('BUILD_ACK b2 ok owner=o');
    expect((await client.next((e) => e.level === 'ERROR')).message).toBe(SCAN_FAILED);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'o' });
    expect(agent.holdLog.map((e) => e.event)).toEqual(['acquired', 'capture-scheduled', 'capture-failed']);
    // When the watcher starts, the held change stays pending: only a later ok of the owner captures it.
    agent.startWatching();
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toBe(
      'RELOAD_STATE s status paused=false pendingClasses=1 pendingActions=0 buildHold=named',
    );
    expect((await client.verify('v', 'a.A', v2)).status).toBe('not_observed');
    await client.ask('BUILD ok request=b3 owner=o', 'BUILD_ACK', 'b3');
    expect((await finalVerify(client, 'a.A', v2)).status).toBe('applied');
    expect(agent.hold().kind).toBe('none');
  });

  it('at its start it reloads what changed since the JVM started only by a later mtime: a copy that kept an older one is its baseline, never reloaded', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Kept.class', 'v1');
    writeClass(dir, 'a/Later.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], watcherStartMs: Infinity });
    const client = await clientOf(agent);
    // While the watcher waits: `cp -p` of new bytes with the mtime of an hour ago, and a plain write.
    const kept = writeClass(dir, 'a/Kept.class', 'v2');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, 'a', 'Kept.class'), hourAgo, hourAgo);
    const later = writeClass(dir, 'a/Later.class', 'v2');
    agent.startWatching();
    expect((await finalVerify(client, 'a.Later', later)).status).toBe('applied');
    expect((await client.verify('v', 'a.Kept', kept)).status).toBe('not_observed');
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toBe(
      'RELOAD_STATE s status paused=false pendingClasses=0 pendingActions=0 buildHold=none',
    );
  });

  it('a BUILD ok whose scan waits for a watcher that starts in time captures', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], watcherStartMs: 300, scanTimeoutMs: 5000 });
    const client = await clientOf(agent);
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2');
    expect(agent.watching).toBe(false);
    expect((await finalVerify(client, 'a.A', v2, 3000)).status).toBe('applied');
    expect(agent.hold().kind).toBe('none');
    expect(client.events().some((e) => e.level === 'ERROR')).toBe(false);
  });

  it('without a hold, what changed while starting is reloaded when the watcher starts', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], watcherStartMs: 300 });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    expect((await client.verify('v1', 'a.A', v2)).status).toBe('not_observed');
    await client.next((e) => e.message === 'Watching 1 directory', 2000);
    expect((await client.next((e) => e.message.includes('changed while the JVM was starting'))).message).toBe(
      '1 class file(s) changed while the JVM was starting — reloading them so the running code matches disk',
    );
    expect((await finalVerify(client, 'a.A', v2)).status).toBe('applied');
    expect(agent.captures).toBe(0);
  });

  it('under a hold, what the start reads stays held (ReloadQueue.submitClassBatch): only the owner\'s ok captures it, as it is then', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], watcherStartMs: Infinity });
    const client = await clientOf(agent);
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    const half = writeClass(dir, 'a/A.class', 'half');
    agent.startWatching();
    await client.next((e) => e.message.includes('changed while the JVM was starting'));
    expect((await client.verify('v1', 'a.A', half)).status).toBe('not_observed');
    const whole = writeClass(dir, 'a/A.class', 'whole');
    await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2');
    expect((await finalVerify(client, 'a.A', whole)).status).toBe('applied');
    expect(agent.captures).toBe(1);
  });
});

describe('the watcher stops (its loop ends for good)', () => {
  it('DOCTOR says stopped; a BUILD ok then fails after the scan timeout and the hold stays named until the app restarts', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], scanTimeoutMs: 200 });
    const client = await clientOf(agent);
    agent.stopWatching();
    expect((await client.next((e) => e.level === 'ERROR')).message).toBe('FileWatcher error: IOException: User limit of inotify watches reached');
    expect(await doctor(client, 'd1')).toMatchObject({ watcherState: 'stopped', watchedDirectoryCount: 0 });
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    writeClass(dir, 'a/A.class', 'v2');
    await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2');
    expect((await client.next((e) => e.level === 'ERROR' && e.message !== 'FileWatcher error: IOException: User limit of inotify watches reached')).message).toBe(SCAN_FAILED);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'o' });
    // A stopped watcher never starts again.
    agent.startWatching();
    expect(agent.watching).toBe(false);
    await agent.restart();
    expect(agent.hold().kind).toBe('none');
  });
});

describe('excludePatterns', () => {
  it('an excluded class file is never captured, pending or reloaded; the others are', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/A.class', 'a1');
    writeClass(dir, 'a/ATest.class', 't1');
    const agent = await agentFor({ watchDirs: [dir], excludePatterns: ['*Test.class', 'B?.class'] });
    const client = await clientOf(agent);
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    const a2 = writeClass(dir, 'a/A.class', 'a2');
    const t2 = writeClass(dir, 'a/ATest.class', 't2');
    const b2 = writeClass(dir, 'a/B1.class', 'b');
    expect(agent.hold().files).toBe(1);
    await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2');
    expect((await finalVerify(client, 'a.A', a2)).status).toBe('applied');
    expect((await client.verify('t', 'a.ATest', t2)).status).toBe('not_observed');
    expect((await client.verify('b', 'a.B1', b2)).status).toBe('not_observed');
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toContain(' pendingClasses=0 ');
  });
});

describe('pause', () => {
  it('BUILD ok releases the hold and keeps the batch pending; HEALTH starts with the pause', async () => {
    const dir = tempDir();
    const v1 = writeClass(dir, 'a/A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);
    await client.ask('RELOAD pause request=p', 'RELOAD_STATE', 'p');
    await client.ask('BUILD started request=b1 owner=o', 'BUILD_ACK', 'b1');
    const v2 = writeClass(dir, 'a/A.class', 'v2');
    client.send('HEALTH');
    expect((await client.next((e) => e.message.startsWith('Build holding'))).message).toMatch(
      /^Build holding 1 class files since \S+; waiting for BUILD ok\. Automatic reload paused; pending class files=1, pending actions=0$/,
    );
    await client.ask('BUILD ok request=b2 owner=o', 'BUILD_ACK', 'b2');
    await waitFor(() => agent.hold().kind === 'none', 'the hold to end');
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toBe(
      'RELOAD_STATE s status paused=true pendingClasses=1 pendingActions=0 buildHold=none',
    );
    expect((await client.verify('v', 'a.A', v2)).status).toBe('not_observed');
    expect((await client.verify('w', 'a.A', v1)).status).toBe('not_observed');
    client.send('HEALTH');
    expect((await client.next((e) => e.message.startsWith('Automatic reload paused'))).message).toBe(
      'Automatic reload paused; pending class files=1, pending actions=0',
    );
    await client.ask('RELOAD resume request=r', 'RELOAD_STATE', 'r');
    expect((await finalVerify(client, 'a.A', v2)).status).toBe('applied');
  });
});

describe("the stand-in JVM's command line", () => {
  const argsOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  // Until the stand-in's exec is done, /proc shows the forking node's command line and environment.
  const execed = (pid: number) => waitFor(() => argsOf(pid).includes('reclazz.fake.App'), `the stand-in ${pid}'s exec`);
  const cmdline = async (pid: number) => (await execed(pid), argsOf(pid));
  const environ = async (pid: number) => (await execed(pid), readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'));

  it('carries -javaagent with the watched directories and options, and a class path', async () => {
    const a = tempDir();
    const b = tempDir();
    const agent = await agentFor({ watchDirs: [a, b], excludePatterns: ['*Test.class'], watcherStartMs: 1500 });
    const args = (await cmdline(agent.jvm!.pid));
    const java = args.indexOf('java');
    expect(java).toBeGreaterThan(0);
    expect(args[java + 1]).toMatch(/^-javaagent:\S*reclazz-agent-1\.4\.0-fake\.jar=watchDirs=(.+),excludePatterns=\*Test\.class,startupDelaySec=2$/);
    expect(args[java + 1]).toContain(`=watchDirs=${a};${b},`);
    expect(args.slice(java + 2, java + 4)).toEqual(['-cp', `${a}:${b}`]);
    expect(args.slice(java + 4, java + 5)).toEqual(['reclazz.fake.App']);
    expect((await environ(agent.jvm!.pid)).some((v) => v.startsWith('JAVA_TOOL_OPTIONS='))).toBe(false);
  });

  it('agentArgs and classPath replace them; JAVA_TOOL_OPTIONS or attached at run time move the agent off the command line', async () => {
    const a = tempDir();
    const bare = await agentFor({ watchDirs: [a], agentArgs: '', classPath: [join(a, 'x')] });
    const args = (await cmdline(bare.jvm!.pid));
    expect(args.some((arg) => /^-javaagent:\S*reclazz-agent-1\.4\.0-fake\.jar$/.test(arg))).toBe(true);
    expect(args).toContain(join(a, 'x'));
    const tool = await agentFor({ watchDirs: [a], agentOn: 'JAVA_TOOL_OPTIONS' });
    expect((await cmdline(tool.jvm!.pid)).some((arg) => arg.startsWith('-javaagent:'))).toBe(false);
    expect((await environ(tool.jvm!.pid)).find((v) => v.startsWith('JAVA_TOOL_OPTIONS='))).toMatch(/=-javaagent:\S*\.jar=watchDirs=/);
    const attached = await agentFor({ watchDirs: [a], agentOn: 'attached' });
    expect((await cmdline(attached.jvm!.pid)).some((arg) => arg.startsWith('-javaagent:'))).toBe(false);
    expect((await environ(attached.jvm!.pid)).some((v) => v.startsWith('JAVA_TOOL_OPTIONS='))).toBe(false);
  });
});
