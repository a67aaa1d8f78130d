/**
 * How the CLI looks in a terminal and in a pipeline: the live status line only in a
 * pseudo-terminal outside CI, colour decided per stream (NO_COLOR, FORCE_COLOR, TERM=dumb),
 * the agent's own events during a run (hidden by --quiet), and a condensed report for large
 * batches.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { cliCommand, runCli, runInTerminal, tempDir, writeClass } from '../support/cli.js';

const agentFor = useFakeAgents({ heartbeatMs: 1000 });

/** The live line's text: what it waits for and for how long (never ends a line: it is replaced). */
const LIVE_TEXT = / · \d+\.\d s/;
const ANSI = /\x1b\[[0-9;]*m/;

function project(classes = 2): { dir: string; classes: string } {
  const dir = tempDir();
  const out = path.join(dir, 'target', 'classes');
  for (let i = 0; i < classes; i += 1) writeClass(out, `com.acme.C${i}`, `v1-${i}`);
  return { dir, classes: out };
}

/** A build that prints a marker line and rewrites the first `n` classes. */
function build(p: { classes: string }, n: number): string[] {
  const script = `console.log('BUILD-OUTPUT'); const fs = require('fs'), path = require('path');
    for (let i = 0; i < ${n}; i++) fs.writeFileSync(path.join(${JSON.stringify(p.classes)}, 'com', 'acme', 'C' + i + '.class'), 'v2-' + i);`;
  return ['--', process.execPath, '-e', script];
}

describe('the live status line', () => {
  it('in a pseudo-terminal: names the receipt awaited and counts VERIFY, replaced in place, hidden while the build runs (NO_COLOR: no escapes)', async () => {
    const p = project();
    await agentFor(p, {
      reloadMs: 600,
      intercept: (cmd) => (cmd.words[1] === 'started' ? { kind: 'delay', ms: 400 } : undefined),
    });
    const run = await runInTerminal(cliCommand(build(p, 2)), { cwd: p.dir, env: { NO_COLOR: '1' } });
    expect(run.exitCode).toBe(0);
    const out = run.output;
    // NO_COLOR: drawn after a carriage return and erased with spaces, never with ESC [ K.
    expect(out).not.toContain('\x1b');
    expect(out).toMatch(/\rreclazz-build: waiting for the BUILD started receipt · 0\.[2-9] s/);
    expect(out).toContain(`\rreclazz-build: VERIFY applied 0/2 · `);
    expect(out).toMatch(/\rreclazz-build: VERIFY applied 2\/2 · \d+\.\d s/);
    // Replaced, not scrolled: no status text ends a line.
    expect(out).not.toMatch(/ · \d+\.\d s\r?\n/);
    // Nothing live between the start of the build and its end.
    const during = out.slice(out.indexOf('hold acquired; running'), out.indexOf('reclazz-build: build ok'));
    expect(during).toContain('BUILD-OUTPUT');
    expect(during).not.toMatch(LIVE_TEXT);
    // The verdict is a plain last line.
    expect(out.trimEnd().split(/\r?\n/).at(-1)).toMatch(/^reclazz-build: ✔ proven live: all 2 changed class\(es\) proven live/);
  });

  it('not in a pipe, not in CI, not on TERM=dumb', async () => {
    const p = project();
    await agentFor(p, { reloadMs: 300 });
    const piped = await runCli(build(p, 1), { cwd: p.dir, env: { CI: undefined } });
    expect(piped.exitCode).toBe(0);
    expect(piped.stderr).not.toContain('\r');
    expect(piped.stderr).not.toMatch(ANSI);

    const ci = await runInTerminal(cliCommand(build(p, 2)), { cwd: p.dir, env: { CI: 'true', NO_COLOR: '1' } });
    expect(ci.exitCode).toBe(0);
    expect(ci.output).not.toMatch(LIVE_TEXT);

    const dumb = await runInTerminal(cliCommand(build(p, 1)), { cwd: p.dir, env: { TERM: 'dumb' } });
    expect(dumb.exitCode).toBe(0);
    expect(dumb.output).not.toMatch(LIVE_TEXT);
    expect(dumb.output).not.toMatch(ANSI);
  });

  it('for a subcommand while its receipt is awaited', async () => {
    const p = project();
    await agentFor(p, { intercept: (cmd) => (cmd.verb === 'RELOAD' ? { kind: 'delay', ms: 400 } : undefined) });
    const run = await runInTerminal(cliCommand(['status']), { cwd: p.dir, env: { NO_COLOR: '1' } });
    expect(run.exitCode).toBe(0);
    expect(run.output).toMatch(/\rreclazz-build: waiting for the RELOAD_STATE receipt of RELOAD status · 0\.[2-9] s/);
    expect(run.output).toMatch(/automatic reload is running/);
  });

  it('with colour on: erased and redrawn with ESC [ K', async () => {
    const p = project();
    await agentFor(p, { intercept: (cmd) => (cmd.verb === 'RELOAD' ? { kind: 'delay', ms: 300 } : undefined) });
    const run = await runInTerminal(cliCommand(['status']), { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(run.output).toMatch(/\r\x1b\[K\S*reclazz-build:\S* waiting for the RELOAD_STATE receipt of RELOAD status · 0\.[1-9] s/);
  });
});

describe('colour, per stream', () => {
  it('in a terminal: the stream that is a terminal is coloured, a piped stdout is not', async () => {
    const p = project();
    await agentFor(p);
    const run = await runInTerminal(`${cliCommand(['doctor'])} | cat; ${cliCommand(['status', '--port', '1'])}`, { cwd: p.dir });
    // As a terminal shows it: a carriage return starts the line again (the live line on stderr
    // is erased before stdout's text); colour codes are the ones that end in 'm'.
    const lines = run.output.split(/\r?\n/).map((l) =>
      l
        .split('\r')
        .at(-1)!
        .replace(/\x1b\[K/g, ''),
    );
    const table = lines.filter((l) => /^(agent|session|supports|watcher) /.test(l));
    expect(table).toHaveLength(4);
    for (const line of table) expect(line).not.toMatch(ANSI);
    const refused = lines.find((l) => l.includes('nothing is listening on port 1'));
    expect(refused).toMatch(/\x1b\[31m.*✘/);
  });

  it('FORCE_COLOR colours a pipe; NO_COLOR wins over it; TERM=dumb turns it off', async () => {
    const p = project();
    await agentFor(p);
    const forced = await runCli(['doctor'], { cwd: p.dir, env: { NO_COLOR: undefined, FORCE_COLOR: '1' } });
    expect(forced.stdout).toMatch(ANSI);
    const both = await runCli(['doctor'], { cwd: p.dir, env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    expect(both.stdout).not.toMatch(ANSI);
    const dumb = await runInTerminal(cliCommand(['doctor']), { cwd: p.dir, env: { TERM: 'dumb' } });
    expect(dumb.output).toMatch(/^agent\s+1\.4\.0-fake/m);
    expect(dumb.output).not.toMatch(ANSI);
  });
});

describe("the agent's own events and large batches", () => {
  it("shows the agent's RELOAD events during a run, marked as the agent's; --quiet hides them", async () => {
    const p = project();
    await agentFor(p, { reloadMs: 100 });
    const run = await runCli(build(p, 1), { cwd: p.dir });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/^reclazz-build: agent RELOAD Reloaded com\.acme\.C0 \(\d+ms\)$/m);
    const quiet = await runCli(['--quiet', ...build(p, 2)], { cwd: p.dir });
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).not.toContain('agent RELOAD');
    // Right after the first run's ok, the capture it scheduled is waited for: a short wait, not shown.
    expect(quiet.stderr).not.toContain('waiting for');
    expect(quiet.stderr).toContain('✔ proven live');
  });

  it('condenses a large batch: counts per verdict, and only the classes not applied, with the detail', async () => {
    const p = project(40);
    await agentFor(p, { verifyStatus: (name) => (['com.acme.C3', 'com.acme.C17'].includes(name) ? 'failed' : 'applied') });
    const run = await runCli(build(p, 40), { cwd: p.dir });
    expect(run.exitCode).toBe(75);
    expect(run.stderr).toContain('VERIFY: 38 applied, 2 failed');
    const listed = run.stderr.split('\n').filter((l) => /^ {2}\S/.test(l));
    expect(listed).toHaveLength(2);
    expect(listed[0]).toMatch(/failed\s+com\.acme\.C17\s+the reload attempt reported failure/);
    expect(listed[1]).toMatch(/failed\s+com\.acme\.C3\s+the reload attempt reported failure/);
    expect(run.stderr).toContain('only 38 of 40 changed class(es) are proven live');
  });
});
