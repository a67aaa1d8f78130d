/**
 * What a Java developer types out of habit: `-q`, a mistyped subcommand, one of reclazz-build's
 * options after the build tool's name, Gradle's continuous mode; and `.reclazz/` kept out of git.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

/** A project whose app loaded one class, with its agent. */
async function withAgent() {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.App', 'app-v1');
  const agent = await startAgent({ dir, classes });
  return { dir, classes, agent };
}

describe('-q is --quiet', () => {
  it('reclazz-build -q -- true prints what --quiet prints', async () => {
    const { dir } = await withAgent();
    const short = await runCli(['-q', '--', 'true'], { cwd: dir });
    const long = await runCli(['--quiet', '--', 'true'], { cwd: dir });
    expect(short.exitCode, short.stderr).toBe(0);
    expect(long.exitCode, long.stderr).toBe(0);
    expect(short.stderr).toBe(long.stderr);
    expect(short.stderr).not.toContain('hold acquired');
  });

  it('after mvn, -q is still Maven’s: the option check leaves it alone', async () => {
    const { dir, agent } = await withAgent();
    const run = await runCli(['mvn', '-q', '-v'], { cwd: dir });
    expect(run.stderr).not.toContain('is an option of reclazz-build');
    expect(agent.received.some((r) => r.line.startsWith('BUILD started'))).toBe(true);
  });
});

describe('a mistyped subcommand gets "did you mean"', () => {
  it.each([
    ['doctr', 'doctor'],
    ['stauts', 'status'],
    ['mvm', 'mvn'],
    ['grdle', 'gradle'],
  ])('%s: did you mean %s?, exit 2, nothing sent', async (typed, meant) => {
    const { dir, agent } = await withAgent();
    const run = await runCli([typed], { cwd: dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`unknown build tool "${typed}" (did you mean ${meant}?)`);
    expect(agent.received).toEqual([]);
  });

  it('a word like no command gets no guess', async () => {
    const run = await runCli(['make'], { cwd: tempDir() });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).not.toContain('did you mean');
  });

  it('watch mvm: did you mean mvn?', async () => {
    const run = await runCli(['watch', 'mvm', 'compile'], { cwd: tempDir() });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('unknown build tool "mvm" (did you mean mvn?)');
  });
});

describe("reclazz-build's own options after the tool's name: a usage error before the hold", () => {
  it.each([
    [['mvn', '-q', 'compile', '--no-verify'], '--no-verify', 'mvn'],
    [['mvn', 'compile', '--verify-timeout', '5000'], '--verify-timeout', 'mvn'],
    [['gradle', 'classes', '--owner=abc'], '--owner', 'gradle'],
    [['gradle', '--port-file', 'x/agent.port', 'classes'], '--port-file', 'gradle'],
    [['mvn', 'compile', '--json'], '--json', 'mvn'],
    [['mvn', 'compile', '--allow-no-agent'], '--allow-no-agent', 'mvn'],
    [['watch', 'mvn', 'compile', '--wait', '10'], '--wait', 'mvn'],
  ])('%j names %s and where it goes; nothing is sent', async (args, option, tool) => {
    const { dir, agent } = await withAgent();
    const run = await runCli(args, { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain(`${option} is an option of reclazz-build, not of ${tool}: put it before ${tool}`);
    expect(agent.received).toEqual([]);
  });

  it('after a -- among the tool’s arguments, the words are the tool’s', async () => {
    const { dir, agent } = await withAgent();
    const run = await runCli(['mvn', '-v', '--', '--json', '--help'], { cwd: dir });
    expect(run.stderr).not.toContain('is an option of reclazz-build');
    expect(run.stdout).not.toContain('Usage: reclazz-build');
    expect(agent.received.some((r) => r.line.startsWith('BUILD started'))).toBe(true);
  });
});

describe("after the tool's name: --help is reclazz-build's, --quiet the tool's, and an option both have is refused", () => {
  it.each([
    [['mvn', '--help'], 'Usage: reclazz-build [options] gradle|mvn'],
    [['mvn', '-q', 'compile', '-h'], 'Usage: reclazz-build [options] gradle|mvn'],
    [['gradle', '--help'], 'Usage: reclazz-build [options] gradle|mvn'],
    [['watch', 'mvn', '-q', 'compile', '--help'], 'Usage: reclazz-build watch [options] gradle|mvn'],
  ])('%j prints the help, which says where the options go; exit 0, nothing sent, nothing built', async (args, usage) => {
    const { dir, agent } = await withAgent();
    const run = await runCli(args, { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(usage);
    expect(run.stdout.replace(/\s+/g, ' ')).toContain(
      'After gradle or mvn every word goes to the tool (-q and --quiet quiet the tool), but --help and -h, which print this help',
    );
    expect(run.stderr).toBe('');
    expect(agent.received).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'target', 'classes', 'com', 'acme', 'App.class'))).toBe(true);
  });

  it.each([
    [['mvn', '--verbose', 'compile'], '--verbose', 'mvn', '-X'],
    [['mvn', 'compile', '--version'], '--version', 'mvn', '-v'],
    [['gradle', '--version'], '--version', 'gradle', '-v'],
    [['watch', 'mvn', '--verbose', 'compile'], '--verbose', 'mvn', '-X'],
  ])(
    "%j: %s is refused before the hold, naming where reclazz-build's goes and the tool's own short form",
    async (args, option, tool, short) => {
      const { dir, agent } = await withAgent();
      const run = await runCli(args, { cwd: dir });
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${option} after ${tool} is refused, as reclazz-build has an option of that name`);
      expect(run.stderr).toContain(`put it before ${tool}`);
      expect(run.stderr).toContain(`for ${tool}'s own, write ${short} after ${tool}`);
      expect(agent.received).toEqual([]);
    },
  );

  it('gradle has no --verbose: after gradle it is named as reclazz-build’s only', async () => {
    const { dir, agent } = await withAgent();
    const run = await runCli(['gradle', 'classes', '--verbose'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toContain('--verbose is an option of reclazz-build, not of gradle: put it before gradle');
    expect(agent.received).toEqual([]);
  });

  it('--quiet after mvn is Maven’s, as -q is: the build runs with it', async () => {
    const { dir, agent } = await withAgent();
    const run = await runCli(['mvn', '--quiet', '-v'], { cwd: dir });
    expect(run.stderr).not.toContain('an option of reclazz-build');
    expect(run.stderr).not.toContain('is refused');
    expect(run.stderr).toContain('hold acquired; running mvn --quiet -v');
    expect(agent.received.some((r) => r.line.startsWith('BUILD started'))).toBe(true);
  });
});

describe('.reclazz/ keeps itself out of version control', () => {
  it('a run writes .reclazz/.gitignore, and git sees nothing of .reclazz/', async () => {
    const { dir } = await withAgent();
    await execa('git', ['init', '-q'], { cwd: dir });
    const run = await runCli(['--', 'true'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, '.reclazz', '.gitignore'), 'utf8')).toMatch(/^\*$/m);
    const status = await execa('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: dir });
    expect(status.stdout.split('\n').filter((l) => l.includes('.reclazz'))).toEqual([]);
  });

  it('a .gitignore of the user’s own in .reclazz/ is kept', async () => {
    const { dir } = await withAgent();
    fs.writeFileSync(path.join(dir, '.reclazz', '.gitignore'), 'agent.port\n');
    const run = await runCli(['--', 'true'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, '.reclazz', '.gitignore'), 'utf8')).toBe('agent.port\n');
  });
});
