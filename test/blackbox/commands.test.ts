/**
 * The agent subcommands through the real binary against the fake agent: doctor, status,
 * pause, resume, scan, verify and events, with their exit statuses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { useFakeAgents } from '../support/agents.js';
import { runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const agentFor = useFakeAgents({ heartbeatMs: 200, java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' } });

interface Project {
  dir: string;
  classes: string;
}

function project(): Project {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  writeClass(classes, 'com.acme.Outer$Inner', 'inner-v1');
  return { dir, classes };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

/** Rewrites classes in place and lets the fake agent capture and reload them (as a SCAN would). */
async function reload(agent: FakeAgent, p: Project, writes: Record<string, string>): Promise<void> {
  for (const [name, bytes] of Object.entries(writes)) writeClass(p.classes, name, bytes);
  const scan = await runCli(['scan'], { cwd: p.dir });
  expect(scan.exitCode).toBe(0);
  await waitFor(() => agent.captures > 0, 'a capture');
}

describe('doctor', () => {
  it("prints the agent's evidence as a table and says the class output directory here is watched", async () => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(['doctor'], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^agent\s+1\.4\.0-fake \(status protocol 1\)$/m);
    expect(run.stdout).toMatch(new RegExp(`^session\\s+${agent.sessionId}$`, 'm'));
    expect(run.stdout).toMatch(/^Java\s+21\.0\.4/m);
    expect(run.stdout).toMatch(/^watcher\s+watching$/m);
    expect(run.stdout).toMatch(/^build hold\s+none$/m);
    expect(run.stdout).toMatch(/^supports\s+owned builds yes · VERIFY yes · SCAN yes$/m);
    expect(run.stdout).toMatch(new RegExp(`^  watched\\s+${escape(p.classes)}$`, 'm'));
    expect(run.stdout).toContain('1 of 1 class output directory here watched');
    // DOCTOR, then RELOAD status: whether reloads are paused.
    expect(agent.received.map((r) => r.line.split(' ').slice(0, 2).join(' '))).toEqual([
      expect.stringMatching(/^DOCTOR /),
      'RELOAD status',
    ]);
    expect(run.stdout).toMatch(/^reloads\s+automatic$/m);
  });

  it('flags a class output directory the agent does not watch', async () => {
    const p = project();
    const other = path.join(p.dir, 'build', 'classes', 'java', 'main');
    writeClass(other, 'com.acme.Other', 'x');
    await agentFor(p);
    const run = await runCli(['doctor', '--json'], { cwd: p.dir });
    expect(run.exitCode).toBe(75);
    const result = lastJson(run.stdout);
    expect(result.classDirs).toEqual([
      { dir: other, watched: false },
      { dir: p.classes, watched: true },
    ]);
    expect(result.message).toContain('NOT watched');
    const human = await runCli(['doctor'], { cwd: p.dir });
    expect(human.stdout).toMatch(new RegExp(`NOT watched\\s+${escape(other)}`));
  });

  it('exits 69 with agent-not-ready when DOCTOR gets no reply, as a build and verify do', async () => {
    const p = project();
    await agentFor(p, { notReady: true });
    const run = await runCli(['doctor', '--timeout', '300'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain(
      'accepted the connection but did not answer DOCTOR within 300 ms: it is still starting, too old, or its JVM is stopped or hung',
    );
    expect(run.stderr).toContain('next: wait until the app has started and try again, or raise --timeout');
    const json = await runCli(['doctor', '--json', '--timeout', '300'], { cwd: p.dir });
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ action: 'doctor', reason: 'agent-not-ready', exitCode: 69 });
    expect(run.stdout).toBe('');
  });

  it('exits 69 for an agent from before build ownership, without asking', async () => {
    const p = project();
    const agent = await agentFor(p, { agentVersion: null });
    const run = await runCli(['doctor'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('too old for DOCTOR');
    expect(agent.received).toEqual([]);
  });

  it('exits 69 with no agent, and names the fix for a stale port file', async () => {
    const p = project();
    const none = await runCli(['doctor'], { cwd: p.dir });
    expect(none.exitCode).toBe(69);
    expect(none.stderr).toContain('no running agent found');
    expect(none.stderr).not.toContain('--allow-no-agent');

    const agent = await agentFor(p);
    const port = agent.port;
    await agent.stop();
    fs.mkdirSync(path.join(p.dir, '.reclazz'), { recursive: true });
    fs.writeFileSync(path.join(p.dir, '.reclazz', 'agent.port'), String(port));
    const stale = await runCli(['doctor'], { cwd: p.dir });
    expect(stale.exitCode).toBe(69);
    expect(stale.stderr).toContain('the port file is stale');
  });
});

describe('refusals in human output', () => {
  it('print the error first, then the next: line, like the build does', async () => {
    const p = project();
    // Port 1: nothing listens there, and no test's agent can be given it (unlike a freed ephemeral port).
    for (const args of [['doctor'], ['status'], ['pause'], ['resume'], ['scan'], ['events'], ['verify'], ['--', 'true']]) {
      const run = await runCli(['--port', '1', ...args], { cwd: p.dir });
      const said = `${args.join(' ')}: ${run.stderr}`;
      expect(run.exitCode, said).toBe(69);
      const lines = run.stderr.trim().split('\n');
      const error = lines.findIndex((l) => l.includes('✘'));
      expect(lines[error], said).toContain('nothing is listening on port 1 (--port)');
      expect(lines[error + 1], said).toBe('reclazz-build: next: check the port');
      expect(
        lines.filter((l) => l.includes('next:')),
        said,
      ).toHaveLength(1);
    }
  });
});

describe('status, pause, resume', () => {
  it('print the exact RELOAD_STATE receipt of each action', async () => {
    const p = project();
    const agent = await agentFor(p);
    const paused = await runCli(['pause'], { cwd: p.dir });
    expect(paused.exitCode).toBe(0);
    expect(paused.stdout).toMatch(/^automatic reload paused/m);
    expect(paused.stdout).toMatch(/^  paused\s+yes$/m);

    writeClass(p.classes, 'com.acme.Greeter', 'greeter-v2');
    const status = await runCli(['status', '--json'], { cwd: p.dir });
    expect(status.exitCode).toBe(0);
    expect(lastJson(status.stdout)).toMatchObject({
      action: 'status',
      reason: 'ok',
      state: { action: 'status', paused: true, pendingClasses: 1, pendingActions: 0, buildHold: 'none' },
    });

    const resumed = await runCli(['resume'], { cwd: p.dir });
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toMatch(/^  paused\s+no$/m);
    expect(resumed.stdout).toContain('not yet reloaded');
    const sent = agent.received.map((r) => r.line.split(' ').slice(0, 2).join(' '));
    expect(sent).toEqual(['RELOAD pause', 'RELOAD status', 'RELOAD resume']);
    expect(agent.received.every((r) => /^RELOAD \w+ request=[A-Za-z0-9_-]+$/.test(r.line))).toBe(true);
  });

  it('note that resume does not release a build hold', async () => {
    const p = project();
    await agentFor(p);
    // A failed build that wrote a class file: its hold stays (one that wrote nothing is released).
    const greeter = JSON.stringify(path.join(p.classes, 'com', 'acme', 'Greeter.class'));
    const script = `require('fs').writeFileSync(${greeter}, 'half'); process.exit(1)`;
    const held = await runCli(['--owner', 'ide', '--', process.execPath, '-e', script], { cwd: p.dir });
    expect(held.exitCode).toBe(1);
    const resumed = await runCli(['resume'], { cwd: p.dir });
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toMatch(/^  build hold\s+named$/m);
    expect(resumed.stdout).toContain('resume never releases it');
  });

  it('report a missing receipt as uncertain, exit 69, never as done', async () => {
    const p = project();
    const agent = await agentFor(p, { intercept: (cmd) => (cmd.verb === 'RELOAD' ? { kind: 'drop' } : undefined) });
    const run = await runCli(['pause', '--timeout', '300', '--json'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('no RELOAD_STATE receipt for RELOAD pause within 300 ms: uncertain whether the agent paused');
    expect(run.stderr).toContain('reclazz-build status');
    expect(lastJson(run.stdout)).toMatchObject({ action: 'pause', reason: 'no-receipt', exitCode: 69, state: null });
    expect(agent.received.map((r) => r.line.split(' ')[0])).toEqual(['RELOAD']);
  });

  it('refuse to send RELOAD to an old agent', async () => {
    const p = project();
    const agent = await agentFor(p, { agentVersion: null });
    const run = await runCli(['status'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('too old for RELOAD');
    expect(agent.received).toEqual([]);
  });
});

describe('scan', () => {
  it('sends SCAN, says no reply exists, and confirms the agent read it', async () => {
    const p = project();
    const agent = await agentFor(p);
    writeClass(p.classes, 'com.acme.Greeter', 'greeter-v2');
    const run = await runCli(['scan'], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('SCAN sent and read by the agent');
    expect(run.stdout).toContain('SCAN has no reply');
    expect(agent.received.map((r) => r.line.split(' ')[0])).toEqual(['SCAN', 'DOCTOR']);
    await waitFor(() => agent.captures === 1, 'capture 1');
  });

  it('to an old agent: sent, nothing confirms it', async () => {
    const p = project();
    const agent = await agentFor(p, { agentVersion: null });
    const run = await runCli(['scan', '--json'], { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ action: 'scan', sent: true, delivered: false });
    await waitFor(() => agent.received.length === 1, 'the command');
    expect(agent.received[0]!.line).toBe('SCAN');
  });

  it('to an agent that answers nothing yet: sent, uncertain, exit 69', async () => {
    const p = project();
    const agent = await agentFor(p, { notReady: true });
    const run = await runCli(['scan', '--timeout', '300', '--json'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(lastJson(run.stdout)).toMatchObject({ action: 'scan', reason: 'no-receipt', sent: true, delivered: false });
    expect(run.stderr).toContain('uncertain');
    expect(agent.received.map((r) => r.line.split(' ')[0])).toEqual(['SCAN', 'DOCTOR']);
  });
});

describe('verify', () => {
  it('exits 0 when every class given is applied, naming nested classes by binary name', async () => {
    const p = project();
    const agent = await agentFor(p);
    await reload(agent, p, { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer$Inner': 'inner-v2' });
    const run = await runCli(['verify', 'target/classes'], { cwd: p.dir });
    expect(run.stderr).toContain('all 2 class(es) proven live');
    expect(run.exitCode).toBe(0);
    const verifies = agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ').slice(2).join(' '));
    expect(new Set(verifies)).toEqual(new Set([`com.acme.Greeter ${sha('greeter-v2')}`, `com.acme.Outer$Inner ${sha('inner-v2')}`]));
  });

  it('names a single file by its class output directory, and defaults to the directories here', async () => {
    const p = project();
    const agent = await agentFor(p);
    await reload(agent, p, { 'com.acme.Greeter': 'greeter-v2' });
    const one = await runCli(['verify', 'target/classes/com/acme/Greeter.class', '--json'], { cwd: p.dir });
    expect(one.exitCode).toBe(0);
    const result = lastJson(one.stdout);
    expect(result).toMatchObject({ action: 'verify', reason: 'ok', provenLive: true });
    expect(result.classes).toEqual([
      expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied', sha256: sha('greeter-v2') }),
    ]);

    // No paths: every class here; Outer$Inner was never reloaded in this session, and is at its path since before the app started.
    const all = await runCli(['verify'], { cwd: p.dir });
    expect(all.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    expect(all.stderr).toMatch(/unchanged\s+com\.acme\.Outer\$Inner\s+unchanged at this path since before the app's JVM started/);
    expect(all.exitCode, all.stderr).toBe(0);
  });

  it('calls classes unchanged since the app started live, as a build does: no VERIFY for them, no wait, no advice', async () => {
    const p = project();
    const agent = await agentFor(p);
    // A build finds nothing to prove: the classes the app started with are live by that evidence.
    const build = await runCli(['--', 'true'], { cwd: p.dir });
    expect(build.stderr).toContain('no class that was loaded before changed bytes: nothing to prove');
    expect(build.exitCode, build.stderr).toBe(0);
    const sent = agent.received.length;
    for (const args of [['verify'], ['verify', 'target/classes/com/acme/Greeter.class']]) {
      // The default deadline (30 s): an answer only at the deadline would outlast the test's own bound.
      const run = await runCli(args, { cwd: p.dir });
      expect(run.stderr).toMatch(/unchanged\s+com\.acme\.Greeter\s+unchanged at this path since before the app's JVM started/);
      expect(run.stderr).toContain('✔ proven live:');
      expect(run.stderr).toContain("unchanged since before the app's JVM started");
      expect(run.stderr).not.toContain('--verify-timeout');
      expect(run.stderr).not.toContain('timeout');
      expect(run.exitCode, run.stderr).toBe(0);
    }
    expect(agent.received.slice(sent).filter((r) => r.line.startsWith('VERIFY '))).toEqual([]);
  });

  it('says restart-required where a build says it: a hierarchy change PENDING lists', async () => {
    const p = project();
    const change = { from: 'com.acme.Base', to: 'com.acme.Other' };
    const agent = await agentFor(p, { restartRequired: (_name, hash) => (hash === sha('greeter-v2') ? change : undefined) });
    await reload(agent, p, { 'com.acme.Greeter': 'greeter-v2' });
    const run = await runCli(['verify', 'target/classes/com/acme/Greeter.class'], { cwd: p.dir });
    expect(run.stderr).toMatch(
      /restart-required\s+com\.acme\.Greeter\s+WARN: com\.acme\.Greeter: superclass change not applied; restart required\. Still extends Base instead of Other/,
    );
    expect(run.stderr).toContain('1 class(es) need an app restart');
    expect(run.exitCode, run.stderr).toBe(75);
  });

  it('exits 75 when the agent reports a failed reload, with its detail', async () => {
    const p = project();
    const agent = await agentFor(p, { verifyStatus: () => 'failed' });
    await reload(agent, p, { 'com.acme.Greeter': 'greeter-v2' });
    const run = await runCli(['verify', 'target/classes/com/acme/Greeter.class'], { cwd: p.dir });
    expect(run.exitCode).toBe(75);
    expect(run.stderr).toMatch(/failed\s+com\.acme\.Greeter\s+the reload attempt reported failure/);
    expect(run.stderr).toContain('✘ not proven live');
  });

  it('exits 2 for a missing path or a file that is not a class, before connecting', async () => {
    const p = project();
    const agent = await agentFor(p);
    const missing = await runCli(['verify', 'target/nope'], { cwd: p.dir });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('no such file or directory: target/nope');
    // The next step says what verify takes, not only where the help is.
    expect(missing.stderr).toContain('next: give .class files or the directories holding them, as paths from this folder');
    fs.writeFileSync(path.join(p.dir, 'notes.txt'), 'x');
    const notClass = await runCli(['verify', 'notes.txt'], { cwd: p.dir });
    expect(notClass.exitCode).toBe(2);
    expect(notClass.stderr).toContain('not a class file');
    expect(agent.received).toEqual([]);
  });

  it('exits 69 with no agent', async () => {
    const p = project();
    const run = await runCli(['verify', 'target/classes'], { cwd: p.dir });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain('no running agent found');
  });
});

describe('events', () => {
  it('follows the stream until the agent goes away (exit 0), hiding heartbeats', async () => {
    const p = project();
    const agent = await agentFor(p, { heartbeatMs: 50 });
    const child = startCli(['events'], { cwd: p.dir });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => agent.clientCount() === 1, 'the follower to connect');
    agent.broadcast('RELOAD', 'Reloaded com.acme.Greeter (3ms)');
    agent.broadcast('WARN', 'something odd');
    await waitFor(() => out.includes('something odd'), 'the odd event');
    await agent.stop();
    const run = await child;
    expect(run.exitCode).toBe(0);
    expect(String(run.stdout)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} RELOAD\s+Reloaded com\.acme\.Greeter \(3ms\)$/m);
    expect(String(run.stdout)).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN\s+something odd$/m);
    expect(String(run.stdout)).not.toContain('HEARTBEAT');
    expect(String(run.stderr)).toContain('closed the stream');
  });

  it('with --json passes the raw lines through, and Ctrl-C ends it with 130', async () => {
    const p = project();
    const agent = await agentFor(p, { heartbeatMs: 50 });
    const child = startCli(['events', '--json'], { cwd: p.dir });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor(() => agent.clientCount() === 1, 'the follower to connect');
    agent.broadcast('STRUCTURAL_RELOAD', 'Redefined com.acme.Greeter', { type: 'structural' });
    await waitFor(() => out.includes('Redefined') && out.includes('HEARTBEAT'), 'the reload and the heartbeat');
    child.kill('SIGINT');
    const run = await child;
    expect(run.exitCode).toBe(130);
    const lines = String(run.stdout)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ level: 'CONNECTED', agent: '1.4.0-fake', version: 1 });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'STRUCTURAL_RELOAD', message: 'Redefined com.acme.Greeter', type: 'structural' }),
    );
    expect(lines.some((l) => l.level === 'HEARTBEAT')).toBe(true);
    expect(String(run.stderr)).toBe('');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('subcommand usage errors exit 2 and send nothing', () => {
  it.each([
    ['doctor', '--bogus'],
    ['status', 'extra'],
    ['status', '--timeout', '0'],
    ['doctor', '--port', 'abc'],
    ['verify', '--verify-timeout', '0'],
    ['events', '--owner', 'x'],
  ])('%s %s', async (...args) => {
    const p = project();
    const agent = await agentFor(p);
    const run = await runCli(args, { cwd: p.dir });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/error/);
    expect(agent.received).toEqual([]);
  });
});
