/**
 * What the app's JVM loads from its class path, read from its command line (agent/jvm-options.ts,
 * classes/placement.ts), against what the fake agent's JVM runs (src/fake-agent/truth.ts): a class
 * path folder of the project that no layout rule finds is still one of the run's class output
 * directories, and a jar's manifest `Class-Path` is opened right after the jar.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jvmTruth } from '../../src/fake-agent/truth.js';
import { runCli, writeClass } from '../support/cli.js';
import { run, sha, useProjects } from '../support/evidence.js';
import { writeJar } from '../support/zip.js';

const projectWithAgent = useProjects();

describe('a folder on the JVM class path inside the project, found by no layout rule (IntelliJ out/production/<module>)', () => {
  const FOO = 'com.acme.Foo';
  const outOf = (dir: string) => path.join(dir, 'out', 'production', 'app');
  const start = () =>
    projectWithAgent(
      (q) => ({ classPath: [q.classes, outOf(q.dir)] }),
      (q) => writeClass(outOf(q.dir), FOO, 'foo-v1'),
    );

  it('a build changing a class there, which the agent does not watch: 75, not-watched naming the folder, never ✔', async () => {
    const { p, agent } = await start();
    const out = outOf(p.dir);
    const file = path.join(out, 'com', 'acme', 'Foo.class');
    const result = await run(p, ['--verbose', '--', 'sh', '-c', `printf foo-v2 > '${file}'`]);
    // The truth: the JVM runs what it loaded, the disk has the build's bytes.
    expect(jvmTruth(agent, FOO)).toMatchObject({ loaded: true, sha256: sha('foo-v1') });
    expect(fs.readFileSync(file, 'utf8')).toBe('foo-v2');
    expect(result.stderr).toContain(`class output directories taken from the app's class path: ${out}`);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(new RegExp(`not-watched\\s+${FOO.replace(/\./g, '\\.')}\\s+the agent does not watch ${out}`));
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('doctor lists it as a class output directory here NOT watched: 75', async () => {
    const { p } = await start();
    const result = await runCli(['doctor'], { cwd: p.dir });
    expect(result.stdout).toMatch(new RegExp(`NOT watched\\s+${outOf(p.dir)}$`, 'm'));
    expect(result.stdout).toMatch(new RegExp(`watched\\s+${p.classes}$`, 'm'));
    expect(result.exitCode, result.stdout + result.stderr).toBe(75);
  });
});

describe("a jar whose manifest's Class-Path names another jar, before target/classes", () => {
  /** lib/a.jar's manifest lists b.jar (beside it), which holds `entries`; the class path is lib/a.jar, then target/classes. */
  const start = (entries: Record<string, string>) =>
    projectWithAgent(
      (q) => ({ classPath: [path.join(q.dir, 'lib', 'a.jar'), q.classes] }),
      (q) => {
        fs.mkdirSync(path.join(q.dir, 'lib'));
        writeJar(path.join(q.dir, 'lib', 'a.jar'), { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\nClass-Path: b.jar\r\n\r\n' });
        writeJar(path.join(q.dir, 'lib', 'b.jar'), entries);
      },
    );

  it('b.jar holds none of the classes: the JVM loads them from target/classes, and a run with nothing changed is ✔', async () => {
    const { p, agent } = await start({ 'com/other/Y.class': 'y-v1' });
    expect(jvmTruth(agent, 'com.acme.Greeter')).toMatchObject({ loaded: true, sha256: sha('greeter-v1') });
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('does not load this file');
    expect(result.stderr).toContain('✔ proven live');
    expect(result.exitCode, result.stderr).toBe(0);
  });

  it('b.jar holds Greeter: the JVM runs the jar bytes; named as the jar it loads from, never ✔', async () => {
    const { p, agent } = await start({ 'com/acme/Greeter.class': 'greeter-jar' });
    expect(jvmTruth(agent, 'com.acme.Greeter')).toMatchObject({ loaded: true, sha256: sha('greeter-jar') });
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).toContain(`from the jar ${path.join(p.dir, 'lib', 'b.jar')} (com.acme.Greeter among them)`);
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe('verify: bytes no attempt can come for are asked once, not polled to the deadline', () => {
  const VERIFY = ['--verify-timeout', '20000'];

  it('a class path folder the agent does not watch: not-watched at once, 75', async () => {
    const lib = (dir: string) => path.join(dir, 'lib', 'classes');
    const { p, agent } = await projectWithAgent(
      (q) => ({ classPath: [q.classes, lib(q.dir)] }),
      (q) => writeClass(lib(q.dir), 'com.lib.U', 'u-v1'),
    );
    writeClass(lib(p.dir), 'com.lib.U', 'u-v2');
    const result = await run(p, ['verify', ...VERIFY, 'lib/classes']);
    expect(jvmTruth(agent, 'com.lib.U')).toMatchObject({ loaded: true, sha256: sha('u-v1') });
    expect(result.stderr).toMatch(new RegExp(`not-watched\\s+com\\.lib\\.U\\s+the agent does not watch ${lib(p.dir)}`));
    expect(result.stderr).toContain(`warning: the agent does not watch ${lib(p.dir)}`);
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('target/classes behind a jar holding the class, unchanged since the app started: the jar named, asked once, 75', async () => {
    const jar = (dir: string) => path.join(dir, 'lib', 'a.jar');
    const { p, agent } = await projectWithAgent(
      (q) => ({ classPath: [jar(q.dir), q.classes] }),
      (q) => {
        fs.mkdirSync(path.join(q.dir, 'lib'));
        writeJar(jar(q.dir), { 'com/acme/Greeter.class': 'greeter-jar' });
      },
    );
    const result = await run(p, ['verify', ...VERIFY, 'target/classes/com/acme/Greeter.class']);
    expect(jvmTruth(agent, 'com.acme.Greeter')).toMatchObject({ loaded: true, sha256: sha('greeter-jar') });
    expect(result.stderr).toContain(`from the jar ${jar(p.dir)} (com.acme.Greeter among them)`);
    expect(result.stderr).toMatch(/not-observed\s+com\.acme\.Greeter\s+no reload attempt/);
    expect(result.stderr).not.toContain('timeout');
    expect(result.exitCode, result.stderr).toBe(75);
  });
});
