import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHierarchy } from '../../src/fake-agent/classfile.js';
import { agentFor, classBytes, clientOf, finalVerify, tempDir, writeClass } from './fixture.js';
import { type LineClient } from './line-client.js';
import { waitFor } from '../support/wait.js';

const AMBIGUOUS = 'class was not loaded exactly once before the batch, or input class names were ambiguous';

/** SCAN and wait for capture number `n`. */
async function scan(client: LineClient, agent: { captures: number }, n: number): Promise<void> {
  client.send('SCAN');
  await waitFor(() => agent.captures === n, `capture ${n}`);
}

describe('batch-wide verdicts', () => {
  it('one unreadable class file makes every class of its batch unverified; it gets no receipt of its own', async () => {
    const dir = tempDir();
    for (const name of ['A', 'B', 'Bad']) writeClass(dir, `p/${name}.class`, `${name} v1`);
    const bad = join(dir, 'p', 'Bad.class');
    const agent = await agentFor({ watchDirs: [dir], unreadableClassFile: (path, className) => path === bad && className === 'p.Bad' });
    const client = await clientOf(agent);
    const a = writeClass(dir, 'p/A.class', 'A v2');
    const b = writeClass(dir, 'p/B.class', 'B v2');
    const broken = writeClass(dir, 'p/Bad.class', 'Bad v2');
    await scan(client, agent, 1);
    for (const [name, hash] of [['p.A', a], ['p.B', b]]) {
      expect(await finalVerify(client, name, hash)).toMatchObject({ status: 'unverified', detail: AMBIGUOUS });
    }
    expect(await client.verify('x', 'p.Bad', broken)).toMatchObject({ status: 'not_observed' });
  });

  it('without an unreadable file the same batch is applied', async () => {
    const dir = tempDir();
    for (const name of ['A', 'B']) writeClass(dir, `p/${name}.class`, `${name} v1`);
    const agent = await agentFor({ watchDirs: [dir], unreadableClassFile: () => false });
    const client = await clientOf(agent);
    const a = writeClass(dir, 'p/A.class', 'A v2');
    await scan(client, agent, 1);
    expect((await finalVerify(client, 'p.A', a)).status).toBe('applied');
  });

  it('two class files with one binary name make the whole batch unverified, other classes included', async () => {
    const one = tempDir();
    const two = tempDir();
    writeClass(one, 'A.class', 'v1');
    writeClass(two, 'A.class', 'v1');
    writeClass(one, 'Other.class', 'v1');
    const agent = await agentFor({ watchDirs: [one, two] });
    const client = await clientOf(agent);
    writeClass(one, 'A.class', 'v2 one');
    const second = writeClass(two, 'A.class', 'v2 two');
    const other = writeClass(one, 'Other.class', 'v2');
    await scan(client, agent, 1);
    expect(await finalVerify(client, 'Other', other)).toMatchObject({ status: 'unverified', detail: AMBIGUOUS });
    // One attempt per name: the later file's bytes.
    expect(await finalVerify(client, 'A', second)).toMatchObject({ status: 'unverified', source: join(two, 'A.class') });
  });

  it('a new batch forgets older receipts read from the same file', async () => {
    const dir = tempDir();
    writeClass(dir, 'p/A.class', 'v1');
    const file = join(dir, 'p', 'A.class');
    let unreadable = false;
    const agent = await agentFor({ watchDirs: [dir], unreadableClassFile: () => unreadable });
    const client = await clientOf(agent);
    const v2 = writeClass(dir, 'p/A.class', 'v2');
    await scan(client, agent, 1);
    expect(await finalVerify(client, 'p.A', v2)).toMatchObject({ status: 'applied', source: file });
    // The file now holds bytes the agent cannot read: the applied receipt for v2 is gone.
    unreadable = true;
    writeClass(dir, 'p/A.class', 'garbage');
    await scan(client, agent, 2);
    expect(await client.verify('after', 'p.A', v2)).toMatchObject({ status: 'not_observed', observedSha256: '' });
  });

  it('VERIFY source and detail are cut to 200 characters', async () => {
    const root = tempDir();
    const deep = join(root, 'd'.repeat(120), 'e'.repeat(120));
    mkdirSync(deep, { recursive: true });
    writeClass(deep, 'A.class', 'v1');
    writeClass(deep, 'B.class', 'v1');
    const agent = await agentFor({ watchDirs: [deep], reloadMs: 100 });
    const client = await clientOf(agent);
    const a = writeClass(deep, 'A.class', 'v2');
    writeClass(deep, 'B.class', 'v2');
    await scan(client, agent, 1);
    agent.broadcast('WARN', `a long warning ${'w'.repeat(300)}`);
    const result = await finalVerify(client, 'A', a);
    expect(result.source).toBe(join(deep, 'A.class').slice(0, 200));
    expect(result.detail).toBe(`WARN: a long warning ${'w'.repeat(300)}`.slice(0, 200));
    expect(result.status).toBe('unverified');
  });
});

