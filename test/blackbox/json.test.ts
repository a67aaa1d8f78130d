/**
 * `--json`: every line of real runs (builds, refusals, every subcommand) must match the zod
 * schema of its type in src/report/schema.ts, strictly; `--json | head -1` ends quietly.
 */
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { agentLineSchema, jsonLineSchema } from '../../src/report/schema.js';
import { BIN, cliEnv, runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const agentFor = useFakeAgents({ heartbeatMs: 100 });

/** Line types seen across the whole file: each type of the schema must appear in a real run. */
const seen = new Set<string>();
afterAll(() => {
  expect([...seen].sort()).toEqual(
    [
      'agent',
      'agent-event',
      'build-end',
      'build-start',
      'changes',
      'class',
      'finish',
      'hold',
      'result',
      'verify-progress',
      'waiting',
      'warning',
    ].sort(),
  );
});

function project(): { dir: string; classes: string } {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  writeClass(classes, 'com.acme.Gone', 'gone-v1');
  writeClass(classes, 'com.acme.package-info', 'pi-v1');
  return { dir, classes };
}

/** Parses stdout as JSON lines and checks each against the schema; returns them. */
function checkLines(stdout: string): Array<Record<string, unknown>> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines.length).toBeGreaterThan(0);
  return lines.map((line) => {
    const value = JSON.parse(line) as Record<string, unknown>;
    const parsed = jsonLineSchema.safeParse(value);
    if (!parsed.success) throw new Error(`line does not match the schema: ${line}\n${parsed.error.message}`);
    seen.add(String(value.type));
    return value;
  });
}

const script = (code: string) => ['--', process.execPath, '-e', code];

