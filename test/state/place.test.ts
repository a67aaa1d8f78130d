/**
 * Where state lives (state/place.ts): the checkout root a run's lock and state go to, each
 * agent's state folder under it, and state an earlier version kept beside a module's port file
 * moved there once, never overwriting and never through a link.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentStatePlace, checkoutRoot, moveEarlierState } from '../../src/state/folder.js';
import { readOwnerState, writeOwnerState } from '../../src/state/store.js';
import { scratch, thrownBy } from './helpers.js';

const agentAt = (projectDir: string) => ({ port: 4001, portFile: path.join(projectDir, '.reclazz', 'agent.port'), projectDir });
const saved = { owner: 'left-behind', sessionId: 's-1', port: 4001, updatedAt: '2025-01-01T00:00:00.000Z', held: true };

describe('checkoutRoot', () => {
  it('is the folder holding .git at or above the run, whatever port files were found', () => {
    const root = scratch();
    fs.mkdirSync(path.join(root, '.git'));
    const cwd = path.join(root, 'svc-b', 'src');
    fs.mkdirSync(cwd, { recursive: true });
    expect(checkoutRoot(cwd, [agentAt(path.join(root, 'svc-a'))])).toBe(root);
    expect(checkoutRoot(cwd, [{ portFile: '/tmp/x/agent.port', projectDir: '/tmp/x' }])).toBe(root);
  });

  it('without .git: the folder holding the port files found below it, or the project folder of one above it', () => {
    const root = scratch();
    expect(checkoutRoot(root, [agentAt(path.join(root, 'svc-a')), agentAt(path.join(root, 'svc-b'))])).toBe(root);
    expect(checkoutRoot(path.join(root, 'svc-a', 'src'), [agentAt(path.join(root, 'svc-a'))])).toBe(path.join(root, 'svc-a'));
    // Run from elsewhere against two services: the folder holding both.
    expect(checkoutRoot(scratch(), [agentAt(path.join(root, 'svc-a')), agentAt(path.join(root, 'svc-b'))])).toBe(root);
  });

  it("without .git at the run: a port file in a checkout below it (its own .git) is that checkout's", () => {
    const root = scratch();
    const a = path.join(root, 'a');
    fs.mkdirSync(path.join(a, '.git'), { recursive: true });
    expect(checkoutRoot(root, [agentAt(path.join(a, 'svc'))])).toBe(a);
    // Two of them: the folder holding both, which moves no state out of either (moveEarlierState).
    const b = path.join(root, 'b');
    fs.mkdirSync(path.join(b, '.git'), { recursive: true });
    expect(checkoutRoot(root, [agentAt(a), agentAt(b)])).toBe(root);
  });

  it('a port file outside an agent place (--port-file /tmp/x/agent.port), or a port number, gives the run folder', () => {
    const cwd = scratch();
    const x = scratch();
    expect(checkoutRoot(cwd, [{ portFile: path.join(x, 'agent.port'), projectDir: x }])).toBe(cwd);
    expect(checkoutRoot(cwd, [{ projectDir: cwd }])).toBe(cwd);
  });
});

describe('agentStatePlace', () => {
  it("the root's own port file keeps the root's .reclazz/; a port given as a number agents/port-<n>/; any other agents/<folder>-<12 hex>/", () => {
    const root = '/src/shop';
    expect(agentStatePlace(root, agentAt(root))).toBe(root);
    expect(agentStatePlace(root, { port: 4001, projectDir: root })).toEqual({ checkout: root, agent: 'port-4001', port: 4001 });
    const a = agentStatePlace(root, agentAt('/src/shop/svc-a'));
    expect(a).toEqual({ checkout: root, agent: expect.stringMatching(/^svc-a-[0-9a-f]{12}$/) });
    // Two port files of one folder (.reclazz and .idea/reclazz) are two agents.
    const ide = agentStatePlace(root, { port: 4001, portFile: '/src/shop/svc-a/.idea/reclazz/agent.port', projectDir: '/src/shop/svc-a' });
    expect(ide).not.toEqual(a);
  });
});

describe('moveEarlierState', () => {
  it('moves owner.json and classes.idx from the module once; the token is readable in its new place', () => {
    const root = scratch();
    const module = path.join(root, 'svc-a');
    fs.mkdirSync(module);
    writeOwnerState(module, saved);
    fs.writeFileSync(path.join(module, '.reclazz', 'classes.idx'), 'index bytes');
    const place = agentStatePlace(root, agentAt(module));
    const moved = moveEarlierState(module, place);
    expect(moved.map((m) => path.basename(m.from))).toEqual(['owner.json', 'classes.idx']);
    expect(readOwnerState(place, () => undefined)).toEqual(saved);
    expect(fs.readdirSync(path.join(module, '.reclazz'))).toEqual([]);
    expect(moveEarlierState(module, place)).toEqual([]);
  });

  it("never moves another checkout's state (a submodule, or a checkout below a folder in none): the runs there use it", () => {
    const root = scratch();
    fs.mkdirSync(path.join(root, '.git'));
    const sub = path.join(root, 'sub');
    fs.mkdirSync(sub);
    fs.writeFileSync(path.join(sub, '.git'), 'gitdir: ../.git/modules/sub');
    writeOwnerState(sub, saved);
    fs.writeFileSync(path.join(sub, '.reclazz', 'classes.idx'), 'index bytes');
    const place = agentStatePlace(root, agentAt(sub));
    expect(moveEarlierState(sub, place)).toEqual([]);
    expect(readOwnerState(sub, () => undefined)).toEqual(saved);
    expect(fs.readFileSync(path.join(sub, '.reclazz', 'classes.idx'), 'utf8')).toBe('index bytes');
    expect(readOwnerState(place, () => undefined)).toBeUndefined();
    const plain = scratch();
    const a = path.join(plain, 'a');
    fs.mkdirSync(path.join(a, '.git'), { recursive: true });
    writeOwnerState(a, saved);
    expect(moveEarlierState(a, agentStatePlace(plain, agentAt(a)))).toEqual([]);
    expect(readOwnerState(a, () => undefined)).toEqual(saved);
  });

  it('never overwrites state already in its new place: the old file is left as it was', () => {
    const root = scratch();
    const module = path.join(root, 'svc-a');
    fs.mkdirSync(module);
    const place = agentStatePlace(root, agentAt(module));
    writeOwnerState(place, { ...saved, owner: 'current' });
    writeOwnerState(module, saved);
    expect(moveEarlierState(module, place)).toEqual([]);
    expect(readOwnerState(place, () => undefined)?.owner).toBe('current');
    expect(readOwnerState(module, () => undefined)?.owner).toBe('left-behind');
  });

  it("a port given as a number takes from the checkout's own .reclazz/ only its own record (that port, no port file)", () => {
    const root = scratch();
    const byPort = agentStatePlace(root, { port: 4001, projectDir: root });
    // The root agent's record (found by its port file) stays where it is, whatever the port.
    writeOwnerState(root, { ...saved, portFile: path.join(root, '.reclazz', 'agent.port') });
    expect(moveEarlierState(root, byPort)).toEqual([]);
    expect(readOwnerState(root, () => undefined)?.owner).toBe('left-behind');
    // Another port's record stays too; this port's moves, with the index beside it.
    writeOwnerState(root, { ...saved, port: 4002 });
    expect(moveEarlierState(root, byPort)).toEqual([]);
    writeOwnerState(root, saved);
    fs.writeFileSync(path.join(root, '.reclazz', 'classes.idx'), 'index bytes');
    expect(moveEarlierState(root, byPort).map((m) => path.basename(m.from))).toEqual(['owner.json', 'classes.idx']);
    expect(readOwnerState(byPort, () => undefined)).toEqual(saved);
    expect(readOwnerState(root, () => undefined)).toBeUndefined();
  });

  it('refuses a symbolic link in the way of the agents folder, and keeps the old token', () => {
    const root = scratch();
    const module = path.join(root, 'svc-a');
    fs.mkdirSync(module);
    writeOwnerState(module, saved);
    fs.mkdirSync(path.join(root, '.reclazz'));
    fs.symlinkSync(scratch(), path.join(root, '.reclazz', 'agents'));
    const thrown = thrownBy(() => moveEarlierState(module, agentStatePlace(root, agentAt(module))));
    expect(thrown.path).toBe(path.join(root, '.reclazz', 'agents'));
    expect(readOwnerState(module, () => undefined)?.owner).toBe('left-behind');
  });
});
