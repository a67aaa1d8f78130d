/**
 * Command-line behaviour around the main flow: usage errors, wrapper scripts, class output
 * directories, --allow-no-agent, --no-verify, unwatched directories and the 512-receipt capacity.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A class output directory with one class the app loads, so a build there has something to prove. */
function withClasses(dir: string): void {
  writeClass(path.join(dir, 'target', 'classes'), 'com.acme.App', 'app-v1');
}

/** A fake agent for the app in `dir`, started after the classes written there so far. */
async function agentIn(dir: string, options: FakeAgentOptions): Promise<FakeAgent> {
  await appStartsLater();
  const agent = await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), captureDelayMs: 10, reloadMs: 10, ...options });
  agents.push(agent);
  return agent;
}

describe('usage errors exit 2, name the option and send nothing', () => {
  it.each([
    [['--port', 'abc', '--', 'true'], '--port'],
    [['--port', '70000', '--', 'true'], '--port'],
    [['--timeout', '-5', '--', 'true'], '--timeout'],
    [['--verify-timeout', '1.5', '--', 'true'], '--verify-timeout'],
    [['--owner', 'has space', '--', 'true'], 'owner token'],
    [['--wait', 'x', '--', 'true'], '--wait'],
    [['--bogus', '--', 'true'], '--bogus'],
    [['make'], '--'],
    [['gradle', '--continuous', 'classes'], '--continuous'],
    [['gradle', '--offline', '-qt', 'classes'], '-qt'],
  ])('%j', async (args, named) => {
    const dir = tempDir();
    const agent = await agentIn(dir, {});
    const run = await runCli(args, { cwd: dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(named);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(agent.received).toEqual([]);
  });

  it.each([[[]], [['--']], [['--json', '--']], [['--port', '1234']]])(
    '%j: no build command is a short usage error, not the whole --help',
    async (args) => {
      const dir = tempDir();
      const agent = await agentIn(dir, {});
      const run = await runCli(args, { cwd: dir });
      expect(run.exitCode).toBe(2);
      // With --json, stdout has the result line (test/blackbox/json.test.ts); never the help.
      if (!args.includes('--json')) expect(run.stdout).toBe('');
      expect(run.stdout).not.toContain('Usage:');
      expect(run.stderr).toBe('error: no build command: use gradle, mvn, or put any command after --\nRun reclazz-build --help for usage.');
      expect(agent.received).toEqual([]);
    },
  );

  it.each([
    [['--bogus', '--', 'true'], "error: unknown option '--bogus'\nRun reclazz-build --help for usage."],
    [['doctor', '--bogus'], "error: unknown option '--bogus'\nRun reclazz-build doctor --help for usage."],
    [['verify', '--timeout'], "error: option '--timeout <ms>' argument missing\nRun reclazz-build verify --help for usage."],
    [['watch', '--bogus', 'mvn'], "error: unknown option '--bogus'\nRun reclazz-build watch --help for usage."],
  ])('%j: an option error says where the help is', async (args, stderr) => {
    const run = await runCli(args, { cwd: tempDir() });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(stderr);
  });

  it('watch --allow-no-agent says why a watch needs the agent, rather than "unknown option"', async () => {
    const dir = tempDir();
    const agent = await agentIn(dir, {});
    const run = await runCli(['watch', '--allow-no-agent', '--', 'true'], { cwd: dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('watch proves every build live, which needs the agent: --allow-no-agent is for a single build');
    expect(run.stderr).not.toContain('unknown option');
    expect(agent.received).toEqual([]);
  });

  it('--help still prints the whole help and exits 0', async () => {
    const run = await runCli(['--help'], { cwd: tempDir() });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Usage: reclazz-build');
    expect(run.stdout).toContain('Exit status:');
  });

  it('a build command that does not exist exits 127 before anything is sent', async () => {
    const dir = tempDir();
    const agent = await agentIn(dir, {});
    const run = await runCli(['--', 'no-such-build-tool-xyz'], { cwd: dir });
    expect(run.exitCode).toBe(127);
    expect(run.stderr).toContain('no-such-build-tool-xyz');
    expect(agent.received).toEqual([]);
  });

  it('after --, a word that names a subcommand (status, doctor, events) is the build command, not the subcommand', async () => {
    const dir = tempDir();
    const agent = await agentIn(dir, {});
    for (const word of ['status', 'doctor', 'events']) {
      const run = await runCli(['--', word, '--no-such-flag'], { cwd: dir });
      expect(run.exitCode, `${word}: ${run.stderr}`).toBe(127);
      expect(run.stderr).toContain(`build command not found: ${word}`);
    }
    expect(agent.received).toEqual([]);
  });
});

describe('build tools', () => {
  it('a wrapper script without execute permission exits 126 with the chmod fix, before anything is sent', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'gradlew'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const agent = await agentIn(dir, {});
    const run = await runCli(['gradle', 'classes'], { cwd: dir });
    expect(run.exitCode).toBe(126);
    expect(run.stderr).toContain(`chmod +x ${path.join(dir, 'gradlew')}`);
    expect(agent.received).toEqual([]);
  });

  it("mvn runs the project's mvnw wrapper script, passing arguments untouched", async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'args');
    fs.writeFileSync(path.join(dir, 'mvnw'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${marker}'\n`, { mode: 0o755 });
    fs.mkdirSync(path.join(dir, 'module', 'sub'), { recursive: true });
    withClasses(dir);
    await agentIn(dir, {});
    const run = await runCli(['mvn', '-q', 'compile', '--also-make', 'a b'], { cwd: path.join(dir, 'module', 'sub') });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('wrapper script');
    expect(fs.readFileSync(marker, 'utf8')).toBe('-q\ncompile\n--also-make\na b\n');
  });

  it('sets RECLAZZ_SAFE_BUILD_ACTIVE=1 for the build, and refuses to run nested', async () => {
    const dir = tempDir();
    withClasses(dir);
    const agent = await agentIn(dir, {});
    const marker = path.join(dir, 'env');
    const run = await runCli(['--', 'sh', '-c', `printf %s "$RECLAZZ_SAFE_BUILD_ACTIVE" > '${marker}'`], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(fs.readFileSync(marker, 'utf8')).toBe('1');
    const before = agent.received.length;
    const nested = await runCli(['--', 'true'], { cwd: dir, env: { RECLAZZ_SAFE_BUILD_ACTIVE: '1' } });
    expect(nested.exitCode).toBe(69);
    expect(nested.stderr).toContain('inside another safe build');
    expect(agent.received.length).toBe(before);
  });
});

describe('agents and class directories', () => {
  it('--allow-no-agent builds without a hold and says nothing is proven', async () => {
    const dir = tempDir();
    const marker = path.join(dir, 'ran');
    const run = await runCli(['--allow-no-agent', '--', 'touch', marker], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(fs.existsSync(marker)).toBe(true);
    expect(run.stderr).toContain('nothing is proven live');
    // Said once, on a line of its own with the prefix.
    expect(run.stderr.match(/without a hold/gi)).toHaveLength(1);
    expect(run.stderr).toContain('reclazz-build: running WITHOUT a hold: touch');
    expect(run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('reclazz-build: '))).toEqual([]);
  });

  it('the lines before the build are short: the agent by version, pid and port, no owner token; --verbose adds where it was found, its session and the token', async () => {
    const dir = tempDir();
    withClasses(dir);
    const agent = await agentIn(dir, { java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' } });
    const run = await runCli(['--', 'true'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const before = run.stderr.split('\n').slice(
      0,
      run.stderr.split('\n').findIndex((l) => l.includes('running true')),
    );
    expect(before).toEqual([expect.stringMatching(/^reclazz-build: agent 1\.4\.0-fake \(pid \d+, Java 21\.0\.4\) on 127\.0\.0\.1:\d+$/)]);
    for (const line of before) expect(line.length).toBeLessThan(80);
    expect(run.stderr).not.toContain('owner token');
    const verbose = await runCli(['--verbose', '--', 'true'], { cwd: dir });
    expect(verbose.exitCode, verbose.stderr).toBe(0);
    expect(verbose.stderr).toContain(`from ${path.join(dir, '.reclazz', 'agent.port')}, session ${agent.sessionId}`);
    expect(verbose.stderr).toMatch(
      /owner token \S+ \(reused from the last run against this agent session\); to recover a held build: --owner \S+/,
    );
  });

  it('--classes-dir adds a directory; a directory the agent does not watch is warned about and its classes named not watched', async () => {
    const dir = tempDir();
    const custom = path.join(dir, 'out', 'production');
    writeClass(custom, 'app.Main', 'v1');
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    const agent = await agentIn(dir, { watchDirs: [path.join(dir, 'elsewhere')] });
    const script = `require('fs').writeFileSync(${JSON.stringify(path.join(custom, 'app', 'Main.class'))}, 'v2')`;
    const run = await runCli(['--classes-dir', 'out/production', '--verify-timeout', '800', '--', process.execPath, '-e', script], {
      cwd: dir,
    });
    expect(run.stderr).toContain(`does not watch ${custom}`);
    // The agent never reloads a folder it does not watch: asked once, briefly, then named not watched; 75.
    expect(agent.received.some((r) => r.line.includes(' app.Main '))).toBe(true);
    expect(run.exitCode).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+app\.Main/);
  });

  it('--no-verify: build ok, nothing verified, says it is not proven live', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    writeClass(classes, 'a.B', 'v1');
    const agent = await agentIn(dir, { watchDirs: [classes] });
    const script = `require('fs').writeFileSync(${JSON.stringify(path.join(classes, 'a', 'B.class'))}, 'v2')`;
    const run = await runCli(['--no-verify', '--', process.execPath, '-e', script], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('NOT proven live');
    expect(agent.received.some((r) => r.line.startsWith('VERIFY'))).toBe(false);
  });

  it('more changed classes than the agent keeps receipts for: stops once 512 are final, exit 75 naming the capacity', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    const names = Array.from({ length: 600 }, (_, i) => `big.p${i % 7}.C${i}`);
    for (const name of names) writeClass(classes, name, `v1 ${name}`);
    await agentIn(dir, { watchDirs: [classes] });
    const script = `const fs=require('fs'),path=require('path');for(const n of ${JSON.stringify(names)})fs.writeFileSync(path.join(${JSON.stringify(classes)},...n.split('.'))+'.class','v2 '+n)`;
    const run = await runCli(['--json', '--', process.execPath, '-e', script], { cwd: dir });
    expect(run.exitCode).toBe(75);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    // Stopped once 512 were final, not at the 30 s deadline (the run's own time; bench/ measures how fast).
    expect(result.durationMs).toBeLessThan(20_000);
    expect(result.message).toContain('512');
    const statuses = result.classes.map((c: { status: string }) => c.status);
    expect(statuses.filter((s: string) => s === 'applied').length).toBe(512);
    expect(statuses.filter((s: string) => s === 'beyond-capacity').length).toBe(88);
  });
});

describe('--json keeps stdout for JSON lines', () => {
  it("sends the build tool's own stdout to stderr", async () => {
    const dir = tempDir();
    withClasses(dir);
    await agentIn(dir, {});
    const run = await runCli(['--json', '--', 'sh', '-c', 'echo "[ERROR] build says hello"'], { cwd: dir });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines).not.toContain('[ERROR] build says hello');
    expect(run.stderr).toContain('[ERROR] build says hello');
    expect(lines.map((l) => JSON.parse(l).type)).toContain('build-start');
  });
});
