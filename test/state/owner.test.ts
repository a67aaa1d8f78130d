/**
 * owner.json may hold the only token that recovers a hold left behind: a corrupt one is never
 * replaced or deleted but moved aside (the warning says where), and a token still readable in
 * it is returned for the caller to try first.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOwnerState, writeOwnerState, type SavedOwnerState } from '../../src/state/store.js';
import { isRoot, makeReadOnly, names, scratch, smallDisk, thrownBy } from './helpers.js';

const saved = { owner: 'Tok_en-42', sessionId: 'session-"7"', port: 4242, updatedAt: '2025-01-01T00:00:00.000Z', held: true };
const CORRUPT_ASIDE = /^owner\.json\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z(-\d+)?$/;

/** A project whose owner.json holds `content`; reads it, and returns what came back, the warnings and the folder after. */
function readDamaged(content: string | Buffer, project = scratch()) {
  const state = path.join(project, '.reclazz');
  fs.mkdirSync(state, { recursive: true });
  fs.writeFileSync(path.join(state, 'owner.json'), content);
  const warnings: string[] = [];
  const result = readOwnerState(project, (m) => warnings.push(m));
  const left = names(state);
  return { project, state, result, warnings, left, aside: path.join(state, left.find((n) => CORRUPT_ASIDE.test(n)) ?? 'none') };
}

describe('owner.json', () => {
  it('round-trips, and writes only the fields of an owner state', () => {
    const project = scratch();
    writeOwnerState(project, { ...saved, recoveredFrom: '/elsewhere' } as SavedOwnerState);
    expect(readOwnerState(project, () => expect.fail('no warning expected'))).toEqual(saved);
    expect(names(path.join(project, '.reclazz'))).toEqual(['owner.json']);
  });

  it('cut short after its session: moved aside byte for byte, with its token and session returned to try', () => {
    const text = `${JSON.stringify(saved)}\n`;
    const cut = text.slice(0, text.indexOf('"updatedAt"') + 15);
    const { state, result, warnings, left, aside } = readDamaged(cut);
    expect(left).toEqual([path.basename(aside)]);
    expect(fs.readFileSync(aside, 'utf8')).toBe(cut);
    expect(result).toEqual({ owner: saved.owner, sessionId: saved.sessionId, port: 0, updatedAt: '', recoveredFrom: aside });
    expect(warnings).toEqual([`${path.join(state, 'owner.json')} is corrupt; ignoring it: moved to ${aside} (owner token ${saved.owner} could still be read from it)`]);
  });

  it('cut inside the token: nothing is offered (a token cut short is another token), and it is still moved aside', () => {
    const cut = '{"owner":"Tok_en';
    const { result, warnings, left, aside } = readDamaged(cut);
    expect(result).toBeUndefined();
    expect(left).toEqual([path.basename(aside)]);
    expect(fs.readFileSync(aside, 'utf8')).toBe(cut);
    expect(warnings).toEqual([expect.stringMatching(/is corrupt; ignoring it: moved to .* \(no owner token could be read from it\)$/)]);
  });

  it('valid JSON with a bad field: the token and session are offered', () => {
    const { result, aside } = readDamaged(JSON.stringify({ ...saved, port: 'not a number' }));
    expect(result).toEqual({ owner: saved.owner, sessionId: saved.sessionId, port: 0, updatedAt: saved.updatedAt, recoveredFrom: aside });
  });

  it('a token that breaks the token rule is not offered', () => {
    for (const owner of ['has space', 'x'.repeat(65), '']) {
      const { result, left } = readDamaged(JSON.stringify({ ...saved, owner }));
      expect(result).toBeUndefined();
      expect(left).toEqual([expect.stringMatching(CORRUPT_ASIDE)]);
    }
  });

  it('an empty file and an oversized one (over 64 KiB) are corrupt: moved aside whole', () => {
    expect(readDamaged('').result).toBeUndefined();
    const big = `{"owner":"${saved.owner}","pad":"${'x'.repeat(70_000)}"}`;
    const { result, aside } = readDamaged(big);
    expect(result?.owner).toBe(saved.owner);
    expect(fs.readFileSync(aside, 'utf8')).toBe(big);
  });

  it('a second corrupt file never replaces the first one moved aside, and a new token written after leaves both alone', () => {
    const first = readDamaged('{"owner":"first-token","ses');
    const second = readDamaged('{"owner":"second-token","ses', first.project);
    expect(second.left).toHaveLength(2);
    expect(second.left.map((n) => fs.readFileSync(path.join(second.state, n), 'utf8')).sort()).toEqual(['{"owner":"first-token","ses', '{"owner":"second-token","ses']);
    writeOwnerState(first.project, saved);
    expect(names(second.state)).toEqual([...second.left, 'owner.json'].sort());
  });

  it('a FIFO in its place is refused as not a regular file without blocking, and left where it is', () => {
    const project = scratch();
    const file = path.join(project, '.reclazz', 'owner.json');
    fs.mkdirSync(path.dirname(file));
    execFileSync('mkfifo', [file]);
    const thrown = thrownBy(() => readOwnerState(project, () => undefined));
    expect(thrown.message).toBe(`cannot read ${file} (it is not a regular file)`);
    expect(names(path.dirname(file))).toEqual(['owner.json']);
  });

  it.skipIf(!isRoot)('a corrupt one that cannot be moved aside (read-only file system) is an error naming it, and stays', () => {
    const project = smallDisk(64 * 1024);
    const file = path.join(project, '.reclazz', 'owner.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '{"owner":"only-copy","se');
    makeReadOnly(project);
    const thrown = thrownBy(() => readOwnerState(project, () => expect.fail('no warning expected')));
    expect(thrown.path).toBe(file);
    expect(thrown.message).toMatch(/^cannot write .*owner\.json \(it is corrupt, and moving it aside to .*owner\.json\.corrupt-.* failed: EROFS/);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"owner":"only-copy","se');
  });
});