describe('--json lines match the schema', () => {
  it('a build that changes, adds, removes and skips classes', async () => {
    const p = project();
    await agentFor(p);
    const file = (name: string) => JSON.stringify(path.join(p.classes, 'com', 'acme', name));
    const run = await runCli(
      [
        '--json',
        '--classes-dir',
        'elsewhere/classes',
        ...script(
          `const fs=require('fs');fs.writeFileSync(${file('Greeter.class')},'greeter-v2');fs.writeFileSync(${file('package-info.class')},'pi-v2');fs.rmSync(${file('Gone.class')});fs.writeFileSync(${file('Fresh.class')},'new');`,
        ),
      ],
      { cwd: p.dir },
    );
    expect(run.exitCode).toBe(0);
    const lines = checkLines(run.stdout);
    const types = lines.map((l) => l.type);
    expect(types.slice(0, 2)).toEqual(['agent', 'hold']);
    // --classes-dir names a directory that is not there: said once; with no change there, it is not named as not watched.
    expect(lines).toContainEqual(expect.objectContaining({ type: 'warning', message: expect.stringContaining('does not exist') }));
    expect(lines).not.toContainEqual(expect.objectContaining({ type: 'warning', message: expect.stringContaining('does not watch') }));
    expect(types.indexOf('build-start')).toBeLessThan(types.indexOf('build-end'));
    expect(types.at(-1)).toBe('result');
    const classes = lines.filter((l) => l.type === 'class');
    expect(classes.map((c) => [c.className, c.status])).toEqual([
      ['com.acme.Greeter', 'applied'],
      ['com.acme.Fresh', 'added'],
      ['com.acme.Gone', 'removed'],
      ['com.acme.package-info', 'not-verifiable'],
    ]);
    const result = lines.at(-1)!;
    expect(result).toMatchObject({
      action: 'build',
      reason: 'ok',
      exitCode: 0,
      provenLive: true,
      hold: 'none',
      build: { exitCode: 0, signal: null },
    });
    expect(result.classes).toEqual(classes.map(({ type: _t, ...c }) => c));
    expect(run.stderr).toContain('proven live');
  });

  it('a failed build, a refusal, a wait for a busy hold, and a config error', async () => {
    const p = project();
    await agentFor(p);
    // It writes a class file before failing: its hold stays (one that wrote nothing is released).
    const greeter = JSON.stringify(path.join(p.classes, 'com', 'acme', 'Greeter.class'));
    const failed = await runCli(
      ['--json', '--owner', 'ide', ...script(`require('fs').writeFileSync(${greeter}, 'half'); process.exit(3)`)],
      {
        cwd: p.dir,
      },
    );
    expect(failed.exitCode).toBe(3);
    expect(checkLines(failed.stdout).at(-1)).toMatchObject({ reason: 'build-failed', exitCode: 3, hold: 'held', owner: 'ide' });

    const busy = await runCli(['--json', '--owner', 'me', '--wait', '1200', ...script('')], { cwd: p.dir });
    expect(busy.exitCode).toBe(69);
    const busyLines = checkLines(busy.stdout);
    expect(busyLines.some((l) => l.type === 'waiting')).toBe(true);
    expect(busyLines.at(-1)).toMatchObject({ reason: 'hold-busy', exitCode: 69 });

    const lonely = tempDir();
    const refused = await runCli(['--json', ...script('')], { cwd: lonely });
    expect(refused.exitCode).toBe(69);
    expect(checkLines(refused.stdout)).toEqual([expect.objectContaining({ type: 'result', reason: 'no-agent', agent: null })]);

    const bad = await runCli(['--json', '--config', 'nope.json', ...script('')], { cwd: lonely });
    expect(bad.exitCode).toBe(2);
    expect(checkLines(bad.stdout)).toEqual([expect.objectContaining({ type: 'result', action: 'build', reason: 'usage' })]);
  });

  it("a failed build's result carries its last lines (stdout and stderr, control sequences removed, at most 40); a passing build's none", async () => {
    const p = project();
    await agentFor(p);
    const noisy = `for (let i = 1; i <= 50; i++) console.log('line ' + i);
      console.error('\\x1b[1;31m[ERROR]\\x1b[0m Greeter.java:[5,9] expected ";"');
      process.exit(1)`;
    const failed = await runCli(['--json', ...script(noisy)], { cwd: p.dir });
    expect(failed.exitCode).toBe(1);
    const { build } = checkLines(failed.stdout).at(-1) as { build: { output: string[] } };
    expect(build.output).toHaveLength(40);
    expect(build.output).toContain('line 50');
    expect(build.output).not.toContain('line 10');
    expect(build.output).toContain('[ERROR] Greeter.java:[5,9] expected ";"');
    // It still reaches stderr, as without --json.
    expect(failed.stderr).toContain('line 1\n');
    expect(failed.stderr).toContain('Greeter.java:[5,9]');

    const passed = await runCli(['--json', ...script("console.log('fine')")], { cwd: p.dir });
    expect(passed.exitCode, passed.stderr).toBe(0);
    expect((checkLines(passed.stdout).at(-1) as { build: object }).build).not.toHaveProperty('output');
  });

  it('every usage error ends with one result line of its command (reason usage, exit 2), nothing else on stdout', async () => {
    const cwd = tempDir();
    const cases: Array<[string[], string, RegExp]> = [
      [['--json'], 'build', /no build command/],
      [['--json', 'nosuchtool'], 'build', /unknown build tool "nosuchtool"/],
      [['--json', '--wait', 'soon', '--', 'true'], 'build', /--wait takes a whole number/],
      [['--json', '--no-such-option', 'mvn'], 'build', /unknown option '--no-such-option'/],
      [['--json', 'doctor', '--timeout', 'x'], 'doctor', /--timeout takes a whole number/],
      [['--json', 'status', 'extra'], 'status', /too many arguments for 'status'/],
    ];
    for (const [args, action, message] of cases) {
      const run = await runCli(args, { cwd });
      expect(run.exitCode, args.join(' ')).toBe(2);
      const lines = checkLines(run.stdout);
      expect(lines, args.join(' ')).toEqual([expect.objectContaining({ type: 'result', action, reason: 'usage', exitCode: 2 })]);
      expect(String(lines[0]!.message)).toMatch(message);
    }
  });

  it('verify and the agent subcommands', async () => {
    const p = project();
    const agent = await agentFor(p);
    writeClass(p.classes, 'com.acme.Greeter', 'greeter-v2');
    // verify asks while the agent has not captured the change; the SCAN that makes it reload comes
    // once it asks, so the RELOAD event arrives while verify is connected.
    const verifying = startCli(
      ['verify', '--json', 'target/classes/com/acme/Greeter.class', 'target/classes/com/acme/package-info.class'],
      { cwd: p.dir },
    );
    await waitFor(() => agent.received.some((r) => r.line.startsWith('VERIFY ')), 'verify to ask');
    expect((await runCli(['scan', '--json'], { cwd: p.dir })).exitCode).toBe(0);
    const ended = await verifying;
    const verify = { exitCode: ended.exitCode, stdout: String(ended.stdout) };
    expect(verify.exitCode, String(ended.stderr)).toBe(0);
    const lines = checkLines(verify.stdout);
    expect(lines.some((l) => l.type === 'agent-event' && l.level === 'RELOAD')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ action: 'verify', reason: 'ok', provenLive: true });

    for (const args of [['doctor'], ['status'], ['pause'], ['resume'], ['scan'], ['verify', 'target/nope']]) {
      const run = await runCli([...args, '--json'], { cwd: p.dir });
      const result = checkLines(run.stdout).at(-1)!;
      expect(result).toMatchObject({ type: 'result', action: args[0], exitCode: run.exitCode });
    }
    const noAgent = await runCli(['status', '--json'], { cwd: tempDir() });
    expect(checkLines(noAgent.stdout)).toEqual([
      expect.objectContaining({ action: 'status', reason: 'no-agent', exitCode: 69, endpoint: null, state: null }),
    ]);
    expect(agent.received.length).toBeGreaterThan(0);
  });

  it('events --json: the agent lines as they came', async () => {
    const p = project();
    const agent = await agentFor(p, { heartbeatMs: 30 });
    const child = startCli(['events', '--json'], { cwd: p.dir });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => out.split('\n').length >= 4, 'three agent lines');
    await agent.stop();
    const run = await child;
    expect(run.exitCode).toBe(0);
    for (const line of String(run.stdout).trim().split('\n')) expect(agentLineSchema.safeParse(JSON.parse(line)).success).toBe(true);
  });
});

