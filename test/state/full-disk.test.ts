/**
 * A write that does not fit is an error, never a shorter file: the write loop checks every
 * count, and the rename happens only after the last byte and an fsync. On a full disk or past
 * the file size limit the previous file stays as it was and no temp file is left.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readClassIndex, readOwnerState, writeClassIndex, writeOwnerState } from '../../src/state/store.js';
import { indexOf } from './fixtures.js';
import { fillDisk, isRoot, names, removeChildBundle, runChild, scratch, smallDisk, thrownBy } from './helpers.js';

afterAll(removeChildBundle);

const noWarning = () => expect.fail('no warning expected');

describe.skipIf(!isRoot)('on a full disk (a 64 KiB tmpfs)', () => {
  it('a class index larger than the free space throws naming classes.idx; the previous index stays whole', () => {
    const project = smallDisk(64 * 1024);
    writeClassIndex(project, indexOf(3));
    const file = path.join(project, '.reclazz', 'classes.idx');
    const before = fs.readFileSync(file);
    const thrown = thrownBy(() => writeClassIndex(project, indexOf(700)));
    expect(thrown.path).toBe(file);
    expect(thrown.message).toMatch(new RegExp(`^cannot write ${file} \\(ENOSPC: .*; wrote \\d+ of \\d+ bytes, the previous file is kept\\)$`));
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(readClassIndex(project, noWarning).paths).toEqual(indexOf(3).paths);
    expect(names(path.join(project, '.reclazz'))).toEqual(['classes.idx']);
  });

  it('an owner token of which only part fits throws naming owner.json; the saved token stays', () => {
    const project = smallDisk(64 * 1024);
    // Over one 4 KiB page (an agent's session id is its own choice), with one page left free.
    const saved = { owner: 'left-behind', sessionId: 's'.repeat(6000), port: 4242, updatedAt: '2025-01-01T00:00:00.000Z', held: true };
    writeOwnerState(project, saved);
    fillDisk(project, 4096);
    const file = path.join(project, '.reclazz', 'owner.json');
    const thrown = thrownBy(() => writeOwnerState(project, { ...saved, owner: 'new-one' }));
    expect(thrown.path).toBe(file);
    expect(thrown.message).toMatch(new RegExp(`^cannot write ${file} \\(ENOSPC: .*; wrote 4096 of \\d+ bytes, the previous file is kept\\)$`));
    expect(readOwnerState(project, noWarning)).toEqual(saved);
    expect(names(path.join(project, '.reclazz'))).toEqual(['owner.json']);
  });
});

describe('past the file size limit (ulimit -f, SIGXFSZ ignored)', () => {
  it('the short write and then EFBIG are errors naming classes.idx; the previous index stays whole', () => {
    const project = scratch();
    writeClassIndex(project, indexOf(3));
    const file = path.join(project, '.reclazz', 'classes.idx');
    const before = fs.readFileSync(file);
    // 64 KiB: the kernel takes 65,536 bytes of the first write, then refuses the rest.
    const child = runChild('write', project, 700, 'ulimit -f 64; trap "" XFSZ');
    expect(child).toMatchObject({ status: 0, signal: null });
    expect(child.error).toMatch(new RegExp(`^cannot write ${file} \\(EFBIG: .*; wrote 65536 of \\d+ bytes, the previous file is kept\\)$`));
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(readClassIndex(project, noWarning).paths).toEqual(indexOf(3).paths);
    expect(names(path.join(project, '.reclazz'))).toEqual(['classes.idx']);
  });

  it('the same write within the limit succeeds (the limit is what made it fail)', () => {
    const project = scratch();
    expect(runChild('write', project, 700, 'ulimit -f 1024; trap "" XFSZ')).toEqual({ status: 0, signal: null });
    expect(readClassIndex(project, noWarning).paths).toEqual(indexOf(700).paths);
  });
});
