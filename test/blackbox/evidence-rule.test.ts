/**
 * Issue 37 on the real binary against the fake agent: one evidence rule (classes/evidence.ts)
 * for a build, `verify` and the restart, and the holes where they disagreed or claimed too much.
 * Each test failed before the rule closed its hole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeClass } from '../support/cli.js';
import { buildCommand } from '../support/project.js';
import { classFile, run, useProjects } from '../support/evidence.js';
import { writeJar } from '../support/zip.js';

const projectWithAgent = useProjects();

describe('verify agrees with the build', () => {
  it('a folder the JVM does not load from (an IDE output beside target/classes) is not proven by its age: 75', async () => {
    const { p } = await projectWithAgent({}, (q) => writeClass(path.join(q.dir, 'out', 'production'), 'com.acme.Greeter', 'greeter-ide'));
    for (const args of [
      ['verify', 'out/production'],
      ['verify', '--classes-dir', 'out/production', 'out/production'],
    ]) {
      const result = await runCli(args, { cwd: p.dir });
      expect(result.stderr).not.toContain('✔');
      expect(result.stderr).toMatch(/not-watched\s+com\.acme\.Greeter\s+the app's JVM does not load classes from this folder/);
      expect(result.exitCode, result.stderr).toBe(75);
    }
  });

  it('right after a ✔ build, verify of its class output directory reads the same records: 0, asking nothing, at once', async () => {
    const { p, agent } = await projectWithAgent();
    // A Maven-like build: Greeter's new bytes, and Outer written again with the bytes it had.
    const built = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer': 'outer-v1' } }));
    expect(built.exitCode, built.stderr).toBe(0);
    const sent = agent.received.length;
    const startedAt = performance.now();
    const verified = await runCli(['verify', 'target/classes'], { cwd: p.dir });
    const tookMs = performance.now() - startedAt;
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(verified.stderr).toContain('✔ proven live');
    expect(tookMs).toBeLessThan(2000);
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
  });
});

describe('the start-time rule: the path as the JVM resolves it, since it started', () => {
  it('a class output directory renamed into place after the JVM started, then changed in its entries, is not there since the start: 75', async () => {
    const { p } = await projectWithAgent({}, (q) =>
      writeClass(path.join(q.dir, 'target', 'staging'), 'com.acme.Greeter', 'greeter-staged'),
    );
    // `rm -rf classes && mv staging classes`, then an entry added and removed: the folder's mtime moves with its ctime.
    fs.renameSync(p.classes, path.join(p.dir, 'target', 'old'));
    fs.renameSync(path.join(p.dir, 'target', 'staging'), p.classes);
    fs.writeFileSync(path.join(p.classes, 'Tmp.class'), 'x');
    fs.rmSync(path.join(p.classes, 'Tmp.class'));
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('a jar earlier on the class path holding the class shadows the file in target/classes: asked, not proven by its age', async () => {
    const { p } = await projectWithAgent(
      (q) => ({ classPath: [path.join(q.dir, 'lib', 'old.jar'), q.classes] }),
      (q) => {
        fs.mkdirSync(path.join(q.dir, 'lib'));
        writeJar(path.join(q.dir, 'lib', 'old.jar'), { 'com/acme/Greeter.class': 'greeter-v0' });
      },
    );
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(/not-observed\s+com\.acme\.Greeter/);
    expect(result.exitCode, result.stderr).toBe(75);
    expect(fs.existsSync(classFile(p, 'com.acme.Greeter'))).toBe(true);
  });
});
