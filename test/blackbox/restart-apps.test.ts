/**
 * A change that needs a restart in two apps of one checkout (svc-a and svc-b, each with its agent,
 * both running the shared module's class output directory), and a restart command that restarts
 * only svc-a: svc-a's restart proves nothing of svc-b, whose old JVM still runs the old class. Each
 * verdict is checked against what each fake agent's JVM runs (src/fake-agent/truth.ts), and each
 * app's words name that app.
 */
import { expect, it } from 'vitest';
import type { FakeAgentOptions } from '../../src/fake-agent/index.js';
import { MONEY, twoServices, watchIn } from '../support/apps.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

/** Money's change is a superclass change: each app's agent applies it only in part, restart required. */
const SUPERCLASS: FakeAgentOptions = {
  restartRequired: (className) => (className === MONEY ? { from: 'com.acme.shared.Base', to: 'com.acme.shared.OtherBase' } : undefined),
};

interface Part {
  agentSource: string;
  exitCode: number;
  provenLive: boolean;
  message: string;
  restartSessionId?: string;
}

it('a build whose restart command restarts svc-a alone: 75, svc-a proven in its new JVM, svc-b named as not restarted, the class listed once', async () => {
  const c = await twoServices(SUPERCLASS);
  const [a, b] = c.apps;
  const [oldA, oldB] = [a.agent!, b.agent!];
  c.save('money-v2');
  const run = await runCli(['--json', '--restart-timeout', '2000', '--restart-command', a.restartCommand(), '--', ...c.build], {
    cwd: c.root,
  });
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const result = lines.at(-1)!;
  // The truth: svc-a's new JVM runs the change, svc-b's old one the class from before it.
  expect({ exitCode: run.exitCode, proven: result.provenLive, a: c.runs(a, 'money-v2'), b: c.runs(b, 'money-v2') }, run.stderr).toEqual({
    exitCode: 75,
    proven: false,
    a: true,
    b: false,
  });
  expect(b.agent).toBe(oldB);
  expect(a.agent).not.toBe(oldA);
  const parts = result.agents as Part[];
  expect(parts.map((p) => [p.agentSource, p.exitCode, p.provenLive])).toEqual([
    [a.portFile, 0, true],
    [b.portFile, 75, false],
  ]);
  expect(parts[0]!.restartSessionId).toBe(a.agent!.sessionId);
  // Each part's words are its own app's: svc-b's old JVM named under svc-b, never under svc-a.
  const bPid = String(oldB.jvm!.pid);
  expect(parts[1]!.message).toContain(`its old JVM (pid ${bPid}, agent session ${oldB.sessionId}) still runs`);
  expect(parts[0]!.message).toContain('proven live after a restart');
  expect(parts[0]!.message).not.toContain(bPid);
  expect(lines.find((l) => l.type === 'restart-needed')).toMatchObject({ classes: [MONEY] });
  expect(run.stderr).not.toContain(`${MONEY}, ${MONEY}`);
  // The run's own words name the app not proven, and only it.
  expect(result.message).toMatch(new RegExp(`^1 of 2 agents proved their classes live; the agent of ${b.portFile}: `));
  expect(result.message).not.toContain(a.portFile);
});

it('a watch whose restart command restarts svc-a alone: no cycle is ✔ while svc-b runs the old class, and the last cycle is not ✔', async () => {
  const c = await twoServices(SUPERCLASS);
  const [a, b] = c.apps;
  const oldB = b.agent!;
  const w = watchIn(c.root, c.build, ['--restart-timeout', '2000', '--restart-command', a.restartCommand()]);
  await w.newsCame('watching');
  c.save('money-v2');
  const [first] = await w.cyclesEnded(1);
  expect({
    proven: first!.result.provenLive,
    exitCode: first!.result.exitCode,
    a: c.runs(a, 'money-v2'),
    b: c.runs(b, 'money-v2'),
  }).toEqual({
    proven: false,
    exitCode: 75,
    a: true,
    b: false,
  });
  // svc-a came back in the session its restart proved: taken back, nothing more to prove there.
  await w.newsCame('new-app-session');
  // The next save's cycle comes after anything the watch did about svc-a's return.
  c.save('money-v3');
  await waitForSaveCycle(w);
  expect(b.agent).toBe(oldB);
  expect(c.runs(b, 'money-v3')).toBe(false);
  // svc-b runs the old class throughout: no cycle may say ✔.
  const cycles = w.cycles();
  expect(
    cycles.map((cycle) => [cycle.changed > 0, cycle.result.provenLive]),
    cycles.map((cycle) => cycle.line).join('\n'),
  ).toEqual([
    [true, false],
    [true, false],
  ]);
  await w.stop();
  const last = w.stderr.find((line) => line.startsWith('reclazz-build: last cycle: '));
  expect(last).toBeDefined();
  expect(last).not.toContain('✔');
  // Each app's words in the first cycle are its own.
  const parts = first!.result.agents as unknown as Part[];
  expect(parts.map((p) => [p.agentSource, p.exitCode])).toEqual([
    [a.portFile, 0],
    [b.portFile, 75],
  ]);
  expect(parts[0]!.message).not.toContain(String(oldB.jvm!.pid));
  expect(parts[1]!.message).toContain(`its old JVM (pid ${oldB.jvm!.pid}, agent session ${oldB.sessionId}) still runs`);
});

/** Waits for the cycle of a save after the first (one that built changed sources). */
async function waitForSaveCycle(w: ReturnType<typeof watchIn>): Promise<void> {
  const saves = () => w.cycles().filter((cycle) => cycle.changed > 0).length;
  await waitFor(
    () => saves() >= 2 || w.cli.exitCode !== null,
    () => `the second save's cycle\n${w.stderr.join('\n')}`,
  );
}

it('a watch whose restart command fails, svc-a then killed and started by hand: its return is proven in its new JVM, but not ✔ while svc-b runs the old class', async () => {
  const c = await twoServices(SUPERCLASS);
  const [a, b] = c.apps;
  const oldB = b.agent!;
  const w = watchIn(c.root, c.build, ['--restart-command', 'exit 3']);
  await w.newsCame('watching');
  c.save('money-v2');
  const [first] = await w.cyclesEnded(1);
  expect(first!.result.agents!.map((p) => [p.agentSource, p.exitCode])).toEqual([
    [a.portFile, 75],
    [b.portFile, 75],
  ]);
  await a.kill();
  await w.newsCame('agent-lost');
  await a.start();
  const [, back] = await w.cyclesEnded(2);
  expect(back!.changed).toBe(0);
  expect(b.agent).toBe(oldB);
  expect({ proven: back!.result.provenLive, a: c.runs(a, 'money-v2'), b: c.runs(b, 'money-v2') }, back!.line).toEqual({
    proven: false,
    a: true,
    b: false,
  });
  // svc-a's part is its proof in the new JVM; svc-b's is what it still owes, in its own words.
  const parts = back!.result.agents as unknown as Part[];
  expect(parts.map((p) => [p.agentSource, p.provenLive])).toEqual([
    [a.portFile, true],
    [b.portFile, false],
  ]);
  expect(parts[1]!.message).toContain('the restart command failed (exit status 3)');
  await w.stop();
  expect(w.stderr.find((line) => line.startsWith('reclazz-build: last cycle: '))).not.toContain('✔');
});
