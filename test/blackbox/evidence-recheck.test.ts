/**
 * Issue 25, case 3, on the real binary against the fake agent: a recorded proof is not trusted
 * after the file was rewritten (its stamp moved), since the JVM may have moved on in between: it
 * is asked once. `applied`, or `not_observed` (the agent skips identical bytes), keeps it, so the
 * everyday recompile that rewrites a whole module with mostly identical bytes stays green.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCommand, type Project } from '../support/project.js';
import { sleep, waitFor } from '../support/wait.js';
import { classFile, compileOutside, expectNotLive, run, script, sha, useProjects, WATCHER } from '../support/evidence.js';

const projectWithAgent = useProjects();

const CLASSES = ['com.acme.Greeter', 'com.acme.Outer', 'com.acme.Outer$Inner'];

/** A build that writes every class file anew (a new inode each, as Maven's recompile of a module does), with `bytes` where given. */
function recompile(p: Project, bytes: Record<string, string> = {}): string[] {
  const files = CLASSES.map((name) => [classFile(p, name), bytes[name] ?? null]);
  return script(
    `for (const [file, bytes] of ${JSON.stringify(files)}) { const old = fs.readFileSync(file); fs.rmSync(file); fs.writeFileSync(file, bytes ?? old); }`,
  );
}

describe('a proof recorded earlier, after the JVM moved on', () => {
  it('proven, then reloaded with other bytes by an outside compile, then put back (its stamp moved): asked once, not live', async () => {
    let putBack = false;
    const { p, agent } = await projectWithAgent({
      ...WATCHER,
      // The app cannot take the proven bytes back once it runs the outside compile's.
      verifyStatus: (name, hash) => (putBack && name === 'com.acme.Greeter' && hash === sha('greeter-v2') ? 'failed' : undefined),
    });
    const proven = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(proven.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    expect(proven.exitCode, proven.stderr).toBe(0);
    for (const bytes of ['greeter-v3', 'greeter-v2']) {
      const captures = agent.captures;
      putBack = bytes === 'greeter-v2';
      compileOutside(p, 'com.acme.Greeter', bytes);
      await waitFor(() => agent.captures > captures, `the agent's watcher to take ${bytes}`);
      await sleep(100); // its reload (20 ms) has ended
    }
    const next = await run(p, buildCommand(p));
    expectNotLive(next, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });
});

describe('the everyday recompile of a whole module', () => {
  it('rewriting every class file, most with identical bytes, stays exit 0 run after run: each rewritten file is asked once', async () => {
    const { p, agent } = await projectWithAgent();
    const edited = await run(p, recompile(p, { 'com.acme.Greeter': 'greeter-v2' }));
    expect(edited.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    expect(edited.stderr).toMatch(/unchanged\s+com\.acme\.Outer\s+rewritten with the bytes known live/);
    expect(edited.exitCode, edited.stderr).toBe(0);
    for (const round of [1, 2]) {
      const sent = agent.received.length;
      const same = await run(p, recompile(p));
      expect(same.exitCode, `round ${round}: ${same.stderr}`).toBe(0);
      const asked = agent.received.slice(sent).filter((r) => r.line.startsWith('VERIFY '));
      expect(asked.map((r) => r.line.split(' ')[2]).sort()).toEqual([...CLASSES].sort());
    }
    // Nothing rewritten: nothing asked.
    const sent = agent.received.length;
    const quiet = await run(p, buildCommand(p));
    expect(quiet.exitCode, quiet.stderr).toBe(0);
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
    expect(fs.readFileSync(classFile(p, 'com.acme.Greeter'), 'utf8')).toBe('greeter-v2');
  });
});
