/** hold/owner.ts: which owner token a session uses, and how owner.json follows the hold. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseOwner, restoreSaved, saveHolding, saveReleased } from '../../src/hold/owner.js';
import { tempDir } from '../support/cli.js';

const NOW = new Date('2026-01-02T03:04:05.000Z');

function saved(dir: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(dir, '.reclazz', 'owner.json'), 'utf8'));
}

describe('the owner token', () => {
  it('is new without a saved one, then the saved one for the same agent session', () => {
    const dir = tempDir();
    const first = chooseOwner(dir, 'session-1', undefined, () => undefined);
    expect(first).toMatchObject({ source: 'new', saved: undefined, releasedBefore: false });
    saveHolding({ state: dir, owner: first.owner, sessionId: 'session-1', port: 4711, pid: '4242' }, NOW);
    expect(saved(dir)).toEqual({
      owner: first.owner,
      sessionId: 'session-1',
      port: 4711,
      pid: '4242',
      updatedAt: NOW.toISOString(),
      held: true,
    });
    expect(chooseOwner(dir, 'session-1', undefined, () => undefined)).toMatchObject({
      owner: first.owner,
      source: 'saved',
      releasedBefore: false,
    });
  });

  it('is fresh after an app restart (another agent session), and --owner always wins', () => {
    const dir = tempDir();
    saveHolding({ state: dir, owner: 'old-owner', sessionId: 'session-1', port: 4711, pid: '4242' }, NOW);
    const restarted = chooseOwner(dir, 'session-2', undefined, () => undefined);
    expect(restarted.source).toBe('new');
    expect(restarted.owner).not.toBe('old-owner');
    expect(chooseOwner(dir, 'session-1', 'mine', () => undefined)).toMatchObject({ owner: 'mine', source: 'option' });
  });

  it('knows when its last ok was acknowledged (a capture may still be pending)', () => {
    const dir = tempDir();
    const record = { state: dir, owner: 'owner-1', sessionId: 'session-1', port: 4711, pid: '4242' };
    saveReleased(record, NOW);
    expect(saved(dir)).toMatchObject({ held: false });
    expect(chooseOwner(dir, 'session-1', undefined, () => undefined).releasedBefore).toBe(true);
  });

  it('puts back a token of another hold when our started was refused', () => {
    const dir = tempDir();
    saveHolding({ state: dir, owner: 'left-behind', sessionId: 'session-1', port: 4711, pid: '4242' }, NOW);
    const choice = chooseOwner(dir, 'session-1', 'mine', () => undefined);
    const record = { state: dir, owner: 'mine', sessionId: 'session-1', port: 4711, pid: '4242' };
    saveHolding(record, NOW);
    restoreSaved(record, choice, NOW);
    expect(saved(dir)).toMatchObject({ owner: 'left-behind' });
  });

  it('marks our own token not holding when our started was refused', () => {
    const dir = tempDir();
    const record = { state: dir, owner: 'mine', sessionId: 'session-1', port: 4711, pid: '4242' };
    saveReleased(record, NOW);
    const choice = chooseOwner(dir, 'session-1', undefined, () => undefined);
    saveHolding(record, NOW);
    restoreSaved(record, choice, NOW);
    expect(saved(dir)).toMatchObject({ owner: 'mine', held: false });
  });

  it('a corrupt owner.json is warned about and ignored', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, '.reclazz'));
    fs.writeFileSync(path.join(dir, '.reclazz', 'owner.json'), '{not json');
    const warnings: string[] = [];
    expect(chooseOwner(dir, 'session-1', undefined, (m) => warnings.push(m)).source).toBe('new');
    expect(warnings).toEqual([expect.stringContaining('is corrupt')]);
  });
});
