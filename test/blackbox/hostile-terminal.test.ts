/**
 * A hostile peer on the agent's port, through the real binary: escape sequences, CR, LF, DEL,
 * C1 and bidirectional controls in event levels and messages, DOCTOR fields, VERIFY details and
 * class file names reach the terminal only as visible escapes (`\x1b`, `\u009b`), never raw, and
 * can never print a line of their own; `--json` keeps the exact text; with NO_COLOR nothing
 * reclazz-build writes holds an ESC byte that the build tool did not write itself.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTILE_PAYLOAD, type FakeAgent, type HostileOptions } from '../../src/fake-agent/index.js';
import { useFakeAgents } from '../support/agents.js';
import { cliCommand, runCli, runInTerminal, startCli, writeClass } from '../support/cli.js';
import { rawControlIn, scratchDir } from '../support/scratch.js';
import { Lines, waitFor } from '../support/wait.js';

const agentFor = useFakeAgents({ heartbeatMs: 0, java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' } });

/** HOSTILE_PAYLOAD as a terminal must show it. */
const SHOWN = String.raw`\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m\x0dCR\x0areclazz-build: ✔ proven live\x7f\u009b2J\u202eevil\u2066iso\u2069`;

/**
 * The switches that taint text a build shows, with the DOCTOR fields a run still works with (a
 * tainted session id reads as a restart; a tainted level is not one a build shows).
 */
const TAINTED: HostileOptions = {
  messages: true,
  verify: true,
  health: true,
  doctor: ['detail', 'agentVersion', 'pid', 'javaVersion', 'vmName', 'workingDirectory', 'watchedDirectories'],
};

function project(): { dir: string; classes: string } {
  const dir = scratchDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  return { dir, classes };
}

/** A build command (after `--`) that rewrites the class files of these binary names. */
function rewrite(classes: string, names: string[], bytes = 'v2'): string[] {
  const files = names.map((name) => path.join(classes, ...name.split('.')) + '.class');
  const script = `for (const f of ${JSON.stringify(files)}) require('fs').writeFileSync(f, ${JSON.stringify(bytes)})`;
  return ['--', process.execPath, '-e', script];
}

/** The checks every piece of terminal output gets: nothing raw, and no line the peer made. */
function expectSafe(text: string, what: string): void {
  expect(rawControlIn(text), `${what} holds a raw control character`).toBeUndefined();
  // The payload's own "verdict" follows its LF: shown, it is in the middle of a line, after `\x0a`.
  for (const line of text.split('\n')) expect(line.startsWith('reclazz-build: ✔ proven live\\x7f'), `${what}: ${line}`).toBe(false);
  expect(text, what).not.toMatch(/^CR/m);
}

/** `events` until the agent stops, after it broadcast `message` at `level`. */
async function follow(agent: FakeAgent, dir: string, args: string[], level: string, message: string) {
  const run = startCli(['events', ...args], { cwd: dir, timeoutMs: 30_000 });
  const out = new Lines(run.stdout!);
  await waitFor(() => agent.clientCount() === 1, 'the follower to connect');
  agent.broadcast(level, message);
  // The agent stops once the follower has passed the message on (escaped, but with its text).
  await waitFor(() => out.all.some((line) => line.includes(message)), 'the message on stdout');
  await agent.stop();
  const result = await run;
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

describe('events from a hostile peer', () => {
  it('shows tainted levels and messages escaped, on one line each; the greeting line too', async () => {
    const p = project();
    const agent = await agentFor(p, { hostile: { levels: true, messages: true } });
    const run = await follow(agent, p.dir, [], 'WARN', 'hello');
    expect(run.exitCode, run.stderr).toBe(0);
    expectSafe(run.stdout, 'stdout');
    expectSafe(run.stderr, 'stderr');
    const lines = run.stdout.split('\n').filter((l) => l.includes('hello'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN/);
    expect(lines[0]).toContain(`WARN${SHOWN} hello${SHOWN}`);
    // CONNECTED's agent field is tainted too.
    expect(run.stderr).toContain(`following agent 1.4.0-fake${SHOWN} on 127.0.0.1:${agent.port}`);
  });

  it('--json keeps the exact text (JSON escapes it), and stderr stays clean', async () => {
    const p = project();
    const agent = await agentFor(p, { hostile: { levels: true, messages: true } });
    const run = await follow(agent, p.dir, ['--json'], 'WARN', 'hello');
    expect(run.exitCode, run.stderr).toBe(0);
    expectSafe(run.stdout, 'stdout');
    expectSafe(run.stderr, 'stderr');
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level?: string; message?: string; agent?: string; type?: string });
    expect(events[0]!.agent).toBe(`1.4.0-fake${HOSTILE_PAYLOAD}`);
    expect(events.find((e) => e.message?.startsWith('hello'))).toMatchObject({
      level: `WARN${HOSTILE_PAYLOAD}`,
      message: `hello${HOSTILE_PAYLOAD}`,
    });
  });
});

