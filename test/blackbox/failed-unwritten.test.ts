/**
 * A build that fails before writing anything (Maven's "there is no POM", Gradle's "Task not
 * found") leaves no hold behind: BUILD ok releases it, capturing nothing. A failed build that
 * wrote a class file, or one after a hold that already existed, keeps the hold as before.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

async function withAgent() {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.App', 'app-v1');
  const agent = await startAgent({ dir, classes });
  return { dir, classes, agent };
}

/** The agent's build hold, by `reclazz-build status`. */
async function holdOf(dir: string): Promise<string> {
  const status = await runCli(['status'], { cwd: dir });
  return /build hold\s+(\S+)/.exec(status.stdout)?.[1] ?? `status failed: ${status.stderr}`;
}

/** A build command that writes `bytes` to the App class file, then exits 1. */
const writesThenFails = (classes: string, bytes: string) => [
  '--',
  process.execPath,
  '-e',
  `require('fs').writeFileSync(${JSON.stringify(path.join(classes, 'com', 'acme', 'App.class'))}, ${JSON.stringify(bytes)}); process.exit(1)`,
];

describe('a failed build that wrote nothing', () => {
  it('releases the hold with BUILD ok and says so; the exit status is the build’s', async () => {
    const { dir, agent } = await withAgent();
    const run = await runCli(['--', 'false'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain('the build failed (exit status 1) and wrote nothing; hold released (BUILD ok captures nothing)');
    expect(run.stderr).toContain('BUILD ok acknowledged');
    expect(agent.received.some((r) => r.line.startsWith('BUILD ok'))).toBe(true);
    expect(await holdOf(dir)).toBe('none');
  });

  it('one that wrote a class file keeps the hold (failed), and names the owner', async () => {
    const { dir, classes } = await withAgent();
    const run = await runCli(writesThenFails(classes, 'half-written'), { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain('the agent keeps holding its output for owner');
    expect(await holdOf(dir)).toBe('named');
  });

  it('after a hold an earlier failed build left, a build that writes nothing keeps it (that output is still held)', async () => {
    const { dir, classes } = await withAgent();
    expect((await runCli(writesThenFails(classes, 'half-written'), { cwd: dir })).exitCode).toBe(1);
    const again = await runCli(['--', 'false'], { cwd: dir });
    expect(again.exitCode, again.stderr).toBe(1);
    expect(again.stderr).not.toContain('hold released');
    expect(await holdOf(dir)).toBe('named');
  });
});
