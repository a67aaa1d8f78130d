import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHierarchy } from '../../src/fake-agent/capture.js';
import { agentFor, classBytes, clientOf, finalVerify, tempDir, writeClass } from './fixture.js';
import { type LineClient } from './line-client.js';
import { waitFor } from '../support/wait.js';

const AMBIGUOUS = 'Class was not uniquely loaded before the batch, or input class names were ambiguous';

/** SCAN and wait for capture number `n`. */
async function scan(client: LineClient, agent: { captures: number }, n: number): Promise<void> {
  client.send('SCAN');
  await waitFor(() => agent.captures === n, `capture ${n}`);
}

describe('batch-wide verdicts', () => {
  it('an unreadable class file outside a hold is skipped with the ERROR, and the rest of its batch reloads (agent ReloadQueue.capture)', async () => {
    const dir = tempDir();
    for (const name of ['A', 'B', 'Bad']) writeClass(dir, `p/${name}.class`, `${name} v1`);
    const bad = join(dir, 'p', 'Bad.class');
    const agent = await agentFor({ watchDirs: [dir], unreadableClassFile: (path, className) => path === bad && className === 'p.Bad' });
    const client = await clientOf(agent);
    const a = writeClass(dir, 'p/A.class', 'A v2');
    const b = writeClass(dir, 'p/B.class', 'B v2');
    const broken = writeClass(dir, 'p/Bad.class', 'Bad v2');
    await scan(client, agent, 1);
    await client.next((e) => e.level === 'ERROR' && e.message === `Failed to read class file ${bad}: AccessDeniedException: ${bad}`);
    for (const [name, hash] of [['p.A', a], ['p.B', b]]) expect((await finalVerify(client, name, hash)).status).toBe('applied');
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

describe('restart-required changes (agent reload/StructuralReloader.java, ui/RestartLedger.java)', () => {
  const SALVAGED =
    'a.Shape: superclass change not applied; restart required. Still extends Base instead of Figure. Eligible method bodies will be attempted separately.';

  /** PENDING's lines up to its closing sentence. */
  async function pending(client: LineClient): Promise<string[]> {
    const from = client.infos().length;
    client.send('PENDING');
    await client.next((e) => e.message === 'Everything else you changed is already live.' || e.message === 'Nothing from this session needs a restart.');
    return client.infos().slice(from);
  }

  it("a configured superclass change: the agent's WARN makes the batch unverified with it, and PENDING lists it for the session", async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Shape.class', 'v1');
    writeClass(dir, 'a/Other.class', 'v1');
    const agent = await agentFor({
      watchDirs: [dir],
      restartRequired: (name) => (name === 'a.Shape' ? { from: 'a.Base', to: 'a.Figure' } : undefined),
    });
    const client = await clientOf(agent);
    expect(await pending(client)).toEqual([
      'Automatic reload: paused=false pendingClasses=0 pendingActions=0 buildHold=none',
      'Nothing from this session needs a restart.',
    ]);
    const shape = writeClass(dir, 'a/Shape.class', 'v2');
    const other = writeClass(dir, 'a/Other.class', 'v2');
    await scan(client, agent, 1);
    const warn = await client.next((e) => e.level === 'WARN');
    expect(warn.message).toBe(SALVAGED);
    for (const [name, hash] of [['a.Shape', shape], ['a.Other', other]]) {
      expect(await finalVerify(client, name, hash)).toMatchObject({ status: 'unverified', detail: `WARN: ${SALVAGED}`.slice(0, 200) });
    }
    const listed = await pending(client);
    expect(listed).toContain('One thing from this session needs a restart to take effect:');
    expect(listed).toContain('a.Shape: superclass change not applied; restart required');
    expect(listed.at(-1)).toBe('Everything else you changed is already live.');

    // A later save of the class that applies leaves the entry: the ledger is the session's history.
    const back = writeClass(dir, 'a/Shape.class', 'v3');
    await scan(client, agent, 2);
    expect((await finalVerify(client, 'a.Shape', back)).status).toBe('unverified');
    expect(await pending(client)).toContain('a.Shape: superclass change not applied; restart required (2 times)');

    await agent.restart();
    const fresh = await clientOf(agent);
    expect((await pending(fresh)).at(-1)).toBe('Nothing from this session needs a restart.');
  });

  it("a refused superclass change is failed with the agent's sentence, cut to 200 characters", async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Shape.class', 'v1');
    const refused = 'its new method typed takes or returns a.Figure';
    const agent = await agentFor({ watchDirs: [dir], restartRequired: () => ({ from: 'a.Base', to: 'a.Figure', refused }) });
    const client = await clientOf(agent);
    const shape = writeClass(dir, 'a/Shape.class', 'v2');
    await scan(client, agent, 1);
    const sentence = `a.Shape changed its superclass, and the rest of the class cannot be applied without it (${refused}). Reclazz keeps the loaded superclass. This save was refused; restart required to pick it up.`;
    expect(await finalVerify(client, 'a.Shape', shape)).toMatchObject({ status: 'failed', detail: sentence.slice(0, 200) });
    expect(await pending(client)).toContain('a.Shape: superclass change not applied; restart required');
  });

  it('real class files: a changed superclass is found by itself; a body-only or interface change is applied', async () => {
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
    expect(await finalVerify(client, 'a.Shape', moved)).toMatchObject({ status: 'unverified', detail: `WARN: ${SALVAGED}`.slice(0, 200) });
    const round = writeClass(dir, 'a/Round.class', classBytes('a.Round', 'java.lang.Object', ['a.Curved', 'a.Named']));
    await scan(client, agent, 3);
    expect((await finalVerify(client, 'a.Round', round)).status).toBe('applied');
    const listed = await pending(client);
    expect(listed).toContain('a.Shape: superclass change not applied; restart required');
    expect(listed.some((line) => line.includes('a.Round'))).toBe(false);
  });
});

describe('new classes (agent ClassReloader.handleNewClass, SpringNewBeanRegistrar)', () => {
  it('a plain new class is unverified, not loaded until first used; a registered bean is unverified and loaded; a refused one failed', async () => {
    const dir = tempDir();
    writeClass(dir, 'a/Old.class', 'v1');
    const agent = await agentFor({
      watchDirs: [dir],
      newBean: (name) => (name === 'a.Bean' ? 'registered' : name === 'a.Refused' ? 'refused' : undefined),
    });
    const client = await clientOf(agent);
    const plain = writeClass(dir, 'a/Plain.class', 'v1');
    const bean = writeClass(dir, 'a/Bean.class', 'v1');
    const refused = writeClass(dir, 'a/Refused.class', 'v1');
    await scan(client, agent, 1);
    expect(await finalVerify(client, 'a.Plain', plain)).toMatchObject({ status: 'unverified', detail: AMBIGUOUS });
    expect(await finalVerify(client, 'a.Bean', bean)).toMatchObject({ status: 'unverified', detail: AMBIGUOUS });
    expect((await finalVerify(client, 'a.Refused', refused)).status).toBe('failed');
    expect(client.infos()).toContain('New class detected: a.Plain');
    const loaded = async (name: string) => {
      client.send(`DIAGNOSE ${name}`);
      const line = await client.next((e) => e.message.startsWith('The JVM has not loaded') || e.message.startsWith('Loaded and prepared'));
      return line.message.startsWith('Loaded');
    };
    expect(await loaded('a.Plain')).toBe(false);
    expect(await loaded('a.Bean')).toBe(true);
    // Registrations are not counted in HEALTH; the plain new class is.
    client.send('HEALTH');
    await client.next((e) => e.message === '1 reload: 0 structural, 1 method bodies.');
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

