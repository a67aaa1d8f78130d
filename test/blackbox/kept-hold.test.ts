/**
 * Issue 24, item 1, on the real binary against the fake agent (modelled on the agent's
 * ReloadQueue.acceptBuild and capture): a held capture that cannot read a pending class file (one
 * the build deleted: the agent ignores DELETE events) broadcasts ERROR `Failed to read class file
 * <path>: ...` and keeps the hold with its owner although `ok` was acknowledged. The run names the
 * file and the kept hold, ends 75 without waiting for the deadline, and keeps owner.json as held;
 * once a class file exists at that path again, the next run recovers the hold with the same owner.
 * A run against another agent by its port number never takes the owner token of a kept hold.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { afterThisTest } from '../support/cleanup.js';
import { runCli } from '../support/cli.js';
import { buildCommand } from '../support/project.js';
import { scratchDir } from '../support/scratch.js';
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

/** How a run is given an agent's port number: an option, the environment, or the configuration file. */
interface ByPort {
  args?: string[];
  env?: Record<string, string>;
  config?: { port: number };
}

describe('a kept hold and a run against another agent by its port number', () => {
  it.each<[string, (port: number) => ByPort]>([
    ['--port', (port: number) => ({ args: ['--port', String(port)] })],
    ['RECLAZZ_PORT', (port: number) => ({ env: { RECLAZZ_PORT: String(port) } })],
    ['a port in the configuration file', (port: number) => ({ config: { port } })],
  ])("%s: the held build's owner token is kept, and the next run here releases the hold with it", async (_, how) => {
    const { p, agent } = await projectWithAgent();
    // A second app of this project, another JVM with its own agent, found by its port number only.
    const other = await startFakeAgent({ portFile: path.join(scratchDir(), 'agent.port'), appDir: p.dir, watchDirs: [p.classes] });
    afterThisTest(() => other.stop());
    const failed = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' }, exit: 1 }));
    expect(failed.exitCode, failed.stderr).toBe(1);
    const owner = agent.hold().owner!;
    const byPort = how(other.port);
    if (byPort.config !== undefined) fs.writeFileSync(path.join(p.dir, 'reclazz.config.json'), JSON.stringify(byPort.config));
    const elsewhere = await runCli([...(byPort.args ?? []), '--', 'true'], {
      cwd: p.dir,
      ...(byPort.env === undefined ? {} : { env: byPort.env }),
    });
    // It held and built against the other agent, under a token of its own.
    expect(
      other.received.some((r) => /^BUILD started /i.test(r.line)),
      elsewhere.stderr,
    ).toBe(true);
    expect(elsewhere.stderr).not.toContain(owner);
    expect(JSON.parse(fs.readFileSync(path.join(p.dir, '.reclazz', 'owner.json'), 'utf8'))).toMatchObject({ owner, held: true });
    if (byPort.config !== undefined) fs.rmSync(path.join(p.dir, 'reclazz.config.json'));
    // The hold is released with its token, as the failed run said: reclazz-build -- true.
    const released = await run(p, ['--wait', '2000', '--', 'true']);
    expect(released.stderr).toContain(`owner token ${owner}`);
    expect(released.exitCode, released.stderr).toBe(0);
    expect(agent.hold().kind).toBe('none');
  });
});

describe('one agent reached by its port file and by its port number', () => {
  it.each([
    ['a --port run left it held; a plain run', true],
    ['a plain run left it held; a --port run', false],
  ])('%s recovers the hold with the same owner token', async (_, portFirst) => {
    const { p, agent } = await projectWithAgent();
    const byPort = ['--port', String(agent.port)];
    const failed = await run(p, [
      ...(portFirst ? byPort : []),
      ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' }, exit: 1 }),
    ]);
    expect(failed.exitCode, failed.stderr).toBe(1);
    const owner = agent.hold().owner!;
    expect(failed.stderr).toContain(owner);
    const next = await run(p, [...(portFirst ? [] : byPort), '--wait', '2000', '--', 'true']);
    expect(next.stderr).toContain(`owner token ${owner}`);
    expect(next.stderr).not.toMatch(/restart the app/);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(agent.hold().kind).toBe('none');
  });
});

describe('runs that alternate between the port file and the port number', () => {
  it("keep one record of the agent: one form's class index is the other's, and no second folder is made", async () => {
    const { p, agent } = await projectWithAgent();
    const byPort = ['--port', String(agent.port)];
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(first.exitCode, first.stderr).toBe(0);
    const second = await run(p, [...byPort, ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } })]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/class files: 1 changed/);
    const third = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v4' } }));
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stderr).toMatch(/class files: 1 changed/);
    expect(fs.existsSync(path.join(p.dir, '.reclazz', 'agents', `port-${agent.port}`))).toBe(false);
  });
});
