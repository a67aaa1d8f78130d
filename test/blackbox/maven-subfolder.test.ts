/**
 * `reclazz-build mvn ...` started in a folder of a Maven project that has no pom.xml of its own
 * (`cd src/main/java/com/acme`): the build runs where the nearest pom.xml is, as Maven needs,
 * and says so, instead of Maven's "there is no POM in this directory" under the hold.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

/** A Maven project (its pom.xml a stand-in) whose mvnw records the folder it ran in, with its agent. */
async function mavenProject() {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, '.git'));
  fs.writeFileSync(path.join(dir, 'pom.xml'), '<project/>\n');
  const ranIn = path.join(dir, 'ran-in');
  fs.writeFileSync(path.join(dir, 'mvnw'), `#!/bin/sh\npwd > ${JSON.stringify(ranIn)}\n`, { mode: 0o755 });
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.App', 'app-v1');
  const sources = path.join(dir, 'src', 'main', 'java', 'com', 'acme');
  fs.mkdirSync(sources, { recursive: true });
  await startAgent({ dir, classes });
  return { dir, ranIn, sources };
}

describe('mvn from a folder without pom.xml', () => {
  it('runs in the nearest folder above with a pom.xml, and says so', async () => {
    const { dir, ranIn, sources } = await mavenProject();
    const run = await runCli(['mvn', '-q', 'compile'], { cwd: sources });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(fs.readFileSync(ranIn, 'utf8').trim()).toBe(fs.realpathSync(dir));
    expect(run.stderr).toContain(
      `running ${path.join(dir, 'mvnw')} -q compile (the project wrapper script) in ${dir} (the nearest folder with a pom.xml`,
    );
  });

  it('with --json, build-start says where it ran and where the run started', async () => {
    const { dir, sources } = await mavenProject();
    const run = await runCli(['--json', 'mvn', 'compile'], { cwd: sources });
    expect(run.exitCode, run.stderr).toBe(0);
    const start = run.stdout
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.type === 'build-start');
    expect(start).toMatchObject({ cwd: dir, movedFrom: sources });
  });

  it('a folder with its own pom.xml (a module), or a POM named with -f, stays where it is', async () => {
    const { ranIn, sources } = await mavenProject();
    const module = path.join(sources, 'module');
    fs.mkdirSync(module);
    fs.writeFileSync(path.join(module, 'pom.xml'), '<project/>\n');
    const inModule = await runCli(['mvn', 'compile'], { cwd: module });
    expect(inModule.exitCode, inModule.stderr).toBe(0);
    expect(fs.readFileSync(ranIn, 'utf8').trim()).toBe(fs.realpathSync(module));
    expect(inModule.stderr).not.toContain('nearest folder');
    const named = await runCli(['mvn', '-f', '../../../../../pom.xml', 'compile'], { cwd: sources });
    expect(named.exitCode, named.stderr).toBe(0);
    expect(fs.readFileSync(ranIn, 'utf8').trim()).toBe(fs.realpathSync(sources));
  });
});
