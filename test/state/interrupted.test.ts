/**
 * A run killed in the middle of a write leaves its temp file beside the state file it was
 * replacing, and the state file as it was. The next run, once it holds the run lock, removes
 * such temp files: its own pattern and that of write-file-atomic (used by earlier versions),
 * regular files only, never a link and never anything else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../src/state/lock.js';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';
import { names, removeChildBundle, runChild, scratch } from './helpers.js';
import { processHost } from '../../src/cli/host.js';

afterAll(removeChildBundle);

async function runOnce(project: string): Promise<void> {
  const lock = await acquireRunLock(project, processHost(), 0, () => undefined);
  if (lock.kind !== 'locked') expect.fail(`lock ${lock.kind}`);
  await lock.release();
}

describe('temp files of interrupted writes', () => {
  it('a write killed before its rename leaves the index as it was, and the next run removes its temp file', async () => {
    const project = scratch();
    writeClassIndex(project, indexOf(3));
    const state = path.join(project, '.reclazz');
    const child = runChild('kill-before-rename', project, 50);
    expect(child.signal).toBe('SIGKILL');
    const left = names(state);
    expect(left).toEqual(['classes.idx', expect.stringMatching(/^classes\.idx\.tmp-\d+-[0-9a-f]{8}$/)]);
    // Every byte was written before the kill: only the rename was missing.
    expect(fs.statSync(path.join(state, left[1]!)).size).toBeGreaterThan(fs.statSync(path.join(state, 'classes.idx')).size);
    expect(readClassIndex(project, () => expect.fail('no warning expected')).paths).toEqual(indexOf(3).paths);
    await runOnce(project);
    expect(names(state)).toEqual(['.gitignore', 'classes.idx']);
  });

  it('only our own temp names are removed, and only regular files: never a link, a folder or what a link points to', async () => {
    const project = scratch();
    const outside = scratch();
    const state = path.join(project, '.reclazz');
    fs.mkdirSync(state);
    const ours = ['owner.json.tmp-123-0a1b2c3d', 'classes.idx.tmp-9-ffffffff', 'build.lock.holder.tmp-77-12345678', 'classes.idx.3735928559', 'owner.json.42', 'build.lock.holder.4242'];
    const others = ['agent.port', 'owner.json.corrupt-2025-01-01T00-00-00-000Z', 'classes.idx.bak', 'owner.json.tmp-123-XYZ', 'classes.json.12', 'notes.txt', 'agent.port.12'];
    for (const name of [...ours, ...others]) fs.writeFileSync(path.join(state, name), name);
    fs.mkdirSync(path.join(state, 'classes.idx.77'));
    fs.writeFileSync(path.join(state, 'classes.idx.77', 'inside'), 'kept');
    fs.writeFileSync(path.join(outside, 'target'), 'kept');
    fs.symlinkSync(path.join(outside, 'target'), path.join(state, 'owner.json.99'));
    await runOnce(project);
    expect(names(state)).toEqual(['.gitignore', ...others, 'classes.idx.77', 'owner.json.99'].sort());
    expect(fs.readFileSync(path.join(state, 'classes.idx.77', 'inside'), 'utf8')).toBe('kept');
    expect(fs.readFileSync(path.join(outside, 'target'), 'utf8')).toBe('kept');
    expect(fs.lstatSync(path.join(state, 'owner.json.99')).isSymbolicLink()).toBe(true);
  });

  it('a run that does not get the lock removes nothing: the temp file may be the live write of the run holding it', async () => {
    const project = scratch();
    const holding = await acquireRunLock(project, processHost(), 0, () => undefined);
    if (holding.kind !== 'locked') expect.fail(`lock ${holding.kind}`);
    const temp = path.join(project, '.reclazz', 'classes.idx.tmp-1-0a1b2c3d');
    fs.writeFileSync(temp, 'being written');
    try {
      expect((await acquireRunLock(project, processHost(), 0, () => undefined)).kind).toBe('busy');
      expect(fs.existsSync(temp)).toBe(true);
    } finally {
      await holding.release();
    }
    await runOnce(project);
    expect(fs.existsSync(temp)).toBe(false);
  });
});
