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
import { runCli, tempDir, writeClass } from '../support/cli.js';
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

describe('a copy of the class in a class path folder outside the checkout, before target/classes', () => {
  // The agent attached without options on the JVM's command line, and DOCTOR's sample truncated: what it watches is not
  // all known, so the build takes the folder from the class path, where the agent may reload the class from it.
  const outsideFirst = (outside: string) => (q: { classes: string }) => ({
    classPath: [outside, q.classes],
    watchDirs: [outside, q.classes],
    agentOn: 'attached' as const,
    forceWatchSampleTruncated: true,
    ...WATCHER,
  });

  it("changed outside and reloaded by the agent's watcher after a build proved target/classes: the next build does not call target/classes' copy live", async () => {
    const outside = path.join(tempDir('reclazz-test-outside-'), 'classes');
    const { p, agent } = await projectWithAgent(outsideFirst(outside), () => writeClass(outside, 'com.acme.Greeter', 'greeter-outside'));
    expect(jvmTruth(agent, 'com.acme.Greeter').source).toBe(path.join(outside, 'com', 'acme', 'Greeter.class'));
    await run(p, writeGreeter(classFile(p, 'com.acme.Greeter'), 'greeter-v2'));
    expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-v2'));
    await reloadsEnded(agent, ['com.acme.Greeter'], () => writeClass(outside, 'com.acme.Greeter', 'greeter-outside-v2'));
    // The truth: the JVM runs the outside copy's bytes, not target/classes' ones.
    expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-outside-v2'));
    const next = await run(p, ['--', 'true']);
    expect(next.stderr).not.toContain('✔');
    expect(next.exitCode, next.stderr).toBe(75);
  });

  it('not watched: a first build does not take the unchanged copy in target/classes as what the JVM runs, and a change there is proven by its receipt', async () => {
    const outside = path.join(tempDir('reclazz-test-outside-'), 'classes');
    const { p, agent } = await projectWithAgent(
      (q) => ({ classPath: [outside, q.classes], watchDirs: [q.classes], ...WATCHER }),
      () => writeClass(outside, 'com.acme.Greeter', 'greeter-outside'),
    );
    const first = await run(p, ['--', 'true']);
    // Not live by its age (an earlier entry holds the class) nor by a no-attempt answer (the JVM does not load this file).
    expect(first.stderr).toMatch(/not-observed\s+com\.acme\.Greeter\s+no reload attempt, but/);
    expect(first.stderr).not.toContain('✔');
    expect(first.exitCode, first.stderr).toBe(75);
    const built = await run(p, writeGreeter(classFile(p, 'com.acme.Greeter'), 'greeter-v2'));
    expect(built.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    // The reload redefines the class the JVM loaded from the outside copy: it runs these bytes.
    expect(jvmTruth(agent, 'com.acme.Greeter').sha256).toBe(sha('greeter-v2'));
  });
});