describe('restart-required changes', () => {
  it('a configured hierarchy change is unverified with a WARN naming it, the batch with it, and PENDING lists it', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Shape.class', 'v1');
    writeClass(dir, 'a/Other.class', 'v1');
    const agent = await agentFor({
      watchDirs: [dir],
      restartRequired: (name) => (name === 'a.Shape' ? 'superclass a.Base -> a.Figure' : undefined),
    });
    const client = await clientOf(agent);
    const shape = writeClass(dir, 'a/Shape.class', 'v2');
    const other = writeClass(dir, 'a/Other.class', 'v2');
    await scan(client, agent, 1);
    const warn = await client.next((e) => e.level === 'WARN');
    expect(warn.message).toBe('Hierarchy of a.Shape changed (superclass a.Base -> a.Figure); restart required to apply it');
    for (const [name, hash] of [['a.Shape', shape], ['a.Other', other]]) {
      expect(await finalVerify(client, name, hash)).toMatchObject({ status: 'unverified', detail: `WARN: ${warn.message}` });
    }
    client.send('PENDING');
    await client.next((e) => e.message === 'Restart required: a.Shape: superclass a.Base -> a.Figure');
    expect(client.infos()).not.toContain('No restart-required changes recorded in this session');

    // A later ordinary change of the other class applies, and the note stays for the session.
    const again = writeClass(dir, 'a/Other.class', 'v3');
    await scan(client, agent, 2);
    expect((await finalVerify(client, 'a.Other', again)).status).toBe('applied');
    client.send('PENDING');
    await client.next((e) => e.message.startsWith('Pending: '));
    await client.next((e) => e.message === 'Restart required: a.Shape: superclass a.Base -> a.Figure');

    await agent.restart();
    const fresh = await clientOf(agent);
    fresh.send('PENDING');
    await fresh.next((e) => e.message === 'No restart-required changes recorded in this session');
  });

  it('real class files: a changed superclass or interface list is found by itself; a body-only change is applied', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Shape.class', classBytes('a.Shape', 'a.Base'));
    writeClass(dir, 'a/Round.class', classBytes('a.Round', 'java.lang.Object', ['a.Curved']));
    const agent = await agentFor({ watchDirs: [dir] });
    const client = await clientOf(agent);

    const body = writeClass(dir, 'a/Shape.class', classBytes('a.Shape', 'a.Base', [], 7));
    await scan(client, agent, 1);
    expect((await finalVerify(client, 'a.Shape', body)).status).toBe('applied');

    const moved = writeClass(dir, 'a/Shape.class', classBytes('a.Shape', 'a.Figure'));
    await scan(client, agent, 2);
    expect(await finalVerify(client, 'a.Shape', moved)).toMatchObject({
      status: 'unverified',
      detail: 'WARN: Hierarchy of a.Shape changed (superclass a.Base -> a.Figure); restart required to apply it',
    });
    const round = writeClass(dir, 'a/Round.class', classBytes('a.Round', 'java.lang.Object', ['a.Curved', 'a.Named']));
    await scan(client, agent, 3);
    expect((await finalVerify(client, 'a.Round', round)).status).toBe('unverified');
    client.send('PENDING');
    await client.next((e) => e.message === 'Restart required: a.Round: interfaces [a.Curved] -> [a.Curved, a.Named]');
    expect(client.infos()).toContain('Restart required: a.Shape: superclass a.Base -> a.Figure');
  });
});

describe('class file reader', () => {
  it('reads superclass and interfaces past long constants, and refuses what is not a class file', () => {
    expect(readHierarchy(classBytes('a.B', 'a.C', ['x.I', 'y.J'], 3))).toEqual({ superclass: 'a.C', interfaces: ['x.I', 'y.J'] });
    expect(readHierarchy(Buffer.from('v1'))).toBeNull();
    expect(readHierarchy(classBytes('a.B', 'a.C').subarray(0, 30))).toBeNull();
  });

  it.skipIf(!hasJavac())('reads what javac writes', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'Shape.java'), 'public class Shape extends java.util.AbstractList<String> implements java.io.Serializable, Runnable {\n' +
      '  static final long BIG = 1234567890123L; static final double PI = 3.14159;\n' +
      '  public String get(int i) { return "x" + BIG + PI; } public int size() { return 0; } public void run() {} }\n');
    execFileSync('javac', ['-d', dir, join(dir, 'Shape.java')]);
    expect(readHierarchy(readFileSync(join(dir, 'Shape.class')))).toEqual({
      superclass: 'java.util.AbstractList',
      interfaces: ['java.io.Serializable', 'java.lang.Runnable'],
    });
  });
});

function hasJavac(): boolean {
  try {
    execFileSync('javac', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