describe('--json | head -1', () => {
  const viaHead = (args: string[], cwd: string) =>
    execa(
      'bash',
      [
        '-c',
        `set -o pipefail; node ${JSON.stringify(BIN)} ${args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')} | head -1; echo "statuses \${PIPESTATUS[*]}" >&2`,
      ],
      {
        cwd,
        env: cliEnv(),
        extendEnv: false,
        reject: false,
        timeout: 30_000,
      },
    );

  it('ends a build quietly: no EPIPE, the run completes and releases the hold', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await viaHead(
      [
        '--json',
        '--',
        process.execPath,
        '-e',
        `require('fs').writeFileSync(${JSON.stringify(path.join(p.classes, 'com', 'acme', 'Greeter.class'))}, 'v9')`,
      ],
      p.dir,
    );
    expect(String(run.stdout).split('\n').filter(Boolean)).toHaveLength(1);
    expect(JSON.parse(String(run.stdout))).toMatchObject({ type: 'agent' });
    expect(String(run.stderr)).not.toMatch(/EPIPE|Error:/);
    expect(String(run.stderr)).toContain('statuses 0 0');
    expect(agent.hold().kind).toBe('none');
  });

  it('ends events --json at the next line after head has gone', async () => {
    const p = project();
    await agentFor(p, { heartbeatMs: 50 });
    const run = await viaHead(['events', '--json'], p.dir);
    expect(JSON.parse(String(run.stdout))).toMatchObject({ level: 'CONNECTED' });
    expect(String(run.stderr)).not.toMatch(/EPIPE|Error:/);
    expect(String(run.stderr)).toContain('statuses 0 0');
  });
});
