/**
 * Issue 42: an app whose JVM runs from a jar holding this project's classes (`java -jar
 * target/app.jar`, a Spring Boot fat jar, a jar before `target/classes` on the class path) loads
 * them from the jar, not from where the build writes: `doctor` says so first, with the fix, and
 * a build says it once. The fake agent's stand-in JVM carries that command line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { buildCommand } from '../support/project.js';
import { run, useProjects } from '../support/evidence.js';
import { writeJar } from '../support/zip.js';

const projectWithAgent = useProjects();

/** What `doctor` and a build say of a jar run, whatever the jar: the jar, one class, the folder, and the fix. */
function jarRunSaid(jar: string, classes: string): RegExp {
  const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `the app's JVM loads this project's classes from the jar ${esc(jar)} \\(com\\.acme\\.\\S+ among them\\), not from ${esc(classes)}, where the build writes`,
  );
}

const FIX = /run the app from its class output directories: mvn spring-boot:run, \.\/gradlew bootRun, .*\(docs\/connect\.md#spring-boot\)/;

/** A jar at `target/app.jar` holding the project's Greeter, at `prefix` (a fat jar's `BOOT-INF/classes/`). */
function appJar(dir: string, prefix = ''): string {
  const jar = path.join(dir, 'target', 'app.jar');
  writeJar(jar, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\n', [`${prefix}com/acme/Greeter.class`]: 'greeter-v0' });
  return jar;
}

describe('doctor: the app runs from a jar that holds its classes', () => {
  it('java -jar target/app.jar: said first, with the fix; 75', async () => {
    const { p } = await projectWithAgent(
      (q) => ({ jar: path.join(q.dir, 'target', 'app.jar') }),
      (q) => appJar(q.dir),
    );
    const result = await runCli(['doctor'], { cwd: p.dir });
    const jar = fs.realpathSync(path.join(p.dir, 'target', 'app.jar'));
    const message = result.stdout.split('\n').find((line) => line.includes('DOCTOR observed'));
    expect(message, result.stdout).toMatch(new RegExp(`^${jarRunSaid(jar, fs.realpathSync(p.classes)).source}`));
    expect(result.stdout).toMatch(FIX);
    expect(result.exitCode, result.stdout + result.stderr).toBe(75);
  });

  it('a Spring Boot fat jar (its classes in BOOT-INF/classes/): the same', async () => {
    const { p } = await projectWithAgent(
      (q) => ({ jar: path.join(q.dir, 'target', 'app.jar') }),
      (q) => appJar(q.dir, 'BOOT-INF/classes/'),
    );
    const result = await runCli(['doctor'], { cwd: p.dir });
    expect(result.stdout).toMatch(jarRunSaid(fs.realpathSync(path.join(p.dir, 'target', 'app.jar')), fs.realpathSync(p.classes)));
    expect(result.stdout).toMatch(FIX);
    expect(result.exitCode).toBe(75);
  });

  it('a jar before target/classes on the class path holding one of its classes: the same; after it, nothing to say', async () => {
    const before = await projectWithAgent(
      (q) => ({ classPath: [path.join(q.dir, 'target', 'app.jar'), q.classes] }),
      (q) => appJar(q.dir),
    );
    const said = await runCli(['doctor'], { cwd: before.p.dir });
    expect(said.stdout).toMatch(
      jarRunSaid(fs.realpathSync(path.join(before.p.dir, 'target', 'app.jar')), fs.realpathSync(before.p.classes)),
    );
    expect(said.exitCode).toBe(75);

    const after = await projectWithAgent(
      (q) => ({ classPath: [q.classes, path.join(q.dir, 'target', 'app.jar')] }),
      (q) => appJar(q.dir),
    );
    const quiet = await runCli(['doctor'], { cwd: after.p.dir });
    expect(quiet.stdout).not.toContain('from the jar');
    expect(quiet.exitCode, quiet.stdout + quiet.stderr).toBe(0);
  });
});

describe('a build: the app runs from a jar that holds its classes', () => {
  it('java -jar target/app.jar: said once, as a warning with the fix', async () => {
    const { p } = await projectWithAgent(
      (q) => ({ jar: path.join(q.dir, 'target', 'app.jar') }),
      (q) => appJar(q.dir),
    );
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer': 'outer-v2' } }));
    const said = result.stderr
      .split('\n')
      .filter((line) => jarRunSaid(fs.realpathSync(path.join(p.dir, 'target', 'app.jar')), fs.realpathSync(p.classes)).test(line));
    expect(said, result.stderr).toHaveLength(1);
    expect(said[0]).toMatch(/^reclazz-build: warning: /);
    expect(said[0]).toMatch(FIX);
  });

  it('run from target/classes: not said', async () => {
    const { p } = await projectWithAgent({}, (q) => appJar(q.dir));
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(result.stderr).not.toContain('from the jar');
    expect(result.exitCode, result.stderr).toBe(0);
  });
});
