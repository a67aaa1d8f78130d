/**
 * Issue 24, item 2 (in part), on the real binary against the fake agent: the attach plugins put
 * the agent on test JVMs too (Maven's `prepare-agent` writes `argLine`, which Surefire reads; the
 * Gradle plugin adds it to every `Test` task), and a test JVM's agent overwrites the app's port
 * file (agent StatusServer.start). An agent whose JVM runs a test runner, read from its command
 * line, is never held or asked: the build is refused (69), naming the runner and the fix.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { agentFor, buildCommand, buildRan, type Project } from '../support/project.js';
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

/**
 * Issue 24, item 2: a test JVM's agent deletes the app's port file when its tests end (or leaves
 * its own port in it) while the app's agent keeps listening. The agent this checkout last used
 * (owner.json: port, pid, agent session, port file) is used then, with a line saying why, when it
 * answers DOCTOR with the recorded session; another session is another app run, never used.
 */
describe('the agent this checkout last used', () => {
  const testJvms: FakeAgent[] = [];
  afterEach(async () => {
    await Promise.all(testJvms.splice(0).map((a) => a.stop()));
  });

  /** A run against the app's agent that proves its change (exit 0), so owner.json records that agent. */
  async function usedOnce(p: Project, agent: FakeAgent): Promise<void> {
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(first.exitCode, first.stderr).toBe(0);
    const saved = JSON.parse(fs.readFileSync(path.join(p.dir, '.reclazz', 'owner.json'), 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ port: agent.port, sessionId: agent.sessionId, pid: String(agent.jvm!.pid), portFile: p.portFile });
  }

  /** What the app's agent received from the second run on. */
  const buildLines = (agent: FakeAgent, from: number) => agent.received.slice(from).filter((r) => /^(BUILD|VERIFY) /.test(r.line));

  it('port file deleted: the remembered agent is used, says why, holds and proves (0)', async () => {
    const { p, agent } = await projectWithAgent();
    await usedOnce(p, agent);
    fs.rmSync(p.portFile);
    const from = agent.received.length;
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `the port file ${p.portFile} is missing (a test run deletes it when its JVM ends); using the agent this checkout last used: port ${agent.port}, pid ${agent.jvm!.pid}, same agent session`,
    );
    expect(result.stderr).toMatch(/✔ proven live/);
    expect(buildLines(agent, from).some((r) => r.line.startsWith('BUILD started'))).toBe(true);
    expect(buildRan(p)).toBe(true);
  });

  it("port file naming a test JVM's agent: the remembered agent is used, the test JVM's is never held or asked (0)", async () => {
    const { p, agent } = await projectWithAgent();
    await usedOnce(p, agent);
    // Surefire's forked JVM starts its own agent, which overwrites the app's port file.
    const testJvm = await agentFor(p, testJvms, { portFile: p.portFile, testRunner: 'surefire' });
    expect(fs.readFileSync(p.portFile, 'utf8').trim()).toBe(String(testJvm.port));
    const from = agent.received.length;
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `the port file ${p.portFile} names the agent of a test JVM (pid ${testJvm.jvm!.pid}); using the agent this checkout last used: port ${agent.port}, pid ${agent.jvm!.pid}, same agent session`,
    );
    expect(result.stderr).toMatch(/✔ proven live/);
    expect(buildLines(agent, from).some((r) => r.line.startsWith('BUILD started'))).toBe(true);
    expect(testJvm.received.some((r) => /^(BUILD|VERIFY) /.test(r.line))).toBe(false);
  });

  it('the remembered agent restarted (another agent session) and the port file missing: no agent found, as before (69)', async () => {
    const { p, agent } = await projectWithAgent();
    await usedOnce(p, agent);
    fs.rmSync(p.portFile);
    await agent.restart();
    fs.rmSync(p.marker);
    const from = agent.received.length;
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } }));
    expect(result.exitCode, result.stderr).toBe(69);
    expect(result.stderr).toContain('no running agent found');
    expect(result.stderr).not.toContain('last used');
    expect(buildLines(agent, from)).toEqual([]);
    expect(buildRan(p)).toBe(false);
  });
});
