/**
 * The run lock keeps two runs from using one owner token at once: its holder file must not be
 * read through a link, a holder that does not name a process must not pass for a dead one, and
 * a lock whose holder file cannot be written is not kept.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../src/state/lock.js';
import { StateError } from '../../src/state/store.js';
import { scratch } from './helpers.js';
import { processHost } from '../../src/cli/host.js';

const ignore = () => undefined;
/** The pid of a process that has exited. */
const deadPid = () => spawnSync('true').pid!;

describe('the run lock', () => {
  it('a holder file replaced by a link while a run waits is refused, not read: the live lock is kept', async () => {
    const project = scratch();
    const outside = scratch();
    const holding = await acquireRunLock(project, processHost(), 0, ignore);
    if (holding.kind !== 'locked') expect.fail(`lock ${holding.kind}`);
    try {
      const fake = path.join(outside, 'holder');
      fs.writeFileSync(fake, JSON.stringify({ pid: deadPid(), host: os.hostname() }));
      const waiting = acquireRunLock(project, processHost(), 2000, ignore);
      // After the start-up checks, before the waiting run reads the holder file.
      const holder = path.join(project, '.reclazz', 'build.lock.holder');
      fs.rmSync(holder);
      fs.symlinkSync(fake, holder);
      const refused = await waiting.then(
        () => expect.fail('expected a refusal'),
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(StateError);
      expect((refused as StateError).path).toBe(holder);
      expect(fs.statSync(path.join(project, '.reclazz', 'build.lock')).isDirectory()).toBe(true);
      expect(fs.lstatSync(holder).isSymbolicLink()).toBe(true);
    } finally {
      await holding.release();
    }
  });

  it('a holder file whose pid is not a process id does not pass for a dead run: a fresh lock is waited for', async () => {
    const project = scratch();
    const state = path.join(project, '.reclazz');
    fs.mkdirSync(path.join(state, 'build.lock'), { recursive: true });
    for (const pid of ['12', 1.5, -1, null]) {
      fs.writeFileSync(path.join(state, 'build.lock.holder'), JSON.stringify({ pid, host: os.hostname() }));
      expect((await acquireRunLock(project, processHost(), 0, ignore)).kind).toBe('busy');
    }
    // The same lock with a dead holder is taken over at once.
    fs.writeFileSync(path.join(state, 'build.lock.holder'), JSON.stringify({ pid: deadPid(), host: os.hostname() }));
    const taken = await acquireRunLock(project, processHost(), 0, ignore);
    expect(taken.kind).toBe('locked');
    if (taken.kind === 'locked') await taken.release();
  });

  it('a lock whose holder file cannot be written is released before the error', async () => {
    const project = scratch();
    const state = path.join(project, '.reclazz');
    fs.mkdirSync(path.join(state, 'build.lock.holder'), { recursive: true });
    await expect(acquireRunLock(project, processHost(), 0, ignore)).rejects.toThrow(`cannot write ${path.join(state, 'build.lock.holder')} (it is not a regular file: move it away)`);
    expect(fs.existsSync(path.join(state, 'build.lock'))).toBe(false);
  });

  it("a dead holder whose recorded build still runs is not taken over, even past proper-lockfile's own staleness", async () => {
    const project = scratch();
    const state = path.join(project, '.reclazz');
    const lock = path.join(state, 'build.lock');
    fs.mkdirSync(lock, { recursive: true });
    // Unrefreshed for an hour: proper-lockfile alone would take it over.
    const hourAgo = new Date(Date.now() - 3_600_000);
    fs.utimesSync(lock, hourAgo, hourAgo);
    const build = { pgid: 4242, leaderStartMs: 1_000, leaderErrorMs: 10, command: 'sh -c slow' };
    fs.writeFileSync(path.join(state, 'build.lock.holder'), JSON.stringify({ pid: deadPid(), host: os.hostname(), build }));
    let alive = true;
    const asked: unknown[] = [];
    const host = {
      ...processHost(),
      isGroupAlive: (group: typeof build) => {
        asked.push(group);
        return Promise.resolve(alive);
      },
    };
    const waits: unknown[] = [];
    const busy = await acquireRunLock(project, host, 250, (_ms, orphan) => waits.push(orphan));
    expect(busy).toMatchObject({ kind: 'busy', orphan: build });
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((w) => JSON.stringify(w) === JSON.stringify(build))).toBe(true);
    expect(asked[0]).toEqual(build);
    // Once the group is gone the lock is taken over, and the new holder records no build until one starts.
    alive = false;
    const taken = await acquireRunLock(project, host, 0, ignore);
    if (taken.kind !== 'locked') expect.fail(`lock ${taken.kind}`);
    expect(JSON.parse(fs.readFileSync(path.join(state, 'build.lock.holder'), 'utf8'))).not.toHaveProperty('build');
    expect(taken.recordBuild(build)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(state, 'build.lock.holder'), 'utf8'))).toMatchObject({ pid: process.pid, build });
    await taken.release();
  });

  it("a recorded build of a live holder is that run's own business: the lock is waited for as any other", async () => {
    const project = scratch();
    const first = await acquireRunLock(project, processHost(), 0, ignore);
    if (first.kind !== 'locked') expect.fail(`lock ${first.kind}`);
    first.recordBuild({ pgid: 4242, leaderStartMs: 1_000, leaderErrorMs: 10, command: 'x' });
    const asked: unknown[] = [];
    const host = { ...processHost(), isGroupAlive: (g: unknown) => (asked.push(g), Promise.resolve(true)) };
    const second = await acquireRunLock(project, host, 0, ignore);
    expect(second).toMatchObject({ kind: 'busy' });
    expect(second).not.toHaveProperty('orphan');
    expect(asked).toEqual([]);
    await first.release();
  });
});
