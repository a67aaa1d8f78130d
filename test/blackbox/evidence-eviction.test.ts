/**
 * Issue 25, case 4, on the real binary against the fake agent: a `not_observed` reads as
 * "identical bytes" only while no receipt for the class can have been evicted, by the agent's own
 * count of reloads and failures since it started (HEALTH): below its 512 receipts. Reloads this
 * checkout never asked about count too, and an agent that gives no count proves nothing this way.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCommand } from '../support/project.js';
import { sleep, waitFor } from '../support/wait.js';
import { compileOutside, expectNotLive, failing, run, useProjects, WATCHER } from '../support/evidence.js';
import { writeClass } from '../support/cli.js';

const projectWithAgent = useProjects();

/** Longer than the agent's watcher may take to notice a rewrite (classes/evidence.ts WATCHER_NOTICE_MS). */
const NOTICED_MS = 3200;
/** More classes than the agent keeps receipts for. */
const FILLERS = 520;

describe("a receipt pushed out of the agent's 512", () => {
  it('a class compiled outside whose reload failed, then 512+ other reloads: its not_observed is not "unchanged"; run again, still not', async () => {
    // Another module the app watches, which this checkout does not check (the agent's list of watched folders is cut short).
    const elsewhere = (dir: string) => path.join(dir, 'elsewhere', 'classes');
    const fillers = Array.from({ length: FILLERS }, (_, i) => `org.other.Filler${i}`);
    const { p, agent } = await projectWithAgent(
      (project) => ({
        ...WATCHER,
        ...failing('greeter-v2'),
        watchDirs: [project.classes, elsewhere(project.dir)],
        forceWatchSampleTruncated: true,
      }),
      (project) => {
        for (const name of fillers) writeClass(elsewhere(project.dir), name, 'v1');
      },
    );
    // Recorded live by its age first; a no-attempt answer for bytes that came after the app started proves nothing anyway.
    expect((await run(p, ['--', 'true'])).exitCode).toBe(0);
    let captures = agent.captures;
    compileOutside(p, 'com.acme.Greeter', 'greeter-v2');
    await waitFor(() => agent.captures > captures, "the agent's watcher to take the outside compile");
    captures = agent.captures;
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    await waitFor(() => agent.captures > captures, "the agent's watcher to take the compile back to the recorded bytes");
    captures = agent.captures;
    for (const name of fillers) writeClass(elsewhere(p.dir), name, 'v2');
    await waitFor(() => agent.captures > captures, "the agent's watcher to take the other module's rewrite");
    await sleep(NOTICED_MS); // the reloads (20 ms) ended, and Greeter's rewrite is old enough to have been noticed
    const first = await run(p, buildCommand(p));
    expectNotLive(first, 'com.acme.Greeter', 'not-observed');
    expect(first.stderr).toMatch(/the agent made 522 reload attempts in this app session, so a receipt may have been evicted/);
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'not-observed');
  });
});

describe('an agent that gives no count of its reloads', () => {
  it('bytes known live rewritten identically after the app started are not proven unchanged: a receipt may have been evicted', async () => {
    const { p } = await projectWithAgent({ intercept: (cmd) => (cmd.verb === 'HEALTH' ? { kind: 'ignore' } : undefined) });
    // Recorded live by its age first; a no-attempt answer for bytes that came after the app started proves nothing anyway.
    expect((await run(p, ['--', 'true'])).exitCode).toBe(0);
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    await sleep(NOTICED_MS);
    const first = await run(p, buildCommand(p));
    expectNotLive(first, 'com.acme.Greeter', 'not-observed');
    expect(first.stderr).toContain('the agent did not say how many classes it reloaded in this app session (HEALTH)');
    const again = await run(p, buildCommand(p));
    expectNotLive(again, 'com.acme.Greeter', 'not-observed');
  });
});
