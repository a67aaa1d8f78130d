/**
 * Issue 24, item 2 (in part), on the real binary against the fake agent: the attach plugins put
 * the agent on test JVMs too (Maven's `prepare-agent` writes `argLine`, which Surefire reads; the
 * Gradle plugin adds it to every `Test` task), and a test JVM's agent overwrites the app's port
 * file (agent StatusServer.start). An agent whose JVM runs a test runner, read from its command
 * line, is never held or asked: the build is refused (69), naming the runner and the fix.
 */
import { describe, expect, it } from 'vitest';
import { buildCommand, buildRan } from '../support/project.js';
import { run, useProjects } from '../support/evidence.js';

const projectWithAgent = useProjects();

describe('an agent in a test JVM', () => {
  it.each([
    ['surefire', "Maven Surefire's forked test JVM"],
    ['gradle', "Gradle's test worker"],
  ] as const)('%s: never held or asked; the build does not run (69), with how to keep test JVMs away', async (runner, words) => {
    const { p, agent } = await projectWithAgent({ testRunner: runner });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(result.exitCode, result.stderr).toBe(69);
    expect(result.stderr).toContain(`runs in a test JVM (${words}, pid ${agent.jvm!.pid}), not in the app`);
    expect(result.stderr).toContain('reclazz.propertyName, or portFile= in its agentArgs');
    expect(buildRan(p)).toBe(false);
    expect(agent.received.some((r) => /^(BUILD|VERIFY) /.test(r.line))).toBe(false);
  });
});