describe('doctor against a hostile peer', () => {
  it('shows every tainted DOCTOR field escaped in its own row; --json has the exact values', async () => {
    const p = project();
    // Its JVM's options cannot be read (attached at run time): DOCTOR's tainted list is all there is.
    await agentFor(p, { hostile: { doctor: true }, agentOn: 'attached' });
    const run = await runCli(['doctor', '--verbose'], { cwd: p.dir });
    // A tainted watcher state is not "watching": a pre-flight finding (exit 75, doctor's own rule).
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stdout).toContain('not watching: nothing reloads until it runs');
    expectSafe(run.stdout, 'stdout');
    expectSafe(run.stderr, 'stderr');
    expect(run.stdout).toMatch(new RegExp(`^agent\\s+1\\.4\\.0-fake${escapeRe(SHOWN)} \\(status protocol 1\\)$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^Java\\s+21\\.0\\.4${escapeRe(SHOWN)} \\(.*${escapeRe(SHOWN)}\\)$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^working dir\\s+${escapeRe(p.dir)}${escapeRe(SHOWN)}$`, 'm'));
    // The watched row ends with where that directory is here: the tainted name is not.
    expect(run.stdout).toMatch(new RegExp(`^\\s+${escapeRe(p.classes)}${escapeRe(SHOWN)}  not here$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^detail\\s+.*${escapeRe(SHOWN)}$`, 'm'));

    const json = await runCli(['doctor', '--json'], { cwd: p.dir });
    const result = JSON.parse(json.stdout) as { doctor: { vmName: string; workingDirectory: string } };
    expect(result.doctor.workingDirectory).toBe(`${p.dir}${HOSTILE_PAYLOAD}`);
    expect(result.doctor.vmName.endsWith(HOSTILE_PAYLOAD)).toBe(true);
    expectSafe(json.stderr, 'stderr with --json');
  });
});

