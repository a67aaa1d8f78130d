/**
 * The state folder is never followed through a symbolic link: a link in the place of
 * `.reclazz` or of any file reclazz-build keeps there is refused with a StateError naming it
 * and the fix, and nothing where the link points is read, written or deleted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireRunLock } from '../../src/state/lock.js';
import { readClassIndex, readOwnerState, writeClassIndex, writeOwnerState } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';
import { scratch, thrownBy, tree } from './helpers.js';
import { processHost } from '../../src/cli/host.js';

const owner = { owner: 'outside-token', sessionId: 's1', port: 4242, updatedAt: '2025-01-01T00:00:00.000Z', held: true };
const LINK_REFUSED = /symbolic link, and reclazz-build never follows links in its state folder: remove the link\)$/;
const ignore = () => undefined;

/** A project and, outside it, a folder holding state files that a followed link would read, replace or delete. */
function setup(): { project: string; state: string; outside: string; before: Record<string, string> } {
  const project = scratch();
  const outside = scratch();
  const elsewhere = scratch();
  writeOwnerState(elsewhere, owner);
  writeClassIndex(elsewhere, indexOf(2));
  fs.cpSync(path.join(elsewhere, '.reclazz'), outside, { recursive: true });
  fs.writeFileSync(path.join(outside, 'classes.json'), '{"version":2,"files":[]}');
  fs.mkdirSync(path.join(outside, 'a-folder'));
  return { project, state: path.join(project, '.reclazz'), outside, before: tree(outside) };
}

async function lockRefusal(project: string): Promise<string> {
  try {
    const result = await acquireRunLock(project, processHost(), 0, ignore);
    if (result.kind === 'locked') await result.release();
    return expect.fail(`expected a refusal, got ${result.kind}`);
  } catch (error) {
    return (error as Error).message;
  }
}

describe('a symbolic link in the place of .reclazz', () => {
  it('is refused by every state function, naming .reclazz; nothing in its target is read, written or deleted', async () => {
    const { project, state, outside, before } = setup();
    fs.symlinkSync(outside, state);
    expect(await lockRefusal(project)).toMatch(new RegExp(`^cannot write ${state} \\(it is a ${LINK_REFUSED.source}`));
    for (const call of [
      () => readOwnerState(project, ignore),
      () => readClassIndex(project, ignore),
      () => writeOwnerState(project, { ...owner, owner: 'mine' }),
      () => writeClassIndex(project, indexOf(5)),
    ]) {
      const thrown = thrownBy(call);
      expect(thrown.path).toBe(state);
      expect(thrown.message).toMatch(LINK_REFUSED);
    }
    expect(tree(outside)).toEqual(before);
    expect(fs.lstatSync(state).isSymbolicLink()).toBe(true);
  });

  it('a dangling one is refused too, and nothing is created where it points', async () => {
    const { project, state, outside } = setup();
    const target = path.join(outside, 'not-yet');
    fs.symlinkSync(target, state);
    expect(await lockRefusal(project)).toMatch(LINK_REFUSED);
    expect(thrownBy(() => writeClassIndex(project, indexOf(1))).path).toBe(state);
    expect(fs.existsSync(target)).toBe(false);
  });
});

describe('a symbolic link in the place of a state file', () => {
  const cases: [name: string, target: string][] = [
    ['owner.json', 'owner.json'],
    ['classes.idx', 'classes.idx'],
    ['classes.json', 'classes.json'],
    ['build.lock', 'a-folder'],
    ['build.lock.holder', 'owner.json'],
    ['owner.json', 'missing'],
  ];
  it.each(cases)('%s (to %s outside the project) is refused by the run lock before anything else, naming it', async (name, target) => {
    const { project, state, outside, before } = setup();
    fs.mkdirSync(state);
    fs.symlinkSync(path.join(outside, target), path.join(state, name));
    expect(await lockRefusal(project)).toMatch(new RegExp(`^cannot write ${path.join(state, name)} \\(it is a ${LINK_REFUSED.source}`));
    expect(tree(outside)).toEqual(before);
    expect(fs.lstatSync(path.join(state, name)).isSymbolicLink()).toBe(true);
    expect(fs.existsSync(path.join(state, 'build.lock'))).toBe(name === 'build.lock');
  });

  it('owner.json: not read (the token it points to is not taken) and not replaced', () => {
    const { project, state, outside, before } = setup();
    fs.mkdirSync(state);
    const link = path.join(state, 'owner.json');
    fs.symlinkSync(path.join(outside, 'owner.json'), link);
    const read = thrownBy(() => readOwnerState(project, ignore));
    expect([read.path, read.message]).toEqual([link, expect.stringMatching(/^cannot read .*symbolic link/)]);
    expect(thrownBy(() => writeOwnerState(project, { ...owner, owner: 'mine' })).path).toBe(link);
    expect(tree(outside)).toEqual(before);
    expect(fs.readdirSync(state)).toEqual(['owner.json']);
  });

  it('classes.idx: not read and not replaced', () => {
    const { project, state, outside, before } = setup();
    fs.mkdirSync(state);
    const link = path.join(state, 'classes.idx');
    fs.symlinkSync(path.join(outside, 'classes.idx'), link);
    expect(thrownBy(() => readClassIndex(project, ignore)).path).toBe(link);
    expect(thrownBy(() => writeClassIndex(project, indexOf(5))).path).toBe(link);
    expect(tree(outside)).toEqual(before);
    expect(fs.readdirSync(state)).toEqual(['classes.idx']);
  });

  it('classes.json: writing the index never deletes what it points to', () => {
    const { project, state, outside, before } = setup();
    fs.mkdirSync(state);
    const link = path.join(state, 'classes.json');
    fs.symlinkSync(path.join(outside, 'classes.json'), link);
    expect(thrownBy(() => writeClassIndex(project, indexOf(5))).path).toBe(link);
    expect(tree(outside)).toEqual(before);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a .reclazz that is a file is refused as not a folder, and left alone', () => {
    const { project, state } = setup();
    fs.writeFileSync(state, 'mine');
    expect(thrownBy(() => writeClassIndex(project, indexOf(1))).message).toBe(`cannot write ${state} (it is not a folder: move it away)`);
    expect(fs.readFileSync(state, 'utf8')).toBe('mine');
  });
});
