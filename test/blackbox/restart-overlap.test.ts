/**
 * Restart commands that do not restart the app the way the run expects, in two apps of one
 * checkout (svc-a needs the restart, svc-b does not): a watch whose restart command still runs
 * when the next save's cycle needs the restart again (it is waited for, never started a second
 * time), and a command that restarts the other app (the words say no new JVM came, not that one
 * started beside the old one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { FakeAgentOptions } from '../../src/fake-agent/index.js';
import { MONEY, twoServices, watchIn } from '../support/apps.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

/** Money's change is a superclass change: the agent applies it only in part, restart required. */
const SUPERCLASS: FakeAgentOptions = {
  restartRequired: (className) => (className === MONEY ? { from: 'com.acme.shared.Base', to: 'com.acme.shared.OtherBase' } : undefined),
};

/** Two services whose svc-a alone needs a restart for Money's change (its agent started again with {@link SUPERCLASS}). */
async function svcANeedsRestart() {
  const c = await twoServices();
  const [a] = c.apps;
  await a.stop();
  await a.start(SUPERCLASS);
  return c;
}

it("a watch whose restart command still runs when the next save's cycle needs the restart again: waits for it, never starts it twice, one new app", async () => {
  const c = await svcANeedsRestart();
  const [a] = c.apps;
  const runsBefore = a.runs.length;
  const ran = path.join(c.root, 'restart-ran');
  const go = path.join(c.root, 'restart-go');
  // Each run of the command is counted; it restarts svc-a once told to go on, and ends with the test's folder (a failed test never tells it).
  const wait = `while [ -d '${c.root}' ] && [ ! -e '${go}' ]; do sleep 0.02; done; [ -e '${go}' ] || exit 0`;
  const command = `echo start >> '${ran}'; ${wait}; ${a.restartCommand()}; echo end >> '${ran}'`;
  const count = (word: string) =>
    fs.existsSync(ran)
      ? fs
          .readFileSync(ran, 'utf8')
          .split('\n')
          .filter((l) => l === word).length
      : 0;
  const w = watchIn(c.root, c.build, ['--restart-timeout', '20000', '--restart-command', command]);
  await w.newsCame('watching');
  c.save('money-v2');
  await waitFor(
    () => count('start') >= 1,
    () => `the restart command to start\n${w.stderr.join('\n')}`,
  );
  // A save while the command runs: its cycle needs the restart again.
  c.save('money-v3');
  // Its wait says whose restart it waits for: the one still running, not started again.
  const earlier = /; the restart command an earlier cycle started \(pid \d+\) still runs: waiting for it, not starting it again$/;
  const waited = () => w.json.some((j) => j.type === 'waiting' && earlier.test(String(j.what)));
  await waitFor(
    () => waited() || count('start') > 1,
    () => `the second cycle's wait for the earlier restart command\n${w.stderr.join('\n')}`,
  );
  expect(count('start'), w.stderr.join('\n')).toBe(1);
  fs.writeFileSync(go, '');
  await waitFor(
    () => w.cycles().filter((cycle) => cycle.changed > 0).length >= 2 && count('end') === count('start'),
    () => `the second save's cycle and the restart command's end\n${w.stderr.join('\n')}`,
  );
  await waitFor(() => !fs.existsSync(path.join(a.dir, 'restart-asked')) && a.agent !== undefined, 'svc-a to be back');
  const last = w.cycles().at(-1)!;
  expect({ started: count('start'), newApps: a.runs.length - runsBefore, proven: last.result.provenLive }, w.stderr.join('\n')).toEqual({
    started: 1,
    newApps: 1,
    proven: true,
  });
  expect(c.runs(a, 'money-v3')).toBe(true);
  // The command was never said to be left running.
  expect(w.json.filter((j) => j.type === 'restart-running')).toEqual([]);
  await w.stop();
});

it('a restart command that restarts the other app: 75, and the words say no new JVM of the app came, not one started beside it', async () => {
  const c = await svcANeedsRestart();
  const [a, b] = c.apps;
  const oldA = a.agent!;
  c.save('money-v2');
  const run = await runCli(['--json', '--restart-timeout', '2000', '--restart-command', b.restartCommand(), '--', ...c.build], {
    cwd: c.root,
  });
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { agents: { agentSource: string; message: string; hint?: string }[] };
  expect(run.exitCode, run.stderr).toBe(75);
  expect(a.agent).toBe(oldA);
  const partA = result.agents.find((p) => p.agentSource === a.portFile)!;
  expect(partA.message).toContain(
    `its old JVM (pid ${oldA.jvm!.pid}, agent session ${oldA.sessionId}) still runs the code from before the change, and no new agent session of the app answered`,
  );
  expect(partA.message).not.toContain('started beside');
  expect(partA.hint).toContain('neither stopped this app nor started a new one');
  expect(partA.hint).not.toContain('stop the old app first');
});
