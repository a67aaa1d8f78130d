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
  it('written by a later build where the record shows its folder held nothing else since the start: added, not asked', async () => {
    const { p, agent } = await projectWithAgent();
    const recorded = await run(p, buildCommand(p));
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const sent = agent.received.length;
    const added = await run(p, buildCommand(p, { writes: { 'com.acme.Fresh': 'fresh-v1', 'com.acme.util.Helper': 'helper-v1' } }));
    expect(added.stderr).toMatch(/added\s+com\.acme\.Fresh\b/);
    expect(added.stderr).toMatch(/added\s+com\.acme\.util\.Helper\b/);
    expect(added.exitCode, added.stderr).toBe(0);
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
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
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
  });
});
