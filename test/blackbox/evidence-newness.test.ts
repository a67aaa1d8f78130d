/**
 * Issue 25, case 1, on the real binary against the fake agent: a class file is new to the JVM
 * only when the record shows that its path held no class in the agent session. A class the app
 * loaded, deleted outside reclazz-build and rebuilt is asked about like any other, so its failed
 * reload is shown, never waved through as `added`; and running again changes nothing without new
 * evidence. (The same with real Maven's `mvn clean`: test/e2e/evidence-maven.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCommand } from '../support/project.js';
import { sleep, waitFor } from '../support/wait.js';
import { classFile, compileOutside, expectNotLive, failing, run, sha, useProjects, WATCHER } from '../support/evidence.js';

const projectWithAgent = useProjects();

describe('a class the app loaded, deleted outside reclazz-build, then rebuilt', () => {
  it('one class file deleted by hand before the first run: asked, its failed reload shown; run again, still not live', async () => {
    const { p } = await projectWithAgent(failing('greeter-v2'));
    fs.rmSync(classFile(p, 'com.acme.Greeter'));
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expectNotLive(first, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it('the whole class output directory deleted by hand (a `mvn clean`): every rebuilt class is asked, none is added', async () => {
    const { p, agent } = await projectWithAgent(failing('greeter-v2'));
    fs.rmSync(p.classes, { recursive: true });
    const writes = { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer': 'outer-v1', 'com.acme.Outer$Inner': 'inner-v1' };
    const first = await run(p, ['--verify-timeout', '2000', ...buildCommand(p, { writes })]);
    expectNotLive(first, 'com.acme.Greeter', 'failed');
    expect(first.stderr).not.toMatch(/added\s+com\.acme\.Outer/);
    expect(agent.received.some((r) => r.line.endsWith(` com.acme.Outer ${sha('outer-v1')}`))).toBe(true);
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it('classes.idx lost on a later run, after a class file was deleted by hand: asked, not added', async () => {
    const { p } = await projectWithAgent(failing('greeter-v2'));
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    fs.rmSync(classFile(p, 'com.acme.Greeter'));
    fs.rmSync(path.join(p.dir, '.reclazz', 'classes.idx'));
    const lost = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expectNotLive(lost, 'com.acme.Greeter', 'failed');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it('with the record kept: a class an outside compile added (the app may have loaded it), deleted between runs and rebuilt, is asked', async () => {
    const { p, agent } = await projectWithAgent(WATCHER);
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const captures = agent.captures;
    compileOutside(p, 'com.acme.Fresh', 'fresh-v1');
    await waitFor(() => agent.captures > captures, "the agent's watcher to take the outside compile");
    await sleep(100); // its reload (20 ms) has ended
    fs.rmSync(classFile(p, 'com.acme.Fresh'));
    const rebuilt = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v2' } }));
    // The agent's receipt for a class the app had not loaded is never `applied` (`unverified`), and before the
    // capture of these bytes it names the outside compile's (`mismatch`): what the app runs is unknown.
    expectNotLive(rebuilt, 'com.acme.Fresh', '(?:unverified|mismatch)');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Fresh', 'unverified');
  });
});

describe('a class new to the JVM', () => {
  it('written by a later build where the record shows its folder held nothing else since the start: asked until its receipt, then added', async () => {
    const { p, agent } = await projectWithAgent();
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const sent = agent.received.length;
    const added = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v1', 'com.acme.util.Helper': 'helper-v1' } }));
    expect(added.stderr).toMatch(/added\s+com\.acme\.Fresh\b/);
    expect(added.stderr).toMatch(/added\s+com\.acme\.util\.Helper\b/);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(added.stderr).toContain('new: the JVM has not loaded it (DIAGNOSE), so it loads these bytes on first use');
    expectAskedThenDiagnosed(agent.received.slice(sent), ['com.acme.Fresh', 'com.acme.util.Helper']);
  });

  it('written by a build that failed and again by the build that fixed it (the hold kept between them): added', async () => {
    const { p, agent } = await projectWithAgent();
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const failed = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-half' }, exit: 1 }));
    expect(failed.exitCode, failed.stderr).toBe(1);
    const sent = agent.received.length;
    const fixed = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v1' } }));
    expect(fixed.stderr).toMatch(/added\s+com\.acme\.Fresh\b/);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expectAskedThenDiagnosed(agent.received.slice(sent), ['com.acme.Fresh']);
  });

  it('written again with the same bytes by the next build: still new, and the ✔ line counts it as new, not as a rewrite the agent saw', async () => {
    const { p } = await projectWithAgent();
    const added = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Fresh': 'fresh-v1' } }));
    expect(added.exitCode, added.stderr).toBe(0);
    const again = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3', 'com.acme.Fresh': 'fresh-v1' } }));
    expect(again.stderr).toMatch(/unchanged\s+com\.acme\.Fresh\s+new to the JVM/);
    expect(again.stderr).toContain(
      '✔ proven live: all 2 class(es) checked are live: 1 VERIFY applied (SHA-256 matched), 1 new to the JVM (DIAGNOSE: not loaded yet, so it loads these bytes on first use)',
    );
    expect(again.exitCode, again.stderr).toBe(0);
  });
});

describe('a class new to the JVM that the agent registers (issue 24, item 3; agent SpringNewBeanRegistrar)', () => {
  it('a refused registration is a failed receipt: not live, exit 75', async () => {
    const { p } = await projectWithAgent({ newBean: (name) => (name === 'com.acme.Fresh' ? 'refused' : undefined) });
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const added = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v1' } }));
    expectNotLive(added, 'com.acme.Fresh', 'failed');
  });

  it('registered, so the JVM has loaded it (DIAGNOSE): its unverified receipt proves nothing, exit 75', async () => {
    const { p } = await projectWithAgent({ newBean: (name) => (name === 'com.acme.Fresh' ? 'registered' : undefined) });
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const added = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v1' } }));
    expectNotLive(added, 'com.acme.Fresh', 'unverified');
    expect(added.stderr).toContain('DIAGNOSE: Compiled file: ');
    expect(added.stderr).toContain('Loaded and prepared by the agent');
  });
});

/** Each of `names` was asked VERIFY, then DIAGNOSE, in the lines `received`. */
function expectAskedThenDiagnosed(received: readonly { line: string }[], names: readonly string[]): void {
  for (const name of names) {
    const verify = received.findIndex((r) => r.line.startsWith(`VERIFY `) && r.line.split(' ')[2] === name);
    expect(verify).toBeGreaterThanOrEqual(0);
    expect(received.findIndex((r) => r.line === `DIAGNOSE ${name}`)).toBeGreaterThan(verify);
  }
}
