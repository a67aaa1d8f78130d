/**
 * Watch mode keeps the checkout's apps in view: two services share a module, each app with its
 * agent. One whose agent goes away (`kill -9`: its port file left behind) is gone, not forgotten: a
 * cycle is not proven for what it runs, naming it, and when it is back in a new agent session the
 * change is proven in its new JVM. One that stopped normally (its port file deleted) leaves the view,
 * saying so. Every verdict is checked against what each fake agent's JVM runs.
 */
import { expect, it } from 'vitest';
import { MONEY, twoServices, watchIn } from '../support/apps.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

it('svc-b killed (kill -9) during a build, then started again at its port file: the next save is not ✔ by svc-a alone, it is proven in the new JVM too', async () => {
  const c = await twoServices();
  const [a, b] = c.apps;
  const w = watchIn(c.root, c.build);
  await w.newsCame('watching');
  const build = c.hold();
  c.save('money-v2');
  await build.started();
  await b.kill();
  build.release();
  const [killed] = await w.cyclesEnded(1);
  expect({ proven: killed!.result.provenLive, exitCode: killed!.result.exitCode }).toEqual({ proven: false, exitCode: 70 });
  // A save while it is gone (its port file still names the dead JVM's port): svc-a's proof alone is no ✔.
  c.save('money-v3');
  const [, gone] = await w.cyclesEnded(2);
  expect({ proven: gone!.result.provenLive, a: c.runs(a, 'money-v3'), b: c.runs(b, 'money-v3') }, w.stderr.join('\n')).toEqual({
    proven: false,
    a: true,
    b: 'dead',
  });
  expect(gone!.result.message).toContain(b.portFile);
  // Its new JVM's agent writes its port over the one kill -9 left behind; the next save.
  await b.start();
  await w.newsCame('new-app-session');
  c.save('money-v4');
  const saved = () => w.cycles().find((cycle) => cycle.changed > 0 && cycle.cycle > 2);
  await waitFor(
    () => saved() !== undefined,
    () => `the cycle of the next save${w.stderr.join('\n')}`,
  );
  const next = saved()!;
  // The verdict is what both JVMs run: ✔ only with the change live in each, and both agents proved it.
  expect({ proven: next.result.provenLive, a: c.runs(a, 'money-v4'), b: c.runs(b, 'money-v4') }, w.stderr.join('\n')).toEqual({
    proven: true,
    a: true,
    b: true,
  });
  expect(next.result.agents!.map((p) => [p.agentSource, p.exitCode])).toEqual([
    [a.portFile, 0],
    [b.portFile, 0],
  ]);
  // The watch never took svc-a's agent for the app that came back: the news names svc-b, in the order things happened.
  expect(w.told()).toEqual(['watching', 'agent-lost', 'cycle', 'cycle', 'new-app-session', 'cycle', 'cycle']);
  expect(w.news('new-app-session')[0]).toContain(`new app session (${b.portFile}, pid ${b.agent!.jvm!.pid})`);
  expect(w.news('agent-back')).toEqual([]);
});

it('svc-b killed during a build, its stale port file removed by a start script, then started: it leaves the view, is found again, and the next save is proven in its new JVM', async () => {
  const c = await twoServices();
  const [a, b] = c.apps;
  const w = watchIn(c.root, c.build);
  await w.newsCame('watching');
  const build = c.hold();
  c.save('money-v2');
  await build.started();
  await b.kill();
  build.release();
  const [first] = await w.cyclesEnded(1);
  expect(first!.result.agents!.map((p) => [p.agentSource, p.exitCode])).toEqual([
    [a.portFile, 0],
    [b.portFile, 70],
  ]);
  // Its app starts again as a start script does it: the stale port file removed, then the JVM, whose agent writes its own.
  const news = w.told().length;
  b.removePortFile();
  await waitFor(
    () => w.told().length > news,
    () => `news after the port file went${w.stderr.join('\n')}`,
  );
  await b.start();
  c.save('money-v3');
  const [, second] = await w.cyclesEnded(2);
  // The verdict is what both JVMs run: ✔ only with the change live in each.
  expect({ proven: second!.result.provenLive, a: c.runs(a, 'money-v3'), b: c.runs(b, 'money-v3') }, w.stderr.join('\n')).toEqual({
    proven: true,
    a: true,
    b: true,
  });
  expect(second!.result.agents!.map((p) => [p.agentSource, p.exitCode])).toEqual([
    [a.portFile, 0],
    [b.portFile, 0],
  ]);
  // As it happened: gone during the build, out of view once its port file went, found again at the next save.
  expect(w.told()).toEqual(['watching', 'agent-lost', 'cycle', 'agent-stopped', 'agent-found', 'cycle']);
  expect(w.news('agent-found')[0]).toContain(`agent found (${b.portFile}, pid ${b.agent!.jvm!.pid})`);
});

