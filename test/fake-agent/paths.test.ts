import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { pathReporter } from '../../src/fake-agent/paths.js';
import { agentFor, clientOf, doctor, finalVerify, tempDir, writeClass } from './fixture.js';

describe('container paths (pathMap)', () => {
  it('DOCTOR and VERIFY report the agent paths of local folders', async () => {
    const project = tempDir();
    const classes = join(project, 'target', 'classes');
    writeClass(classes, 'com/acme/A.class', 'v1');
    const agent = await agentFor({ portFile: join(project, '.reclazz', 'agent.port'), watchDirs: [classes], pathMap: { '/app': project } });
    const client = await clientOf(agent);
    expect(await doctor(client, 'd')).toMatchObject({
      workingDirectory: '/app',
      // Every folder under the watched directory is a registration (agent FileWatcher.registerRecursive).
      watchedDirectories: ['/app/target/classes', '/app/target/classes/com', '/app/target/classes/com/acme'],
      watchedDirectoryCount: 3,
      watchSampleTruncated: false,
    });
    const v2 = writeClass(classes, 'com/acme/A.class', 'v2');
    client.send('SCAN');
    expect(await finalVerify(client, 'com.acme.A', v2)).toMatchObject({ status: 'applied', source: '/app/target/classes/com/acme/A.class' });
  });

  it('the longest local prefix wins, whole segments only; other paths stay as they are', () => {
    const report = pathReporter({ '/app': '/home/me/shop', '/lib': '/home/me/shop/lib/', '/': '/srv/root' });
    expect(report('/home/me/shop')).toBe('/app');
    expect(report('/home/me/shop/target/classes')).toBe('/app/target/classes');
    expect(report('/home/me/shop/lib/target/classes')).toBe('/lib/target/classes');
    expect(report('/home/me/shopping/x')).toBe('/home/me/shopping/x');
    expect(report('/srv/root/a')).toBe('/a');
    expect(() => pathReporter({ app: '/x' })).toThrow('the agent path "app" must be absolute');
  });

  it('refuses a relative agent path at start', async () => {
    await expect(startFakeAgent({ pathMap: { 'app/classes': tempDir() } })).rejects.toThrow('must be absolute');
  });
});

describe('watchSampleTruncated', () => {
  function dirs(count: number): string[] {
    const root = tempDir();
    return Array.from({ length: count }, (_, i) => {
      const dir = join(root, `d${i}`);
      mkdirSync(dir);
      return dir;
    });
  }

  it('is false for 8 watched directories and true for 9', async () => {
    const eight = await agentFor({ watchDirs: dirs(8) });
    expect(await doctor(await clientOf(eight), 'a')).toMatchObject({ watchedDirectoryCount: 8, watchSampleTruncated: false });
    const nine = dirs(9);
    const result = await doctor(await clientOf(await agentFor({ watchDirs: nine })), 'b');
    expect(result).toMatchObject({ watchedDirectoryCount: 9, watchSampleTruncated: true, watchedDirectories: nine.slice(0, 8) });
  });

  it('is true when a watched directory longer than 256 characters is left out of the sample', async () => {
    const long = join(tempDir(), 'x'.repeat(250));
    mkdirSync(long);
    const short = tempDir();
    const result = await doctor(await clientOf(await agentFor({ watchDirs: [long, short] })), 'c');
    expect(result).toMatchObject({ watchedDirectoryCount: 2, watchSampleTruncated: true, watchedDirectories: [short] });
  });

  it('forceWatchSampleTruncated sets it whatever the sample', async () => {
    const result = await doctor(await clientOf(await agentFor({ watchDirs: dirs(1), forceWatchSampleTruncated: true })), 'd');
    expect(result).toMatchObject({ watchedDirectoryCount: 1, watchSampleTruncated: true });
  });
});

describe('DOCTOR bounds', () => {
  it('a string field longer than 512 characters makes the observation unavailable', async () => {
    const result = await doctor(await clientOf(await agentFor({ reportedWorkingDirectory: `/${'w'.repeat(512)}` })), 'big');
    expect(result).toEqual({ requestId: 'big', status: 'unavailable', detail: expect.stringContaining('bounds') });
  });
});
