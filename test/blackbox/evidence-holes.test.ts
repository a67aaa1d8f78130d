/**
 * The holes of issue 11, each on the real binary against the fake agent: places where a run
 * said "✔ proven live" and exited 0 while the app ran old or unknown code. Each test failed
 * before the evidence rule (classes/evidence.ts) closed its hole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli, tempDir } from '../support/cli.js';
import { appStartsLater } from '../support/agents.js';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { buildCommand } from '../support/project.js';
import {
  classFile,
  compileOutside,
  deletes,
  failing,
  giveToNobody,
  indexRows,
  reloadsEnded,
  run,
  script,
  sha,
  useProjects,
  WATCHER,
} from '../support/evidence.js';
import { waitFor } from '../support/wait.js';

const projectWithAgent = useProjects();

describe('hole 1: the first run in an agent session after an outside compile', () => {
  it('a class compiled outside reclazz-build after the app started, whose reload failed, is not proven by a build that changes nothing', async () => {
    const { p, agent } = await projectWithAgent({ ...WATCHER, ...failing('greeter-v2') });
    // The agent's watcher tries the outside compile, and its reload fails.
    await reloadsEnded(agent, ['com.acme.Greeter'], () => compileOutside(p, 'com.acme.Greeter', 'greeter-v2'));
    const result = await run(p, buildCommand(p));
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(/failed\s+com\.acme\.Greeter/);
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe('hole 2: nothing could be checked', () => {
  it('no class output directory found: exit 75, says so, never "proven live"; --no-verify keeps 0 and says NOT proven', async () => {
    const dir = tempDir();
    await appStartsLater();
    const agent = await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), captureDelayMs: 10 });
    try {
      const result = await run({ dir } as never, ['--', 'true']);
      expect(result.exitCode, result.stderr).toBe(75);
      expect(result.stderr).toContain('no class output directory found');
      expect(result.stderr).not.toContain('✔');
      const skipped = await run({ dir } as never, ['--no-verify', '--', 'true']);
      expect(skipped.exitCode, skipped.stderr).toBe(0);
      expect(skipped.stderr).toContain('NOT proven live');
    } finally {
      await agent.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('hole 3: a class folder that cannot be read', () => {
  it('is named in a warning, the run exits 75, its rows stay in the index, and the next run does not call its classes added', async () => {
    const { p } = await projectWithAgent({}, (project) => compileOutside(project, 'com.acme.hidden.Secret', 'secret-v1'));
    const hidden = path.dirname(classFile(p, 'com.acme.hidden.Secret'));
    // The first run records the classes; the others go as another user (root reads every folder),
    // who cannot see the app's process: the record is what they have.
    const first = await run(p, buildCommand(p));
    expect(first.exitCode, first.stderr).toBe(0);
    giveToNobody(p);
    fs.chmodSync(hidden, 0);
    try {
      const blind = await run(p, buildCommand(p), { unprivileged: true });
      expect(blind.stderr).toContain(
        `cannot list 1 folder(s) of class files, so their files are not checked and their record is kept (${hidden})`,
      );
      expect(blind.stderr).not.toContain('✔');
      expect(blind.exitCode, blind.stderr).toBe(75);
      expect(indexRows(p).get(classFile(p, 'com.acme.hidden.Secret'))).toEqual({ gone: false });
    } finally {
      fs.chmodSync(hidden, 0o755);
    }
    const again = await run(p, buildCommand(p), { unprivileged: true });
    expect(again.stderr).not.toMatch(/added\s+com\.acme\.hidden\.Secret/);
    // While the folder could not be listed, a class may have come and gone there unrecorded (a bean the
    // agent registered, which HEALTH does not count): a not_observed no longer shows "no attempt".
    expect(again.stderr).not.toContain('✔');
    expect(again.exitCode, again.stderr).toBe(75);
  });
});

describe('hole 4: a class removed by one run and re-created by a later one', () => {
  it('is verified when it comes back, since the app still has it loaded: a failed reload is not proven', async () => {
    const { p, agent } = await projectWithAgent(failing('greeter-v2'));
    const removed = await run(p, deletes(p, 'com.acme.Greeter'));
    expect(removed.stderr).toMatch(/removed\s+com\.acme\.Greeter/);
    expect(removed.exitCode, removed.stderr).toBe(0);
    const back = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(back.stderr).not.toMatch(/added\s+com\.acme\.Greeter/);
    expect(agent.received.some((r) => r.line.endsWith(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
    expect(back.stderr).toMatch(/failed\s+com\.acme\.Greeter/);
    expect(back.exitCode, back.stderr).toBe(75);
  });

  it('comes back applied: proven by VERIFY, not waved through as new', async () => {
    const { p, agent } = await projectWithAgent();
    expect((await run(p, deletes(p, 'com.acme.Outer'))).exitCode).toBe(0);
    const back = await run(p, buildCommand(p, { writes: { 'com.acme.Outer': 'outer-v2' } }));
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.stderr).toMatch(/applied\s+com\.acme\.Outer/);
    expect(agent.received.some((r) => r.line.endsWith(` com.acme.Outer ${sha('outer-v2')}`))).toBe(true);
  });
});

describe('hole 6: the agent restarted on the same port (a new session)', () => {
  it('"run again" checks the files written after the restart: a failed reload is not proven, an applied one is', async () => {
    const { p, agent } = await projectWithAgent({ ...WATCHER, ...failing('greeter-v2') });
    const go = path.join(p.dir, 'go');
    // Waits for `go`, then writes Greeter and Outer: after the app restarted under the build.
    const slow = script(
      `fs.writeFileSync(${JSON.stringify(p.marker)}, 'started');` +
        `const t = setInterval(() => { if (!fs.existsSync(${JSON.stringify(go)})) return; clearInterval(t);` +
        `fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2');` +
        `fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Outer'))}, 'outer-v2'); }, 10);`,
    );
    const first = startCli(slow, { cwd: p.dir });
    await waitFor(() => fs.existsSync(p.marker), 'the build to start');
    await agent.restart();
    let lost!: Awaited<typeof first>;
    // The new session's watcher tries the writes: Greeter's reload fails, Outer's is applied.
    await reloadsEnded(agent, ['com.acme.Greeter', 'com.acme.Outer'], async () => {
      fs.writeFileSync(go, '');
      lost = await first;
    });
    expect(lost.exitCode, String(lost.stderr)).toBe(70);
    expect(String(lost.stderr)).toContain('run again');
    const again = await run(p, buildCommand(p));
    expect(again.stderr).not.toContain('✔');
    expect(again.stderr).toMatch(/failed\s+com\.acme\.Greeter/);
    expect(again.stderr).toMatch(/applied\s+com\.acme\.Outer/);
    expect(again.exitCode, again.stderr).toBe(75);
  });
});

describe('hole 7: a fixed build after a failed reload', () => {
  it('a mismatch naming the bytes of the failed build means "not captured yet": polled until the fix is applied', async () => {
    // The capture comes late enough that VERIFY first sees the agent's last attempt: the failed bytes.
    const { p, agent } = await projectWithAgent({ captureDelayMs: 400, ...failing('greeter-v2') });
    const broken = await run(p, ['--verify-timeout', '3000', ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } })]);
    expect(broken.exitCode, broken.stderr).toBe(75);
    const fixed = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } }));
    expect(fixed.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(agent.received.filter((r) => r.line.endsWith(` com.acme.Greeter ${sha('greeter-v3')}`)).length).toBeGreaterThan(1);
  });
});