it('while svc-b is gone a save is not proven for what it runs, naming it; back in a new JVM, the change is proven there', async () => {
  const c = await twoServices();
  const [a, b] = c.apps;
  const w = watchIn(c.root, c.build);
  await w.newsCame('watching');
  await b.kill();
  await w.newsCame('agent-lost');
  c.save('money-v2');
  const [gone] = await w.cyclesEnded(1);
  expect({ proven: gone!.result.provenLive, a: c.runs(a, 'money-v2'), b: c.runs(b, 'money-v2') }).toEqual({
    proven: false,
    a: true,
    b: 'dead',
  });
  expect(gone!.result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75 });
  expect(gone!.result.agents!.map((p) => [p.agentSource, p.reason, p.exitCode])).toEqual([
    [a.portFile, 'ok', 0],
    [b.portFile, 'verify-incomplete', 75],
  ]);
  expect(gone!.result.classes).toContainEqual(
    expect.objectContaining({ className: MONEY, status: 'connection-lost', agentSource: b.portFile }),
  );
  expect(gone!.result.message).toContain(
    `the agent of ${b.portFile}: 1 changed class(es) that the app of ${b.portFile} runs are not proven live`,
  );
  expect(gone!.line).toMatch(/⚠ 1 class live, 1 not proven in /);

  // Its app starts again (the new JVM loads the class files on disk): the change is proven there, by its age.
  await b.start();
  const [, back] = await w.cyclesEnded(2);
  expect({ proven: back!.result.provenLive, a: c.runs(a, 'money-v2'), b: c.runs(b, 'money-v2') }).toEqual({
    proven: true,
    a: true,
    b: true,
  });
  expect(back!.changed).toBe(0);
  expect(back!.line).toMatch(new RegExp(`✔ 1 class live in .*in the new JVM of ${b.portFile}\\)$`));
  expect(back!.result.classes).toEqual([
    expect.objectContaining({
      className: MONEY,
      status: 'unchanged',
      detail: expect.stringMatching(/^at its path since before the new JVM started/),
    }),
  ]);
  expect(w.told()).toEqual(['watching', 'agent-lost', 'cycle', 'new-app-session', 'cycle']);
  expect(w.news('new-app-session')[0]).toContain(`new app session (${b.portFile}, pid ${b.agent!.jvm!.pid})`);

  c.save('money-v3');
  const [, , next] = await w.cyclesEnded(3);
  expect({ proven: next!.result.provenLive, a: c.runs(a, 'money-v3'), b: c.runs(b, 'money-v3') }).toEqual({
    proven: true,
    a: true,
    b: true,
  });
});

it('svc-b stopped normally (its port file deleted) leaves the view with a line that says so, and a save is proven by svc-a alone', async () => {
  const c = await twoServices();
  const [a, b] = c.apps;
  const w = watchIn(c.root, c.build);
  await w.newsCame('watching');
  await b.stop();
  await w.newsCame('agent-stopped');
  expect(w.news('agent-stopped')).toEqual([
    expect.stringMatching(new RegExp(`• agent stopped \\(${b.portFile}\\): its port file is gone`)),
  ]);
  c.save('money-v2');
  const [cycle] = await w.cyclesEnded(1);
  expect({ proven: cycle!.result.provenLive, a: c.runs(a, 'money-v2') }).toEqual({ proven: true, a: true });
  expect(cycle!.result.agents).toBeUndefined();
  expect(w.told()).toEqual(['watching', 'agent-lost', 'agent-stopped', 'cycle']);
});

it('an app whose class path cannot be read: a build and a watch check what its agent watches, and say so once', async () => {
  const c = await twoServices();
  const [, b] = c.apps;
  // svc-b's JVM as from a container: its process is not visible here.
  await b.kill();
  await b.start({ reportedPid: '999999' });
  const said = (lines: string[]) => lines.filter((l) => l.includes('so its class path is not known')).length;
  c.save('money-v2');
  const run = await runCli(['--', ...c.build], { cwd: c.root });
  expect(said(run.stderr.split('\n')), run.stderr).toBe(1);
  expect(run.stderr).toContain(`${b.portFile}`);

  const w = watchIn(c.root, c.build);
  await w.newsCame('watching');
  for (const [n, text] of [
    [1, 'money-v3'],
    [2, 'money-v4'],
  ] as const) {
    c.save(text);
    await w.cyclesEnded(n);
  }
  const warnings = w.json.filter((j) => j.type === 'warning').map((j) => `${String(j.agentSource)}: ${String(j.message)}`);
  expect(said(warnings), warnings.join('\n')).toBe(1);
  expect(warnings.find((l) => l.includes('so its class path is not known'))).toMatch(new RegExp(`^${b.portFile}: `));
});
