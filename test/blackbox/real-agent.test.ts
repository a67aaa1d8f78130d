/**
 * The real binary against a fake agent that behaves as the agent's source shows (issue 23):
 * DOCTOR lists a truncated sample of registrations, so what the agent watches comes from its
 * JVM's command line, the sample's order, DIAGNOSE, or what it does after the capture; it wires
 * VERIFY before ownership; a pause keeps a build's classes pending. Its late file watcher: watcher-hold.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { Lines } from '../support/wait.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A Maven reactor folder: `app` and `lib` modules, each target/classes with `packages` package folders of one class. */
function reactor(names: { app: string; lib: string } = { app: 'app', lib: 'lib' }, packages = 10) {
  const dir = tempDir();
  const app = path.join(dir, names.app, 'target', 'classes');
  const lib = path.join(dir, names.lib, 'target', 'classes');
  for (let i = 0; i < packages; i++) writeClass(app, `com.acme.app.p${i}.Main`, `app-${i}`);
  writeClass(lib, 'com.acme.lib.Greeting', 'greeting-v1');
  writeClass(lib, 'com.acme.lib.GreetingTest', 'test-v1');
  return { dir, app, lib, portFile: path.join(dir, names.app, '.reclazz', 'agent.port') };
}

async function agentFor(options: FakeAgentOptions): Promise<FakeAgent> {
  await appStartsLater();
  const agent = await startFakeAgent({ captureDelayMs: 20, reloadMs: 20, heartbeatMs: 0, ...options });
  agents.push(agent);
  return agent;
}

/** `-- node -e <script>` writing each class file (binary name under a class output directory) with new bytes. */
function writes(files: Array<[root: string, className: string, bytes: string]>): string[] {
  const entries = files.map(([root, name, bytes]) => [path.join(root, ...name.split('.')) + '.class', bytes]);
  const script = `const fs = require('fs'); for (const [file, bytes] of ${JSON.stringify(entries)}) fs.writeFileSync(file, bytes);`;
  return ['--', process.execPath, '-e', script];
}

const sent = (agent: FakeAgent, verb: string) => agent.received.filter((r) => r.line.startsWith(`${verb} `));

/** Runs the CLI; once one of its stderr lines matches `when`, the agent takes its next step (`then`): on the CLI's word, not a timer. */
async function runUntil(args: string[], cwd: string, when: RegExp, then: () => void) {
  const cli = startCli(args, { cwd, timeoutMs: 90_000 });
  await new Lines(cli.stderr!).line(when);
  then();
  return await cli;
}

/** Runs the CLI; returns the run and how long it took, in ms. */
async function timed(args: string[], cwd: string) {
  const started = performance.now();
  const run = await runCli(args, { cwd, timeoutMs: 90_000 });
  return { ...run, elapsedMs: performance.now() - started };
}

