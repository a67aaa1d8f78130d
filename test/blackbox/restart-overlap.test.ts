/**
 * Restart commands that do not restart the app the way the run expects, in two apps of one
 * checkout (svc-a needs the restart, svc-b does not): a command that restarts the other app (the
 * words say no new JVM came, not that one started beside the old one).
 */
import { expect, it } from 'vitest';
import type { FakeAgentOptions } from '../../src/fake-agent/index.js';
import { MONEY, twoServices } from '../support/apps.js';
import { runCli } from '../support/cli.js';

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
