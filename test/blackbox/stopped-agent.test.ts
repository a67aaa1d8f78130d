/**
 * An app whose JVM is stopped (Ctrl-Z, `kill -STOP`, a debugger holding it) runs none of its
 * threads: the kernel still accepts connections on the agent's port, and nothing answers. Here
 * the fake agent runs as a process of its own standing in for the app's JVM
 * (`--no-stand-in-jvm`: DOCTOR's pid is that process), and the test stops it with SIGSTOP as a
 * user would the app. The run says the agent does not answer, never that it is still starting.
 * (`--timeout` bounds the wait for an answer that never comes; in watch it is 2 s, time for a
 * continued agent's receipts on a loaded machine.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appStartsLater } from '../support/agents.js';
import { runCli } from '../support/cli.js';
import { project } from '../support/project.js';
import { Lines } from '../support/wait.js';
import { builds, editSource, startWatch, watchProject, type RunningWatch } from '../support/watch.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

const agents: ChildProcess[] = [];
const watches: RunningWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
  // A stopped process takes SIGTERM only once continued: SIGCONT first, then the agent's own shutdown.
  await Promise.all(
    agents.splice(0).map(async (agent) => {
      if (agent.exitCode !== null || agent.signalCode !== null) return;
      const exited = once(agent, 'exit');
      agent.kill('SIGCONT');
      agent.kill('SIGTERM');
      await exited;
    }),
  );
});

/**
 * The shipped fake agent as a process in `dir` (its port file `.reclazz/agent.port`), watching
 * `classes` (and `watch`), standing in for the app's JVM itself. Resolves once it listens.
 */
async function agentProcess(dir: string, watch: string[]): Promise<ChildProcess & { pid: number }> {
  await appStartsLater();
  const args = ['--port-file', '.reclazz/agent.port', '--heartbeat-ms', '0', '--capture-delay-ms', '20', '--reload-ms', '20'];
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'reclazz-fake-agent.js'), ...args, '--no-stand-in-jvm', ...watch.flatMap((d) => ['--watch', d])],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  agents.push(child);
  await new Lines(child.stdout!).line(/^fake agent listening on /);
  return child as ChildProcess & { pid: number };
}

/** The words of a cycle's result. */
function words(w: RunningWatch, cycle: number): { reason: string; exitCode: number; message: string; hint?: string } {
  return w.cycles()[cycle - 1]!.result as unknown as { reason: string; exitCode: number; message: string; hint?: string };
}

describe('an agent whose JVM is stopped', () => {
  it('a run: the connection is accepted and CONNECTED never comes; it says the JVM may be stopped or hung, not starting', async () => {
    const p = project();
    const agent = await agentProcess(p.dir, [p.classes]);
    agent.kill('SIGSTOP');
    const run = await runCli(
      ['--timeout', '1000', '--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(p.marker)}, '')`],
      {
        cwd: p.dir,
      },
    );
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(/accepted the connection but sent no CONNECTED line within 1000 ms/);
    expect(run.stderr).toContain("next: is the app's JVM stopped (Ctrl-Z, SIGSTOP, a debugger) or hung");
    expect(run.stderr).not.toMatch(/still starting/);
    expect(fs.existsSync(p.marker)).toBe(false);
  });

  it('watch: a cycle while it is stopped names its JVM as stopped; once continued, the next save is built and proven', async () => {
    const p = watchProject();
    const agent = await agentProcess(p.dir, [p.classes]);
    const w = startWatch(p, ['--timeout', '2000']);
    watches.push(w);
    await w.watching();
    agent.kill('SIGSTOP');
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    const stopped = words(w, 1);
    expect([stopped.reason, stopped.exitCode], w.stderr.join('\n')).toEqual(['agent-not-ready', 69]);
    expect(stopped.message).toMatch(
      new RegExp(
        `^the agent on port \\d+ does not answer: no reply to DOCTOR within 2000 ms, where it answered before; its JVM \\(pid ${agent.pid}\\) is stopped$`,
      ),
    );
    expect(stopped.hint).toContain(`kill -CONT ${agent.pid}`);
    expect(stopped.message).not.toMatch(/still starting|too old/);
    expect(builds(p)).toEqual([]);

    agent.kill('SIGCONT');
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    expect(cycles[1]!.result.reason, w.stderr.join('\n')).not.toBe('agent-not-ready');
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }));
    // The others, written again by the build and first seen in this session, have no evidence here: this
    // stand-in JVM has no java command line, so neither its class path nor its agent's debounceMs is known.
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Outer', status: 'not-observed' }));
    expect(cycles[1]!.result).toMatchObject({ exitCode: 75, provenLive: false });
  });

  it('watch with two apps: the cycle names the agent whose JVM is stopped, not the other', async () => {
    // The project is a module both apps load, from svc-a and svc-b below it, each with its agent.
    const p = watchProject();
    const [a, b] = ['a', 'b'].map((svc) => path.join(p.dir, `svc-${svc}`));
    for (const dir of [a!, b!]) fs.mkdirSync(dir);
    await agentProcess(a!, [p.classes]);
    const stoppedAgent = await agentProcess(b!, [p.classes]);
    const w = startWatch(p, ['--timeout', '2000']);
    watches.push(w);
    await w.watching();
    stoppedAgent.kill('SIGSTOP');
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    const stopped = words(w, 1);
    expect([stopped.reason, stopped.exitCode], w.stderr.join('\n')).toEqual(['agent-not-ready', 69]);
    const portFile = (dir: string) => path.join(dir, '.reclazz', 'agent.port');
    expect(stopped.message.startsWith(`the agent of ${portFile(b!)}: the agent on port `), stopped.message).toBe(true);
    expect(stopped.message).toMatch(new RegExp(`does not answer: .*its JVM \\(pid ${stoppedAgent.pid}\\) is stopped$`));
    expect(stopped.message).not.toContain(portFile(a!));
    expect(builds(p)).toEqual([]);
  });
});