describe('what the agent watches, with DOCTOR listing a truncated sample of registrations', () => {
  it("reads watchDirs from the JVM's command line: a sibling module's class is not watched at once, with the watchDirs= that adds it", async () => {
    const r = reactor();
    const agent = await agentFor({ portFile: r.portFile, watchDirs: [r.app] });
    const run = await timed(['--verify-timeout', '30000', ...writes([[r.lib, 'com.acme.lib.Greeting', 'greeting-v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.lib\.Greeting\s+the agent does not watch \S+lib\/target\/classes/);
    expect(run.stderr).toContain(`next: restart the app with the agent option watchDirs=${r.app};${r.lib} (directories separated by ';'`);
    expect(run.stderr).not.toContain('proven live: all');
    // Asked once, briefly: not polled to the 30 s deadline.
    expect(run.elapsedMs).toBeLessThan(15_000);
    expect(sent(agent, 'DIAGNOSE')).toEqual([]);
  });

  it("applies the agent's class-path rule without watchDirs: a jar or another folder on the class path is not watched", async () => {
    const r = reactor();
    await agentFor({ portFile: r.portFile, watchDirs: [r.app], agentArgs: '', classPath: [r.app, path.join(r.dir, 'lib', 'lib.jar')] });
    const run = await timed(writes([[r.lib, 'com.acme.lib.Greeting', 'greeting-v2']]), r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.lib\.Greeting\s+the agent does not watch/);
    expect(run.stderr).toContain(`watchDirs=${r.app};${r.lib}`);
  });

  it('a class its excludePatterns skip is named as never reloading, with the option that fixes it; the other class is proven', async () => {
    const r = reactor();
    await agentFor({ portFile: r.portFile, watchDirs: [r.app, r.lib], excludePatterns: ['*Test.class'] });
    const run = await timed(
      writes([
        [r.lib, 'com.acme.lib.Greeting', 'greeting-v2'],
        [r.lib, 'com.acme.lib.GreetingTest', 'test-v2'],
      ]),
      r.dir,
    );
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/applied\s+com\.acme\.lib\.Greeting\b/);
    expect(run.stderr).toMatch(
      /not-watched\s+com\.acme\.lib\.GreetingTest\s+the agent's excludePatterns \*Test\.class skips GreetingTest\.class/,
    );
    expect(run.stderr).toContain('next: restart the app without *Test.class in the agent option excludePatterns=');
    expect(run.elapsedMs).toBeLessThan(15_000);
  });

  it('without its command line, the sample order shows a folder that sorts before its last entry is not registered', async () => {
    // lib/... sorts before zapp/...: the sample lists zapp's folders only, so lib is not registered.
    const r = reactor({ app: 'zapp', lib: 'lib' });
    const agent = await agentFor({ portFile: r.portFile, watchDirs: [r.app], agentOn: 'attached' });
    const run = await timed(['--verify-timeout', '30000', ...writes([[r.lib, 'com.acme.lib.Greeting', 'greeting-v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.lib\.Greeting\s+the agent does not watch/);
    // The whole list is not known: the advice names the folder, not a watchDirs= value.
    expect(run.stderr).toContain(`next: add ${r.lib} to the agent option watchDirs=`);
    expect(run.elapsedMs).toBeLessThan(15_000);
    expect(sent(agent, 'DIAGNOSE')).toEqual([]);
  });

  it('what nothing else decides, DIAGNOSE does: no compiled file under a watched directory', async () => {
    // zlib/... sorts after app/...'s sample: unknown by the order, so the agent is asked.
    const r = reactor({ app: 'app', lib: 'zlib' });
    const agent = await agentFor({ portFile: r.portFile, watchDirs: [r.app], agentOn: 'attached' });
    const run = await timed(['--verify-timeout', '30000', ...writes([[r.lib, 'com.acme.lib.Greeting', 'greeting-v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(sent(agent, 'DIAGNOSE').map((l) => l.line)).toEqual(['DIAGNOSE com.acme.lib.Greeting']);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.lib\.Greeting\s+the agent does not watch/);
    expect(run.elapsedMs).toBeLessThan(15_000);
  });

  it("and what DIAGNOSE does not answer, the agent's behaviour: no attempt once its capture of the build is over", async () => {
    const r = reactor({ app: 'app', lib: 'zlib' });
    await agentFor({
      portFile: r.portFile,
      watchDirs: [r.app],
      agentOn: 'attached',
      intercept: (cmd) => (cmd.verb === 'DIAGNOSE' ? { kind: 'ignore' } : undefined),
    });
    const run = await timed(['--verify-timeout', '60000', ...writes([[r.lib, 'com.acme.lib.Greeting', 'greeting-v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(
      /not-watched\s+com\.acme\.lib\.Greeting\s+no reload attempt with these bytes once the agent's capture of this build was over/,
    );
    expect(run.stderr).toContain('where the agent attempted nothing once its capture of this build was over');
    // Ended a few seconds after the capture, not at the 60 s deadline.
    expect(run.elapsedMs).toBeLessThan(20_000);
  });

  it("takes an IDE's class output directory from the command line and verifies it", async () => {
    const dir = tempDir();
    const out = path.join(dir, 'out', 'production', 'shop');
    for (let i = 0; i < 10; i++) writeClass(out, `com.acme.p${i}.Main`, `v1-${i}`);
    const agent = await agentFor({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [out] });
    const run = await timed(['--verbose', ...writes([[out, 'com.acme.p3.Main', 'v2-3']])], dir);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(`class output directories taken from what the agent watches: ${out}`);
    expect(sent(agent, 'VERIFY').map((l) => l.line.split(' ')[2])).toContain('com.acme.p3.Main');
  });

  it("refuses another app's agent behind the port file by what its command line says it watches", async () => {
    const r = reactor();
    const other = tempDir();
    const otherClasses = path.join(other, 'target', 'classes');
    for (let i = 0; i < 10; i++) writeClass(otherClasses, `org.other.p${i}.Billing`, `b${i}`);
    const agent = await agentFor({ portFile: path.join(other, '.reclazz', 'agent.port'), watchDirs: [otherClasses] });
    fs.mkdirSync(path.dirname(r.portFile), { recursive: true });
    fs.writeFileSync(r.portFile, String(agent.port));
    const run = await timed(writes([[r.app, 'com.acme.app.p0.Main', 'v2']]), r.dir);
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toContain(
      `is another app's: pid ${agent.jvm!.pid}, working directory ${fs.realpathSync(other)}, watching ${otherClasses}`,
    );
    expect(sent(agent, 'BUILD')).toEqual([]);
  });
});

describe('start-up in the agent order', () => {
  it('VERIFY wired before ownership is waited out within --wait, not refused as unsupported', async () => {
    const r = reactor();
    const agent = await agentFor({ portFile: r.portFile, watchDirs: [r.app], startingMs: Infinity, verifyWiredMs: 0 });
    const waiting = new RegExp(`waiting for the agent on port ${agent.port} to finish starting`);
    const run = await runUntil(['--wait', '30000', ...writes([[r.app, 'com.acme.app.p0.Main', 'v2']])], r.dir, waiting, () =>
      agent.finishStarting(),
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/✔ proven live/);
    const short = await timed(['--wait', '300', ...writes([[r.app, 'com.acme.app.p1.Main', 'v2']])], r.dir);
    expect(short.exitCode).toBe(0); // wired by now
  });

  it('refuses once --wait is over, saying VERIFY answers but the build hold is not wired yet', async () => {
    const r = reactor();
    await agentFor({ portFile: r.portFile, watchDirs: [r.app], startingMs: Infinity, verifyWiredMs: 0 });
    const run = await timed(['--wait', '800', ...writes([[r.app, 'com.acme.app.p0.Main', 'v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(
      /is still starting after waiting \d+ ms: DOCTOR shows its session and VERIFY, but its build hold is not wired yet/,
    );
    expect(run.stderr).not.toContain('does not support owned build holds');
  });
});

describe('paused reloads', () => {
  it('says so before the build, and reports the classes pending until resume within seconds (75, next: resume)', async () => {
    const r = reactor();
    const agent = await agentFor({ portFile: r.portFile, watchDirs: [r.app] });
    expect((await runCli(['pause'], { cwd: r.dir })).exitCode).toBe(0);
    const run = await timed(['--verify-timeout', '30000', ...writes([[r.app, 'com.acme.app.p0.Main', 'v2']])], r.dir);
    expect(run.exitCode, run.stderr).toBe(75);
    const paused = run.stderr.indexOf('warning: automatic reload is PAUSED agent-wide');
    expect(paused).toBeGreaterThanOrEqual(0);
    expect(paused).toBeLessThan(run.stderr.indexOf('build ok'));
    expect(run.stderr).toMatch(/paused\s+com\.acme\.app\.p0\.Main\s+automatic reload is paused/);
    expect(run.stderr).toContain('automatic reload is PAUSED agent-wide');
    expect(run.stderr).toContain('next: reclazz-build resume');
    expect(run.elapsedMs).toBeLessThan(15_000);
    expect(agent.hold().kind).toBe('none');

    const status = await runCli(['status'], { cwd: r.dir });
    expect(status.stdout).toMatch(/paused\s+yes/);
    expect(status.stdout).toMatch(/pending classes\s+1/);
    const doctor = await runCli(['doctor'], { cwd: r.dir });
    expect(doctor.stdout).toMatch(/^reloads\s+PAUSED \(1 class file\(s\) pending until reclazz-build resume\)$/m);
    expect(doctor.stdout).toContain('nothing reloads until reclazz-build resume');

    expect((await runCli(['resume'], { cwd: r.dir })).exitCode).toBe(0);
    const verify = await runCli(['verify', path.join(r.app, 'com', 'acme', 'app', 'p0', 'Main.class')], { cwd: r.dir });
    expect(verify.exitCode, verify.stderr).toBe(0);
  });
});
