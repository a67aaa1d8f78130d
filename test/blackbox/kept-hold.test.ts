/**
 * Issue 24, item 1, on the real binary against the fake agent (modelled on the agent's
 * ReloadQueue.acceptBuild and capture): a held capture that cannot read a pending class file (one
 * the build deleted: the agent ignores DELETE events) broadcasts ERROR `Failed to read class file
 * <path>: ...` and keeps the hold with its owner although `ok` was acknowledged. The run names the
 * file and the kept hold, ends 75 without waiting for the deadline, and keeps owner.json as held;
 * once a class file exists at that path again, the next run recovers the hold with the same owner.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCommand } from '../support/project.js';
import { classFile, run, script, useProjects } from '../support/evidence.js';

const projectWithAgent = useProjects();

/** Well below the run's --verify-timeout: the run ends on the agent's words, not on the deadline. */
const VERIFY_TIMEOUT_MS = 60_000;

describe('a held class file the capture cannot read', () => {
  it('keeps the hold after an acknowledged ok: named, 75 at once, owner.json held; recovered once the file exists again', async () => {
    const { p, agent } = await projectWithAgent();
    const inner = classFile(p, 'com.acme.Greeter$1');
    // A build that fails after writing an inner class: its files stay held for the next build.
    const failed = await run(
      p,
      buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Greeter$1': 'inner-v1' }, exit: 1 }),
    );
    expect(failed.exitCode, failed.stderr).toBe(1);
    const owner = agent.hold().owner!;
    // The fix has no inner class any more: the build deletes its class file.
    const fix = script(
      `fs.rmSync(${JSON.stringify(inner)}); fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v3');`,
    );
    const started = performance.now();
    const kept = await run(p, ['--verify-timeout', String(VERIFY_TIMEOUT_MS), ...fix]);
    expect(kept.exitCode, kept.stderr).toBe(75);
    expect(performance.now() - started).toBeLessThan(VERIFY_TIMEOUT_MS / 2);
    expect(kept.stderr).toContain(`Failed to read class file ${inner}: NoSuchFileException`);
    expect(kept.stderr).toContain(`the agent could not read ${inner} when it captured this build`);
    expect(kept.stderr).toContain(`STILL HOLDS the build for owner ${owner}`);
    expect(kept.stderr).toContain('until a class file exists there again or the app restarts');
    expect(kept.stderr).not.toContain('✔');
    expect(agent.hold()).toMatchObject({ kind: 'named', owner });
    const saved = JSON.parse(fs.readFileSync(path.join(p.dir, '.reclazz', 'owner.json'), 'utf8'));
    expect(saved).toMatchObject({ owner, held: true });
    // The inner class rebuilt: the next run takes the hold back with the same owner, and the capture succeeds.
    const rebuilt = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter$1': 'inner-v2' } }));
    expect(rebuilt.exitCode, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toContain(`owner token ${owner}`);
    expect(agent.hold().kind).toBe('none');
  });
});
