/**
 * The main flow, driving the real binary against the fake agent with a generic build command
 * (`-- node -e ...`) that rewrites class files the way javac does (in place).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent, FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { jsonResult, runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { agentFor as startAgent, buildCommand, buildStartedAtMs, project as baseProject, type Project } from '../support/project.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** The shared project, with a package-info class beside the others. */
function project(): Project {
  const p = baseProject();
  writeClass(p.classes, 'com.acme.package-info', 'pi-v1');
  return p;
}

const agentFor = (p: Project, options: FakeAgentOptions = {}): Promise<FakeAgent> =>
  startAgent(p, agents, { portFile: p.portFile, heartbeatMs: 200, ...options });

/** A build command that records when it ran, rewrites the given classes in place, and exits with `exit`. */
const build = (p: Project, writes: Record<string, string>, exit = 0): string[] => buildCommand(p, { writes, exit });

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const verbs = (agent: FakeAgent) => agent.received.map((r) => r.line.split(' ').slice(0, 2).join(' '));

describe('reclazz-build -- <command> against the fake agent', () => {
  it('holds, builds, releases and proves each changed class by SHA-256', async () => {
    const p = project();
    const agent = await agentFor(p, { intercept: (cmd) => (cmd.words[1] === 'started' ? { kind: 'delay', ms: 300 } : undefined) });
    const run = await runCli(
      build(p, { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer$Inner': 'inner-v2', 'com.acme.package-info': 'pi-v2' }),
      { cwd: p.dir },
    );
    expect(run.stderr).toContain('proven live');
    expect(run.exitCode).toBe(0);
    const sent = agent.received.map((r) => r.line.split(' ')[0] + (r.line.startsWith('BUILD') ? ` ${r.line.split(' ')[1]}` : ''));
    // RELOAD status before every build (a pause is said then); during VERIFY, RELOAD status watches the agent's capture.
    expect(sent.slice(0, 4)).toEqual(['DOCTOR', 'BUILD started', 'RELOAD', 'BUILD ok']);
    expect(new Set(sent.slice(4))).toEqual(new Set(['VERIFY', ...(sent.slice(4).includes('RELOAD') ? ['RELOAD'] : [])]));
    expect(agent.received.filter((r) => r.line.startsWith('RELOAD ')).every((r) => r.line.startsWith('RELOAD status '))).toBe(true);
    const verifies = agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ').slice(2).join(' '));
    expect(new Set(verifies)).toEqual(new Set([`com.acme.Greeter ${sha('greeter-v2')}`, `com.acme.Outer$Inner ${sha('inner-v2')}`]));
    // The build ran only after the delayed started receipt was sent.
    const acquired = agent.holdLog.find((h) => h.event === 'acquired')!;
    expect(buildStartedAtMs(p)).toBeGreaterThanOrEqual(acquired.atMs + 300);
    expect(run.stderr).toMatch(/skipped\s+com\.acme\.package-info/);
    expect(agent.hold().kind).toBe('none');
  });

  it('ends with the build tool exit status after a failed build, sends no VERIFY, and keeps the hold for the owner', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(['--owner', 'me-1', ...build(p, { 'com.acme.Greeter': 'broken' }, 3)], { cwd: p.dir });
    expect(run.exitCode).toBe(3);
    expect(verbs(agent).filter((v) => v.startsWith('BUILD'))).toEqual(['BUILD started', 'BUILD failed']);
    expect(agent.received.some((r) => r.line.startsWith('VERIFY'))).toBe(false);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'me-1' });

    const fixed = await runCli(['--owner', 'me-1', ...build(p, { 'com.acme.Greeter': 'fixed' })], { cwd: p.dir });
    expect(fixed.exitCode).toBe(0);
    expect(agent.hold().kind).toBe('none');
  });

  it('recovers a held build on the next run without --owner (the owner is saved per agent session)', async () => {
    const p = project();
    const agent = await agentFor(p);
    // A failed build that wrote a class file: the agent keeps the hold (one that wrote nothing releases it).
    expect((await runCli(build(p, { 'com.acme.Greeter': 'half' }, 1), { cwd: p.dir })).exitCode).toBe(1);
    const owner = agent.hold().owner;
    expect(owner).toBeDefined();
    const second = await runCli(build(p, { 'com.acme.Greeter': 'v3' }), { cwd: p.dir });
    expect(second.exitCode).toBe(0);
    // It says so, naming the token (as a watch's cycle line says "hold recovered").
    expect(second.stderr).toContain(`reclazz-build: recovering the build an earlier run left held (owner token ${owner})`);
  });

  it('counts a same-size, same-mtime rewrite with new bytes as a change', async () => {
    const p = project();
    const agent = await agentFor(p);
    const file = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const { mtime } = fs.statSync(file);
    const script = `require('fs').writeFileSync(${JSON.stringify(file)}, 'GREETER-V1'); require('fs').utimesSync(${JSON.stringify(file)}, new Date(${mtime.getTime()}), new Date(${mtime.getTime()}));`;
    const run = await runCli(['--', process.execPath, '-e', script], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(agent.received.filter((r) => r.line.startsWith('VERIFY')).map((r) => r.line.split(' ')[2])).toContain('com.acme.Greeter');
  });

  it('reports added and removed classes; an added one is asked, and stays new as DIAGNOSE says the JVM has not loaded it', async () => {
    const p = project();
    const agent = await agentFor(p);
    const gone = path.join(p.classes, 'com', 'acme', 'Outer.class');
    const script = `require('fs').rmSync(${JSON.stringify(gone)}); require('fs').writeFileSync(${JSON.stringify(path.join(p.classes, 'com', 'acme', 'Fresh.class'))}, 'new');`;
    const run = await runCli(['--', process.execPath, '-e', script], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/added\s+com\.acme\.Fresh/);
    expect(run.stderr).toMatch(/removed\s+com\.acme\.Outer\b/);
    expect(new Set(agent.received.filter((r) => r.line.startsWith('VERIFY')).map((r) => r.line.split(' ')[2]))).toEqual(
      new Set(['com.acme.Fresh']),
    );
    expect(agent.received.some((r) => r.line === 'DIAGNOSE com.acme.Fresh')).toBe(true);
  });
});

