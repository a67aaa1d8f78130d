/**
 * The evidence rule on real Maven builds (issue 25): `target/` deleted by hand while the app runs
 * (what `mvn clean` does; its plugin does not resolve offline from Debian's repository) does not
 * make its classes "new to the JVM" on the next run, and the everyday recompile, which
 * rewrites every class file of the module (Maven deletes them and writes them again, mostly
 * with identical bytes), stays green run after run. A missing mvn FAILS these tests.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli } from '../support/cli.js';
import { expectNotLive } from '../support/evidence.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { CLASS_OUTPUT_DIR, editGreeting } from '../support/fixtures.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

const MVN = ['mvn', '-q', 'compile'];
// Real Maven runs, several per case, on a busy 2-core machine (see real-builds.test.ts).
const REAL_BUILD_TIMEOUT_MS = 240_000;

/** The maven-app fixture compiled (the app's starting classes), and the fake agent of its app, started after. */
async function runningApp(options: (greeterSha: string) => FakeAgentOptions = () => ({})): Promise<{ dir: string; agent: FakeAgent }> {
  const dir = await compiledFixture('maven-app');
  const classes = path.join(dir, CLASS_OUTPUT_DIR['maven-app']);
  const greeter = createHash('sha256')
    .update(fs.readFileSync(path.join(classes, 'com', 'acme', 'Greeter.class')))
    .digest('hex');
  await appStartsLater();
  const agent = await startFakeAgent({
    portFile: path.join(dir, '.reclazz', 'agent.port'),
    watchDirs: [classes],
    captureDelayMs: 50,
    reloadMs: 30,
    heartbeatMs: 500,
    ...options(greeter),
  });
  agents.push(agent);
  return { dir, agent };
}

describe('maven-app', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it('target/ deleted by hand while the app runs: the rebuilt classes are asked, a failed reload is shown and none is added; run again, still red', async () => {
    // The app cannot take any Greeter but the one it started with.
    const { dir } = await runningApp((greeter) => ({
      verifyStatus: (name, hash) => (name === 'com.acme.Greeter' && hash !== greeter ? 'failed' : undefined),
    }));
    fs.rmSync(path.join(dir, 'target'), { recursive: true });
    await editGreeting(dir, 'Hello after a clean');
    const first = await runCli(['--verify-timeout', '3000', ...MVN], { cwd: dir });
    expectNotLive(first, 'com.acme.Greeter', 'failed');
    expect(first.stderr).not.toMatch(/^\s*added\s/m);
    const again = await runCli(MVN, { cwd: dir });
    expectNotLive(again, 'com.acme.Greeter', 'failed');
  });

  it('the everyday recompile of the whole module stays exit 0, run after run, each rewritten class asked once', async () => {
    const { dir, agent } = await runningApp();
    const classes = path.join(dir, CLASS_OUTPUT_DIR['maven-app']);
    for (const [round, edit] of [
      [1, 'Hello, first edit'],
      [2, 'Hello, second edit'],
      [3, undefined],
    ] as const) {
      if (edit === undefined) fs.utimesSync(path.join(dir, 'src', 'main', 'java', 'com', 'acme', 'Outer.java'), new Date(), new Date());
      else await editGreeting(dir, edit);
      // A file written again may get the inode its deleted self had: its change time tells it too.
      const stamp = (f: string) => {
        const st = fs.statSync(path.join(classes, 'com', 'acme', f), { bigint: true });
        return `${st.ino}:${st.ctimeNs}`;
      };
      const inodes = () => new Map(fs.readdirSync(path.join(classes, 'com', 'acme')).map((f) => [f, stamp(f)]));
      const before = inodes();
      const sent = agent.received.length;
      const run = await runCli(MVN, { cwd: dir });
      expect(run.exitCode, `round ${round}: ${run.stderr}`).toBe(0);
      expect(run.stderr).toContain('✔');
      // Maven wrote every class file of the module again: each (but package-info, never reloaded) is asked once or verified.
      const after = inodes();
      const rewritten = [...after].filter(([f, now]) => f.endsWith('.class') && f !== 'package-info.class' && before.get(f) !== now);
      expect(rewritten.length).toBeGreaterThan(1);
      const asked = new Set(
        agent.received
          .slice(sent)
          .filter((r) => r.line.startsWith('VERIFY '))
          .map((r) => r.line.split(' ')[2]),
      );
      for (const [file] of rewritten) expect(asked, `round ${round}: ${file}`).toContain(`com.acme.${file.slice(0, -'.class'.length)}`);
    }
  });

  it("verify target/classes right after a ✔ build reads the build's records: 0, asking nothing and waiting for no deadline", async () => {
    const { dir, agent } = await runningApp();
    await editGreeting(dir, 'Hello, verified');
    const built = await runCli(MVN, { cwd: dir });
    expect(built.exitCode, built.stderr).toBe(0);
    const sent = agent.received.length;
    const startedAt = performance.now();
    const verified = await runCli(['verify', '--verify-timeout', '60000', CLASS_OUTPUT_DIR['maven-app']], { cwd: dir });
    expect(verified.exitCode, verified.stderr).toBe(0);
    // Far below the deadline a wait for any answer would run to; a loose bound, as the machine may be loaded.
    expect(performance.now() - startedAt).toBeLessThan(20_000);
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
  });
});
