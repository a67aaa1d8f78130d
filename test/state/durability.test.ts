/**
 * Which state writes are fsynced: what must survive a crash of the machine (the class index, a
 * token that may hold the agent) is synced, file and folder; what means nothing after one (the
 * lock's holder, a token marked as holding nothing) is only renamed into place, whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireRunLock } from '../../src/state/lock.js';
import { writeClassIndex, writeOwnerState } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';
import { scratch } from './helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** How many fsyncs `body` made. */
async function fsyncsDuring(body: () => unknown): Promise<number> {
  const spy = vi.spyOn(fs, 'fsyncSync');
  await body();
  const count = spy.mock.calls.length;
  spy.mockRestore();
  return count;
}

const owner = (held: boolean) => ({ owner: 'tok-1', sessionId: 's1', port: 4242, updatedAt: '2026-12-01T00:00:00.000Z', held });

describe('fsync of state writes', () => {
  it('the class index and a token that may hold: the file and its folder', async () => {
    const project = scratch();
    expect(await fsyncsDuring(() => writeClassIndex(project, indexOf(3)))).toBe(2);
    expect(await fsyncsDuring(() => writeOwnerState(project, owner(true)))).toBe(2);
  });

  it('a token marked as holding nothing: none, and the file is whole', async () => {
    const project = scratch();
    expect(await fsyncsDuring(() => writeOwnerState(project, owner(false)))).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(project, '.reclazz', 'owner.json'), 'utf8'))).toEqual(owner(false));
  });

  it("the run lock's holder file: none", async () => {
    const project = scratch();
    let release: (() => Promise<void>) | undefined;
    const syncs = await fsyncsDuring(async () => {
      const locked = await acquireRunLock(project, { pid: process.pid, isAlive: () => true }, 0, () => undefined);
      if (locked.kind === 'locked') release = locked.release;
    });
    expect(release).toBeDefined();
    expect(syncs).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(project, '.reclazz', 'build.lock.holder'), 'utf8'))).toMatchObject({ pid: process.pid });
    await release!();
  });
});
