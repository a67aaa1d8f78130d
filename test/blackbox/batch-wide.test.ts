/**
 * Batch-wide verdicts on the real binary (protocol.md "Batch-wide verdicts"): the same binary
 * name in two class output directories is warned about before the build, naming both paths;
 * after it, a batch the agent marked `unverified` as a whole is reported as such, with the
 * likely cause.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { runCli, writeClass } from '../support/cli.js';
import { agentFor, hasStackTrace, project } from '../support/project.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

const BATCH_WIDE =
  /warning: \d+ class\(es\) are unverified with the agent's detail "Class was not uniquely loaded before the batch, or input class names were ambiguous": each was not loaded exactly once before its reload \(a class the app had not loaded, or one loaded by two class loaders\), or its whole batch was ambiguous/;

describe('one binary name in two class output directories', () => {
  it('is warned about before the build, naming both paths', async () => {
    const p = project();
    const gradle = path.join(p.dir, 'build', 'classes', 'java', 'main');
    const stale = writeClass(gradle, 'com.acme.Greeter', 'greeter-old');
    await agentFor(p, agents, { portFile: p.portFile });
    const run = await runCli(['--', 'true'], { cwd: p.dir });
    const fresh = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const warning = run.stderr.split('\n').find((line) => line.includes('warning: com.acme.Greeter is in 2 class output directories ('));
    expect(warning, run.stderr).toBeDefined();
    expect(warning).toContain(fresh);
    expect(warning).toContain(stale);
    expect(warning).toContain('a capture holding both makes the agent mark its whole batch unverified');
    expect(run.stderr.indexOf('com.acme.Greeter is in 2')).toBeLessThan(run.stderr.indexOf('hold acquired'));
    expect(hasStackTrace(run.stderr)).toBe(false);
  });

  it('once the stale output is removed, as the warning says, no later run names it again', async () => {
    const p = project();
    const gradle = path.join(p.dir, 'build', 'classes', 'java', 'main');
    writeClass(gradle, 'com.acme.Greeter', 'greeter-old');
    await agentFor(p, agents, { portFile: p.portFile, watchDirs: [p.classes, gradle] });
    const first = await runCli(['--', 'true'], { cwd: p.dir });
    expect(first.stderr).toContain('com.acme.Greeter is in 2 class output directories');
    fs.rmSync(path.join(p.dir, 'build'), { recursive: true });
    // The first run after the removal reads the index saved before it, then scans: its file is a removal.
    const second = await runCli(['--', 'true'], { cwd: p.dir });
    expect(second.stderr).toContain('0 changed, 0 added, 1 removed');
    const fresh = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const third = await runCli(['--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(fresh)}, 'greeter-v2')`], {
      cwd: p.dir,
    });
    for (const run of [second, third]) expect(run.stderr).not.toContain('class output directories (');
    expect(third.stderr).toContain('✔ proven live');
    expect(third.exitCode).toBe(0);
  });

  it("a module's class output directory linked to another's is one folder: each class listed and asked once, no warning", async () => {
    const p = project();
    const module = path.join(p.dir, 'svc-b', 'target');
    fs.mkdirSync(module, { recursive: true });
    fs.symlinkSync(p.classes, path.join(module, 'classes'));
    await agentFor(p, agents, { portFile: p.portFile });
    const greeter = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const run = await runCli(['--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(greeter)}, 'greeter-v2')`], {
      cwd: p.dir,
    });
    expect(run.stderr).not.toContain('class output directories (');
    expect(run.stderr).toContain('class files: 1 changed, 0 added, 0 removed');
    expect(run.stderr.match(/applied +com\.acme\.Greeter/g)).toHaveLength(1);
    expect(run.exitCode).toBe(0);
  });

  it('rebuilt into both, in one capture: the batch-wide unverified is reported as such (75)', async () => {
    const p = project();
    const gradle = path.join(p.dir, 'build', 'classes', 'java', 'main');
    writeClass(gradle, 'com.acme.Outer', 'outer-v1');
    await agentFor(p, agents, { portFile: p.portFile, watchDirs: [p.classes, gradle] });
    const script = `const fs=require('fs');for (const d of ${JSON.stringify([p.classes, gradle])}) fs.writeFileSync(d+'/com/acme/Outer.class','outer-v2');fs.writeFileSync(${JSON.stringify(path.join(p.classes, 'com', 'acme', 'Greeter.class'))},'greeter-v2')`;
    const run = await runCli(['--verify-timeout', '3000', '--', process.execPath, '-e', script], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/warning: com\.acme\.Outer is in 2 class output directories/);
    expect(run.stderr).toMatch(BATCH_WIDE);
    expect(run.stderr).not.toMatch(/✔/);
  });
});