describe('a build against a hostile peer', () => {
  it("escapes the agent line, the agent's events, the warnings and VERIFY's detail; the verdict line is the real one", async () => {
    const p = project();
    await agentFor(p, { hostile: TAINTED });
    const run = await runCli(rewrite(p.classes, ['com.acme.Greeter']), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expectSafe(run.stderr, 'stderr');
    expect(run.stderr).toMatch(
      new RegExp(
        `^reclazz-build: agent 1\\.4\\.0-fake${escapeRe(SHOWN)} \\(pid \\d+${escapeRe(SHOWN)}, Java 21\\.0\\.4${escapeRe(SHOWN)}\\)`,
        'm',
      ),
    );
    expect(run.stderr).toMatch(
      new RegExp(`^reclazz-build: agent RELOAD Reloaded com\\.acme\\.Greeter \\(\\d+ms\\)${escapeRe(SHOWN)}$`, 'm'),
    );
    // The pid the agent names is no process id (it has the payload): a warning quotes it.
    expect(run.stderr).toMatch(
      new RegExp(
        `^reclazz-build: warning: the agent reports no process id for the app \\(pid ".*${escapeRe(SHOWN.replace(/\\/g, '\\\\'))}"\\)`,
        'm',
      ),
    );
    expect(run.stderr).toMatch(new RegExp(`^ {2}applied +com\\.acme\\.Greeter {2}reloaded in \\d+ms${escapeRe(SHOWN)}$`, 'm'));
    expect(run.stderr.trimEnd().split('\n').at(-1)).toBe(
      'reclazz-build: ✔ proven live: all 1 changed class(es) proven live (VERIFY applied, SHA-256 matched)',
    );
  });

  it('--json: the exact text in the JSON lines, and stderr as clean as without it', async () => {
    const p = project();
    await agentFor(p, { hostile: TAINTED });
    const run = await runCli(['--json', ...rewrite(p.classes, ['com.acme.Greeter'])], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expectSafe(run.stderr, 'stderr');
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const result = lines.at(-1) as { agent: { javaVersion: string }; classes: Array<{ detail: string }> };
    expect(result.agent.javaVersion).toBe(`21.0.4${HOSTILE_PAYLOAD}`);
    expect(result.classes[0]!.detail.endsWith(HOSTILE_PAYLOAD)).toBe(true);
    const reloaded = lines.find((l) => l.type === 'agent-event' && String(l.message).startsWith('Reloaded com.acme.Greeter'));
    expect(String(reloaded?.message).endsWith(HOSTILE_PAYLOAD)).toBe(true);
    expect(reloaded?.level).toBe('RELOAD');
  });

  it('verify: tainted VERIFY details are escaped', async () => {
    const p = project();
    const agent = await agentFor(p, { hostile: { verify: true } });
    // Reload it once (SCAN), so that VERIFY has a receipt to tell.
    writeClass(p.classes, 'com.acme.Greeter', 'greeter-v2');
    expect((await runCli(['scan'], { cwd: p.dir })).exitCode).toBe(0);
    await waitFor(() => agent.captures > 0, 'the capture');
    const run = await runCli(['verify', '--verify-timeout', '3000'], { cwd: p.dir });
    expectSafe(run.stderr, 'stderr');
    expect(run.stderr).toMatch(new RegExp(`^ {2}applied +com\\.acme\\.Greeter {2}.*${escapeRe(SHOWN)}$`, 'm'));
    expect(run.exitCode, run.stderr).toBe(0);
  });
});

describe('a class file whose name holds control characters', () => {
  it('is reported as not verifiable with its name escaped; the counts and the verdict line agree', async () => {
    const p = project();
    const name = 'com.acme.Evil\u001b[2J\nreclazz-build: ✔ proven live\u009b';
    writeClass(p.classes, name, 'evil-v1');
    const agent = await agentFor(p);
    const run = await runCli(rewrite(p.classes, [name]), { cwd: p.dir });
    expectSafe(run.stderr, 'stderr');
    expect(run.stderr).toMatch(/^reclazz-build: class files: 1 changed, 0 added, 0 removed, 1 not verifiable \(of 2\)$/m);
    expect(run.stderr).toContain(
      String.raw`  skipped          com.acme.Evil\x1b[2J\x0areclazz-build: ✔ proven live\u009b  not a name VERIFY accepts; not verified`,
    );
    const [verdict, next] = run.stderr.trimEnd().split('\n').slice(-2);
    expect(next).toMatch(/^reclazz-build: next: /);
    // Not "no class that was loaded before changed bytes": one did, and it could not be checked,
    // so the run is not proven live (75), never a green verdict.
    expect(run.exitCode, run.stderr).toBe(75);
    expect(verdict!).not.toContain('✔');
    expect(verdict!).toMatch(/1 changed class file\(s\) have a name VERIFY does not accept .*not proven live/);
    // Nothing was asked about it: the agent never answers a VERIFY for such a name.
    expect(agent.received.filter((r) => r.line.startsWith('VERIFY'))).toEqual([]);

    const json = await runCli(['--json', ...rewrite(p.classes, [name], 'v3')], { cwd: p.dir });
    const result = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as {
      classes: Array<{ className: string; status: string }>;
      message: string;
    };
    expect(result.classes).toEqual([expect.objectContaining({ className: name, status: 'not-verifiable' })]);
    expect(json.exitCode).toBe(75);
    expect(result.message).toMatch(/1 changed class file\(s\) have a name VERIFY does not accept .*not proven live/);
  });

  it('beside a verifiable one that is applied: the one it could not check keeps the run from a green verdict (75)', async () => {
    const p = project();
    const name = 'com.acme.Tab\u0007Bell';
    writeClass(p.classes, name, 'bell-v1');
    await agentFor(p);
    const run = await runCli(rewrite(p.classes, [name, 'com.acme.Greeter']), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(75);
    expectSafe(run.stderr, 'stderr');
    expect(run.stderr).toMatch(/class files: 2 changed, 0 added, 0 removed, 1 not verifiable \(of 2\)/);
    const [verdict, next] = run.stderr.trimEnd().split('\n').slice(-2);
    expect(next).toMatch(/^reclazz-build: next: /);
    expect(verdict!).not.toContain('✔');
    expect(verdict!).toMatch(/all 1 class\(es\) checked are live, but 1 changed class file\(s\) have a name VERIFY does not accept/);
  });
});

describe('NO_COLOR: no ESC byte that the build tool did not write', () => {
  const ESC = '\u001b';

  it('in a pipe: every command against a peer that taints everything', async () => {
    const p = project();
    const agent = await agentFor(p, { hostile: { ...TAINTED, levels: true, doctor: true, reload: true } });
    const runs = [
      await runCli(['doctor'], { cwd: p.dir }),
      await runCli(['doctor', '--json'], { cwd: p.dir }),
      await runCli(['status', '--timeout', '300'], { cwd: p.dir }),
      await runCli(['--json', ...rewrite(p.classes, ['com.acme.Greeter'], 'v3')], { cwd: p.dir }),
      await runCli(['verify', '--verify-timeout', '500'], { cwd: p.dir }),
      await runCli(['--port', '1', '--', 'true'], { cwd: p.dir }),
    ];
    for (const run of runs) {
      expect(run.stdout.includes(ESC), run.stdout).toBe(false);
      expect(run.stderr.includes(ESC), run.stderr).toBe(false);
    }
    const events = await follow(agent, p.dir, [], 'ERROR', 'boom');
    expect(events.stdout.includes(ESC) || events.stderr.includes(ESC), events.stdout + events.stderr).toBe(false);
  });

  it('in a terminal: the live status line erases without escape sequences; the build keeps its own', async () => {
    const p = project();
    await agentFor(p, {
      hostile: TAINTED,
      reloadMs: 400,
      intercept: (cmd) => (cmd.words[1] === 'started' ? { kind: 'delay', ms: 300 } : undefined),
    });
    const script = `process.stdout.write('\\u001b[32mBUILD-GREEN\\u001b[0m\\n'); require('fs').writeFileSync(${JSON.stringify(path.join(p.classes, 'com', 'acme', 'Greeter.class'))}, 'v4')`;
    const run = await runInTerminal(cliCommand(['--', process.execPath, '-e', script]), { cwd: p.dir, env: { NO_COLOR: '1' } });
    expect(run.exitCode, run.output).toBe(0);
    const withoutBuild = run.output.replace('\u001b[32mBUILD-GREEN\u001b[0m', 'BUILD-GREEN');
    expect(run.output).toContain('\u001b[32mBUILD-GREEN\u001b[0m');
    expect(withoutBuild.includes(ESC), JSON.stringify(withoutBuild)).toBe(false);
    // The live line was there (and replaced in place).
    expect(run.output).toMatch(/\rreclazz-build: waiting for the BUILD started receipt · 0\.\d s/);
    expect(run.output).toContain('✔ proven live');
  });
});

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