describe('back-to-back runs', () => {
  it("waits for the previous run's capture to release the hold before sending started", async () => {
    const p = project();
    // A capture later than the first run's end and exit, even on a loaded machine.
    const agent = await agentFor(p, { captureDelayMs: 3000 });
    const first = await runCli(['--no-verify', ...build(p, { 'com.acme.Greeter': 'greeter-v2' })], { cwd: p.dir });
    expect(first.exitCode).toBe(0);
    expect(agent.hold().kind).toBe('named'); // the ok receipt only scheduled the capture
    const second = await runCli(['--no-verify', ...build(p, { 'com.acme.Greeter': 'greeter-v3' })], { cwd: p.dir });
    expect(second.exitCode).toBe(0);
    const events = agent.holdLog.map((h) => h.event);
    expect(events.slice(0, 4)).toEqual(['acquired', 'capture-scheduled', 'released', 'acquired']);
    expect(events).not.toContain('reacquired');
  });
});

describe('a run killed mid-build', () => {
  it('leaves the pre-build baseline, so the next run verifies what that build wrote', async () => {
    const p = project();
    const agent = await agentFor(p);
    const greeter = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const script = `require('fs').writeFileSync(${JSON.stringify(greeter)}, 'greeter-v2'); require('fs').writeFileSync(${JSON.stringify(p.marker)}, String(process.pid)); setTimeout(() => {}, 60000);`;
    const child = startCli(['--', process.execPath, '-e', script], { cwd: p.dir });
    const buildPid = () => (fs.existsSync(p.marker) ? Number(fs.readFileSync(p.marker, 'utf8')) : 0);
    await expect.poll(() => buildPid()).toBeGreaterThan(0);
    child.kill('SIGKILL');
    // The orphaned build still holds the output pipes: end it too, by its pid (a pattern such as
    // pkill -f would also hit other tests' processes whose command lines hold the same words).
    process.kill(buildPid(), 'SIGKILL');
    await child;
    const run = await runCli(['--', 'true'], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
  });
});

describe('the baseline a run compares against', () => {
  it('same app session: a class rewritten between runs, outside any hold, is verified by the next run', async () => {
    const p = project();
    const agent = await agentFor(p);
    expect((await runCli(build(p, { 'com.acme.Greeter': 'greeter-v2' }), { cwd: p.dir })).exitCode).toBe(0);
    // A plain compile outside reclazz-build (the agent reloads it on the next capture).
    writeClass(p.classes, 'com.acme.Outer', 'outer-v2');
    const run = await runCli(['--json', ...build(p, {})], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Outer ${sha('outer-v2')}`))).toBe(true);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    expect(result.classes.map((c: { className: string; status: string }) => [c.className, c.status])).toEqual([
      ['com.acme.Outer', 'applied'],
    ]);
  });

  it('after an app restart: what the new session loaded is the baseline, so an untouched class is not reported', async () => {
    const p = project();
    const agent = await agentFor(p);
    expect((await runCli(build(p, { 'com.acme.Greeter': 'greeter-v2' }), { cwd: p.dir })).exitCode).toBe(0);
    writeClass(p.classes, 'com.acme.Outer', 'outer-v2');
    await appStartsLater();
    await agent.restart(); // loads outer-v2 as it starts
    const run = await runCli(build(p, { 'com.acme.Greeter': 'greeter-v3' }), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const verified = agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ')[2]);
    expect(new Set(verified)).toEqual(new Set(['com.acme.Greeter']));
  });
});

describe('what the next run takes as live', () => {
  it('a class not proven applied stays changed: the next run verifies it again instead of calling it live', async () => {
    const p = project();
    const agent = await agentFor(p, { verifyStatus: () => 'failed' });
    const first = await runCli(['--verify-timeout', '3000', ...build(p, { 'com.acme.Greeter': 'greeter-v2' })], { cwd: p.dir });
    expect(first.exitCode, first.stderr).toBe(75);
    const second = await runCli(['--verify-timeout', '3000', ...build(p, {})], { cwd: p.dir });
    expect(second.exitCode, second.stderr).toBe(75);
    expect(second.stderr).not.toContain('✔ proven live');
    expect(agent.received.filter((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`)).length).toBeGreaterThanOrEqual(2);
  });

  it('bytes an earlier run built and could not prove are asked about again without the long wait: the agent has had its capture', async () => {
    const p = project();
    // An agent that never captures: VERIFY says not_observed for ever.
    const agent = await agentFor(p, { captureDelayMs: 600_000 });
    const first = await runCli(['--verify-timeout', '1500', ...build(p, { 'com.acme.Greeter': 'greeter-v2' })], { cwd: p.dir });
    expect(first.exitCode, first.stderr).toBe(75);
    const second = await runCli(['--json', '--wait', '0', '--verify-timeout', '30000', ...build(p, {})], { cwd: p.dir });
    expect(second.exitCode, second.stderr).toBe(75);
    // Not the 30 s deadline (the run's own time, start-up aside).
    expect(jsonResult(second).durationMs).toBeLessThan(15_000);
    expect(second.stderr).toContain('no reload attempt with these bytes in this agent session');
    expect(agent.received.filter((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`)).length).toBeGreaterThanOrEqual(2);
    // A rebuild of the class is a fresh change again: the whole deadline applies.
    const third = await runCli(['--wait', '0', '--verify-timeout', '1500', ...build(p, { 'com.acme.Greeter': 'greeter-v3' })], {
      cwd: p.dir,
    });
    expect(third.exitCode, third.stderr).toBe(75);
    expect(third.stderr).not.toContain('no reload attempt with these bytes');
  });

  it('--no-verify proves nothing, so the next run verifies what it built', async () => {
    const p = project();
    const agent = await agentFor(p);
    expect((await runCli(['--no-verify', ...build(p, { 'com.acme.Greeter': 'greeter-v2' })], { cwd: p.dir })).exitCode).toBe(0);
    expect(agent.received.some((r) => r.line.startsWith('VERIFY '))).toBe(false);
    const run = await runCli(build(p, {}), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
  });

  it('a class file it cannot read is named in a warning and keeps its old state, so its change is verified once readable', async () => {
    const p = project();
    const agent = await agentFor(p);
    expect((await runCli(build(p, {}), { cwd: p.dir })).exitCode).toBe(0);
    const outer = path.join(p.classes, 'com', 'acme', 'Outer.class');
    // Readable by the owner only; the run goes as nobody when the tests run as root.
    for (const dir of [p.dir, path.dirname(p.dir)]) fs.chmodSync(dir, fs.statSync(dir).mode | 0o755);
    fs.chownSync(path.join(p.dir, '.reclazz'), 65534, 65534);
    for (const name of fs.readdirSync(path.join(p.dir, '.reclazz'))) fs.chownSync(path.join(p.dir, '.reclazz', name), 65534, 65534);
    fs.chmodSync(outer, process.getuid?.() === 0 ? 0o600 : 0);
    const blind = await runCli(['--', 'true'], { cwd: p.dir, unprivileged: true, env: { RECLAZZ_CODE_CACHE: '0' } });
    // Whether it changed is unknown: never "proven live".
    expect(blind.exitCode, blind.stderr).toBe(75);
    expect(blind.stderr).toContain(`cannot read 1 class file(s), so their changes are not checked (${outer}): check their permissions`);
    expect(blind.stderr).toContain('1 class file(s) could not be read, so whether they changed is unknown: not proven live');
    expect(blind.stderr).not.toContain('✔');
    fs.chmodSync(outer, 0o644);
    const run = await runCli(build(p, { 'com.acme.Outer': 'outer-v2' }), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Outer ${sha('outer-v2')}`))).toBe(true);
  });
});

