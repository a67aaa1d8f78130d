/** Project config through the real binary: used by builds and subcommands, beaten by options, errors exit 2. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A project whose app (and agent port file) lives in app/, as a Gradle attach plugin writes it; its JVM runs there. */
async function setup(): Promise<{ dir: string; agent: FakeAgent; classes: string }> {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, '.git'));
  const classes = path.join(dir, 'app', 'build', 'classes', 'kotlin', 'main');
  writeClass(classes, 'com.acme.K', 'k1');
  await appStartsLater();
  const agent = await startFakeAgent({
    portFile: path.join(dir, 'app', 'custom', 'agent.port'),
    appDir: path.join(dir, 'app'),
    watchDirs: [classes],
    captureDelayMs: 20,
    reloadMs: 20,
    heartbeatMs: 1000,
  });
  agents.push(agent);
  return { dir, agent, classes };
}

describe('reclazz.config.json and package.json "reclazz"', () => {
  it('give subcommands the port file and class output directories', async () => {
    const { dir, classes } = await setup();
    expect((await runCli(['doctor'], { cwd: dir })).exitCode).toBe(69);
    fs.writeFileSync(
      path.join(dir, 'reclazz.config.json'),
      JSON.stringify({ portFile: 'app/custom/agent.port', classesDirs: ['app/build/classes/kotlin/main'] }),
    );
    const run = await runCli(['doctor', '--json'], { cwd: dir });
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout) as { classDirs: unknown; endpoint: { portFile: string } };
    expect(result.endpoint.portFile).toBe(path.join(dir, 'app', 'custom', 'agent.port'));
    expect(result.classDirs).toEqual([{ dir: classes, watched: true }]);
    // The command line wins.
    const flag = await runCli(['doctor', '--port-file', 'nowhere.port'], { cwd: dir });
    expect(flag.exitCode).toBe(69);
    expect(flag.stderr).toContain('nowhere.port does not exist');
  });

  it('give a build its default gradle arguments and timeouts; arguments on the command line replace them', async () => {
    const { dir } = await setup();
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({
        name: 'app',
        reclazz: { portFile: 'app/custom/agent.port', gradleArgs: [':app:classes', '--offline'], verifyTimeoutMs: 4000 },
      }),
    );
    const gradlew = path.join(dir, 'gradlew');
    fs.writeFileSync(gradlew, `#!/bin/sh\nprintf '%s\\n' "$@" > "${path.join(dir, 'args.txt')}"\n`);
    fs.chmodSync(gradlew, 0o755);
    const run = await runCli(['gradle'], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'args.txt'), 'utf8')).toBe(':app:classes\n--offline\n');
    const own = await runCli(['gradle', 'compileJava'], { cwd: dir });
    expect(own.exitCode).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'args.txt'), 'utf8')).toBe('compileJava\n');
  });

  it('an invalid config is a usage error naming the file, the key and the expected shape; nothing runs', async () => {
    const { dir, agent } = await setup();
    const file = path.join(dir, 'reclazz.config.json');
    fs.writeFileSync(file, JSON.stringify({ portFile: 'app/custom/agent.port', waitMs: -1 }));
    for (const args of [['--', 'true'], ['status'], ['verify'], ['events']]) {
      const run = await runCli(args, { cwd: dir });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain(
        `invalid config in ${file}: key "waitMs": expected a whole number of milliseconds, 0 or more, e.g. 30000, got -1`,
      );
    }
    expect(agent.received).toEqual([]);
  });
});
