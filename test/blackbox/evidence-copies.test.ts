/**
 * One binary name in two class output directories, both on the app's class path and watched (a
 * stale `target/classes` beside `build/classes/java/main`), on the real binary against the fake
 * agent: the agent reloads the class by its name from whichever watched file changed, so a build
 * that changes one copy takes the other's evidence away (classes/evidence.ts `others-unmoved`).
 * Judged by exact verdicts and by the fake JVM's truth oracle.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jvmTruth } from '../../src/fake-agent/truth.js';
import { runCli, writeClass } from '../support/cli.js';
import { classFile, compileOutside, reloadsEnded, run, sha, useProjects, WATCHER } from '../support/evidence.js';

const projectWithAgent = useProjects();

/** The `class` lines of a `--json` run, by path. */
function classLines(stdout: string): Map<string, { status: string; detail: string }> {
  const lines = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; path: string; status: string; detail: string });
  return new Map(lines.filter((l) => l.type === 'class').map((l) => [l.path, { status: l.status, detail: l.detail }]));
}

/** The app's class path and watched folders: Gradle's output first (the JVM loads its copy), then Maven's; the agent's capture as slow as the real one's debounce. */
const COPIES = (q: { dir: string; classes: string }) => {
  const gradle = path.join(q.dir, 'build', 'classes', 'java', 'main');
  return { watchDirs: [gradle, q.classes], captureDelayMs: 300, reloadMs: 50 };
};
const gradleOf = (dir: string) => path.join(dir, 'build', 'classes', 'java', 'main');
const writeGreeter = (file: string, bytes: string) => [
  '--',
  process.execPath,
  '-e',
  `require('fs').writeFileSync(${JSON.stringify(file)}, ${JSON.stringify(bytes)})`,
];

describe('one binary name in two class output directories on the class path', () => {
  it("a build changes the copy the JVM did not load: the loaded copy's age proves nothing once the class is reloaded from the other, and verify of it says mismatch", async () => {
    const { p, agent } = await projectWithAgent(COPIES, (q) => writeClass(gradleOf(q.dir), 'com.acme.Greeter', 'greeter-gradle'));
    const loaded = path.join(gradleOf(p.dir), 'com', 'acme', 'Greeter.class');
    expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-gradle'));
    const built = await runCli(['--json', ...writeGreeter(classFile(p, 'com.acme.Greeter'), 'greeter-v2')], { cwd: p.dir });
    const verdicts = classLines(built.stdout);
    expect(verdicts.get(classFile(p, 'com.acme.Greeter'))?.status).toBe('applied');
    expect(verdicts.get(loaded)?.status, built.stdout).toBe('not-observed');
    expect(verdicts.get(loaded)?.detail).toContain('another class file of this binary name');
    expect(built.exitCode, built.stderr).toBe(75);
    // The truth: the JVM runs the other copy's bytes.
    expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-v2'));
    const verified = await run(p, ['verify', gradleOf(p.dir)]);
    expect(verified.stderr).toMatch(/mismatch\s+com\.acme\.Greeter\s+the agent applied other bytes/);
    expect(verified.stderr).not.toContain('✔');
    expect(verified.exitCode, verified.stderr).toBe(75);
  });

  it('then the other copy changes: the copy proven by its receipt is not live any more, and verify of it says mismatch', async () => {
    const { p, agent } = await projectWithAgent(COPIES, (q) => writeClass(gradleOf(q.dir), 'com.acme.Greeter', 'greeter-gradle'));
    const loaded = path.join(gradleOf(p.dir), 'com', 'acme', 'Greeter.class');
    const first = await run(p, writeGreeter(classFile(p, 'com.acme.Greeter'), 'greeter-v2'));
    expect(first.exitCode, first.stderr).toBe(75);
    const second = await runCli(['--json', ...writeGreeter(loaded, 'greeter-gradle-v2')], { cwd: p.dir });
    const verdicts = classLines(second.stdout);
    // Maven's copy was proven by its receipt in the first run: that receipt is from before this build's capture.
    expect(verdicts.get(classFile(p, 'com.acme.Greeter'))?.status, second.stdout).not.toMatch(/^(applied|unchanged)$/);
    expect(second.exitCode, second.stderr).toBe(75);
    // The truth, once the capture of this build has reloaded it.
    await expect.poll(() => jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-gradle-v2'));
    const verified = await run(p, ['verify', p.classes]);
    expect(verified.stderr).toMatch(/mismatch\s+com\.acme\.Greeter\s+the agent applied other bytes/);
    expect(verified.stderr).not.toContain('✔');
    expect(verified.exitCode, verified.stderr).toBe(75);
  });

  it.each([
    ['after a run recorded the loaded one', true],
    ['before any run', false],
  ])(
    "the other copy written outside %s, and reloaded by the agent's watcher: verify of the loaded copy does not call it live (by the record, or by its age)",
    async (_when, recorded) => {
      const { p, agent } = await projectWithAgent(
        (q) => ({ ...COPIES(q), ...WATCHER }),
        (q) => writeClass(gradleOf(q.dir), 'com.acme.Greeter', 'greeter-gradle'),
      );
      if (recorded) await run(p, ['--', 'true']);
      await reloadsEnded(agent, ['com.acme.Greeter'], () => compileOutside(p, 'com.acme.Greeter', 'greeter-v2'));
      expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-v2'));
      const verified = await run(p, ['verify', gradleOf(p.dir)]);
      expect(verified.stderr).not.toContain('✔');
      expect(verified.stderr).not.toMatch(/unchanged\s+com\.acme\.Greeter/);
      expect(verified.exitCode, verified.stderr).toBe(75);
    },
  );
});