describe('where the class files are', () => {
  it('a --classes-dir inside another class output directory is named in a warning and covered by the outer one', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(
      [
        '--classes-dir',
        path.join(p.classes, 'com'),
        '--classes-dir',
        path.join(p.dir, 'no-such-dir'),
        ...build(p, { 'com.acme.Greeter': 'greeter-v2' }),
      ],
      { cwd: p.dir },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(`${path.join(p.classes, 'com')} is inside the class output directory ${p.classes}`);
    expect(run.stderr).toContain(`--classes-dir ${path.join(p.dir, 'no-such-dir')} does not exist`);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
  });

  it('a --classes-dir around a class output directory (--classes-dir target) gives way to it, so class names stay right', async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(['--classes-dir', path.join(p.dir, 'target'), ...build(p, { 'com.acme.Greeter': 'greeter-v2' })], {
      cwd: p.dir,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      `--classes-dir ${path.join(p.dir, 'target')} holds the class output directory ${p.classes}, which is used instead`,
    );
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
  });

  it('run from a folder inside the project, it still finds and verifies the class output', async () => {
    const p = project();
    const agent = await agentFor(p);
    const sub = path.join(p.dir, 'src', 'main', 'java', 'com', 'acme');
    fs.mkdirSync(sub, { recursive: true });
    const run = await runCli(build(p, { 'com.acme.Greeter': 'greeter-v2' }), { cwd: sub });
    expect(run.exitCode).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v2')}`))).toBe(true);
  });

  it("a failed run that looked at other class directories does not hide the next run's changes", async () => {
    const p = project();
    const agent = await agentFor(p);
    // A failed run that only knew an unrelated class output directory leaves the hold...
    const other = tempDir();
    expect(
      (
        await runCli(['--classes-dir', other, ...build(p, {}, 1)], {
          cwd: tempDir(),
          env: { RECLAZZ_PORT_FILE: path.join(p.dir, '.reclazz', 'agent.port') },
        })
      ).exitCode,
    ).toBe(1);
    // ...and the recovering run in the project verifies the changed Greeter, not "added".
    const run = await runCli(build(p, { 'com.acme.Greeter': 'greeter-v3' }), { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(agent.received.some((r) => r.line.includes(` com.acme.Greeter ${sha('greeter-v3')}`))).toBe(true);
  });
});

describe('refusals: exit 69 and the build never runs', () => {
  it('no agent anywhere', async () => {
    const p = project();
    const run = await runCli(build(p, {}), { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('no running agent found');
    expect(fs.existsSync(p.marker)).toBe(false);
  });

  it('a stale port file (nothing listening)', async () => {
    const p = project();
    const agent = await agentFor(p);
    const port = agent.port;
    await agent.stop();
    fs.mkdirSync(path.join(p.dir, '.reclazz'), { recursive: true });
    fs.writeFileSync(path.join(p.dir, '.reclazz', 'agent.port'), String(port));
    const run = await runCli(build(p, {}), { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('stale');
    expect(fs.existsSync(p.marker)).toBe(false);
  });

  it('a started receipt without the owner suffix (an agent from before build ownership)', async () => {
    const p = project();
    const agent = await agentFor(p, {
      intercept: (cmd) =>
        cmd.words[1] === 'started'
          ? { kind: 'reply', lines: [info(`BUILD_ACK ${cmd.words[2]!.slice('request='.length)} started`)] }
          : undefined,
    });
    const run = await runCli(build(p, {}), { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('too old');
    expect(fs.existsSync(p.marker)).toBe(false);
    expect(agent.received.some((r) => r.line.startsWith('BUILD ok'))).toBe(false);
  });

  it('a hold owned by someone else, with --wait 0', async () => {
    const p = project();
    const agent = await agentFor(p);
    // A failed build that wrote a class file leaves the hold with its owner.
    const ide = await runCli(['--owner', 'the-ide', ...build(p, { 'com.acme.Greeter': 'half' }, 1)], { cwd: p.dir });
    expect(ide.exitCode).toBe(1);
    fs.rmSync(p.marker);
    const run = await runCli(['--owner', 'terminal', '--wait', '0', ...build(p, {})], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('another owner');
    expect(fs.existsSync(p.marker)).toBe(false);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'the-ide' });
  });
});

function info(message: string): string {
  return JSON.stringify({ level: 'INFO', message, timestamp: new Date().toISOString() });
}
