/**
 * Watch mode on the real Maven and Gradle fixtures: the watch is started, Greeter.java is edited
 * three times (a change, a compile error, the fix), and each save makes one cycle of the real
 * build tool on one connection: verdicts 0, build failed (the agent keeps holding), 0 with the
 * hold recovered. A missing mvn or gradle FAILS these tests (compiledFixture throws).
 */
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { startCli } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { CLASS_OUTPUT_DIR, editGreeting, fixCompileError, introduceCompileError, type AppFixture } from '../support/fixtures.js';
import { sleep, waitFor } from '../support/wait.js';

const TOOL_ARGS: Record<AppFixture, { tool: 'mvn' | 'gradle'; args: string[] }> = {
  'maven-app': { tool: 'mvn', args: ['-q', 'compile'] },
  'gradle-app': { tool: 'gradle', args: ['--offline', '-q', 'classes'] },
};

const agents: FakeAgent[] = [];
const clis: ReturnType<typeof startCli>[] = [];
afterEach(async () => {
  for (const cli of clis.splice(0)) if (cli.exitCode === null) cli.kill('SIGKILL');
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

// Three real builds (Gradle's JVM start alone is seconds) on a busy 2-core machine.
const REAL_WATCH_TIMEOUT_MS = 300_000;

describe.each(['maven-app', 'gradle-app'] as const)('%s', { timeout: REAL_WATCH_TIMEOUT_MS }, (name) => {
  const { tool, args } = TOOL_ARGS[name];

  it(`watch ${tool}: three saves, three cycles: 0 / build failed / 0 with the hold recovered, on one connection`, async () => {
    const dir = await compiledFixture(name);
    await appStartsLater();
    const agent = await startFakeAgent({
      portFile: path.join(dir, '.reclazz', 'agent.port'),
      watchDirs: [path.join(dir, CLASS_OUTPUT_DIR[name])],
      captureDelayMs: 50,
      reloadMs: 30,
      heartbeatMs: 500,
    });
    agents.push(agent);
    const cli = startCli(['watch', '--json', tool, ...args], { cwd: dir, timeoutMs: REAL_WATCH_TIMEOUT_MS });
    clis.push(cli);
    const json: Record<string, unknown>[] = [];
    let stderr = '';
    cli.stdout!.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) json.push(JSON.parse(line) as Record<string, unknown>);
    });
    cli.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const cycles = () =>
      json.filter((j) => j.type === 'cycle') as { line: string; result: { reason: string; exitCode: number; hold: string } }[];
    const ended = (n: number) =>
      waitFor(
        () => cycles().length >= n,
        () => `cycle ${n} of watch ${tool}:\n${stderr}`,
        { timeoutMs: 240_000 },
      );
    await waitFor(
      () => json.some((j) => j.type === 'news' && j.news === 'watching'),
      () => `the watch to start:\n${stderr}`,
    );

    await editGreeting(dir, `Hello from ${name}, watched`);
    await ended(1);
    await introduceCompileError(dir);
    await ended(2);
    // The fix and a new greeting in one save's time: one quiet period, one cycle.
    await fixCompileError(dir);
    await editGreeting(dir, `Hello from ${name}, fixed`);
    await ended(3);
    // A window for a fourth cycle that must not come (the watch seeing its own build's output).
    await sleep(1000);
    cli.kill('SIGINT');
    const exit = await cli;

    const lines = cycles().map((c) => c.line);
    console.log(`watch ${tool}, the cycle lines:\n${lines.join('\n')}`);
    expect(cycles()).toHaveLength(3);
    expect(cycles().map((c) => c.result.reason)).toEqual(['ok', 'build-failed', 'ok']);
    expect(cycles()[0]!.result.exitCode).toBe(0);
    expect(cycles()[1]!.result.exitCode).not.toBe(0);
    expect(cycles()[2]!.result.exitCode).toBe(0);
    expect(lines[0]).toMatch(/✔ \d+ class(es)? live in /);
    expect(lines[1]).toMatch(/✖ build failed \(exit \d+\): the agent keeps holding; fix and save$/);
    expect(lines[2]).toMatch(/✔ .*hold recovered\)$/);
    expect(new Set(agent.received.map((r) => r.client)).size).toBe(1);
    expect(agent.received.filter((r) => r.line.startsWith('BUILD ')).map((r) => r.line.split(' ')[1])).toEqual([
      'started',
      'ok',
      'started',
      'failed',
      'started',
      'ok',
    ]);
    expect(exit.exitCode).toBe(130);
  });
});
