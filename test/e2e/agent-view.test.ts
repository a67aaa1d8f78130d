/**
 * What the agent watches, seen from here, through the real binary on a compiled Maven project:
 * class output directories taken from the agent (a javac build), an app in a container
 * (--path-map), another app's agent behind a stale port file, and what doctor says of each.
 * Where Maven adds nothing to what is tested, the build is `-- sh -c` copying a prepared
 * class file in; the --path-map run builds with the real Maven.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { editGreeting } from '../support/fixtures.js';

const REAL_BUILD_TIMEOUT_MS = 240_000;
const CLI_TIMEOUT_MS = 200_000;
const MVN = ['mvn', '-q', 'compile'];

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

async function agentFor(options: FakeAgentOptions): Promise<FakeAgent> {
  await appStartsLater();
  const agent = await startFakeAgent({ captureDelayMs: 50, reloadMs: 30, heartbeatMs: 1000, ...options });
  agents.push(agent);
  return agent;
}

/** `<binary name> <sha256>` of every VERIFY the agent received, sorted, once each. */
function verified(agent: FakeAgent): string[] {
  const all = agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ').slice(2).join(' '));
  return [...new Set(all)].sort();
}

function classEntry(root: string, name: string): string {
  const file = path.join(root, ...name.split('.')) + '.class';
  return `${name} ${createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`;
}

const sent = (agent: FakeAgent, verb: string) => agent.received.some((r) => r.line.startsWith(`${verb} `));

/** A compiled copy of the maven-app fixture: the classes the app starts with. */
async function mavenApp(): Promise<{ dir: string; classes: string }> {
  const dir = await compiledFixture('maven-app');
  return { dir, classes: path.join(dir, 'target', 'classes') };
}

/** The greeting Greeter.class returns in the fixture. */
const GREETING = 'Hello, world';

/**
 * `-- sh -c` that copies in a Greeter.class returning `greeting` (as many bytes as the
 * fixture's, so the class file stays valid): a build whose only change is Greeter, javac's
 * bytes but for the literal, without a compiler's start-up.
 */
function greeterBuild(classes: string, greeting: string): string[] {
  const greeter = path.join(classes, 'com', 'acme', 'Greeter.class');
  const bytes = fs.readFileSync(greeter);
  const at = bytes.indexOf(GREETING);
  if (at < 0 || Buffer.byteLength(greeting) !== GREETING.length) throw new Error(`cannot make a Greeter.class returning "${greeting}"`);
  const prepared = path.join(tempDir('reclazz-test-prepared-'), 'Greeter.class');
  fs.writeFileSync(prepared, Buffer.concat([bytes.subarray(0, at), Buffer.from(greeting), bytes.subarray(at + GREETING.length)]));
  return ['--', 'sh', '-c', `cp '${prepared}' '${greeter}'`];
}

describe('class output directories from the agent', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it('a watched folder of a layout reclazz-build does not know is checked; watched folders not here are named with --verbose', async () => {
    const dir = tempDir('reclazz-test-layout-');
    const source = path.join(dir, 'src', 'com', 'acme', 'Greeter.java');
    fs.mkdirSync(path.dirname(source), { recursive: true });
    const write = (text: string) =>
      fs.writeFileSync(source, `package com.acme;\npublic class Greeter { public String greet() { return "${text}"; } }\n`);
    const out = path.join(dir, 'out', 'production', 'shop');
    const javac = ['javac', '-d', out, source];
    write('Hello');
    await execa(javac[0]!, javac.slice(1));
    // A second watched folder that exists only where the agent runs (another mount): not here.
    const elsewhere = tempDir('reclazz-test-elsewhere-');
    fs.mkdirSync(path.join(elsewhere, 'classes'));
    // Its JVM's options are not readable here (attached at run time), so DOCTOR's list decides.
    const agent = await agentFor({
      portFile: path.join(dir, '.reclazz', 'agent.port'),
      watchDirs: [out, path.join(elsewhere, 'classes')],
      pathMap: { '/srv/other': elsewhere },
      agentOn: 'attached',
    });
    write('Hello, edited');
    const run = await runCli(['--verbose', '--', ...javac], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toContain(`class output directories taken from what the agent watches: ${out}`);
    expect(run.stderr).toContain('the agent watches 1 directory not here: /srv/other/classes');
    expect(run.exitCode).toBe(0);
    expect(verified(agent)).toEqual([classEntry(out, 'com.acme.Greeter')]);
  });
});

describe("the agent's real DOCTOR list: a truncated sample of registrations", { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  /** The maven-app fixture with 8 resource folders: they sort before target/classes, which DOCTOR then does not list. */
  async function withResources(): Promise<{ dir: string; classes: string }> {
    const app = await mavenApp();
    for (let i = 0; i < 8; i++) fs.mkdirSync(path.join(app.dir, 'src', 'main', 'resources', `r${i}`), { recursive: true });
    return app;
  }

  it("by the agent's class-path rule read from its command line, and by DIAGNOSE without it: the build is proven either way", async () => {
    const { dir, classes } = await withResources();
    const portFile = path.join(dir, '.reclazz', 'agent.port');
    // A bare -javaagent: the agent watches the class path's target/classes.
    const agent = await agentFor({ portFile, watchDirs: [classes], agentArgs: '', classPath: [classes, path.join(dir, 'lib', 'dep.jar')] });
    const doctor = await runCli(['doctor', '--json'], { cwd: dir });
    const result = JSON.parse(doctor.stdout) as {
      doctor: { watchSampleTruncated: boolean; watchedDirectories: string[] };
      watchedFrom: string;
    };
    expect(result.doctor.watchSampleTruncated).toBe(true);
    expect(result.doctor.watchedDirectories).not.toContain(classes);
    expect(result.watchedFrom).toBe('options');
    await editGreeting(dir, 'Hello from the class path');
    const run = await runCli(MVN, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(verified(agent)).toContain(classEntry(classes, 'com.acme.Greeter'));
    expect(sent(agent, 'DIAGNOSE')).toBe(false);
    await agent.stop();

    const attached = await agentFor({ portFile, watchDirs: [classes], agentOn: 'attached' });
    await editGreeting(dir, 'Hello, attached');
    const second = await runCli(MVN, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(sent(attached, 'DIAGNOSE')).toBe(true);
    expect(verified(attached)).toContain(classEntry(classes, 'com.acme.Greeter'));
  });
});

describe('an app in a container: the agent reports /app paths', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  // The app's process is visible here (its stand-in runs in the project folder): with the map, DOCTOR's
  // working directory /app is that folder, so the app's start time is known.
  it("without --path-map it is refused as not this project's; with the config's pathMap or --path-map the build is verified", async () => {
    const { dir, classes } = await mavenApp();
    const agent = await agentFor({
      portFile: path.join(dir, '.reclazz', 'agent.port'),
      watchDirs: [classes],
      pathMap: { '/app': dir },
    });
    const containerBuild = greeterBuild(classes, 'Hello, Earth');

    const unmapped = await runCli(containerBuild, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(unmapped.exitCode).toBe(69);
    expect(unmapped.stderr).toContain(`is another app's: pid ${agent.jvm!.pid}, working directory /app, watching /app/target/classes`);
    expect(unmapped.stderr).toContain('map its paths with --path-map <agent path>=<local path>');
    expect(sent(agent, 'BUILD')).toBe(false);

    fs.writeFileSync(path.join(dir, 'reclazz.config.json'), JSON.stringify({ pathMap: { '/app': '.' } }));
    const configured = await runCli(containerBuild, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(configured.exitCode).toBe(0);
    expect(verified(agent)).toContain(classEntry(classes, 'com.acme.Greeter'));

    fs.rmSync(path.join(dir, 'reclazz.config.json'));
    await editGreeting(dir, 'Hello again from a container');
    // The real Maven here: the class output directory it writes is the one the map resolves.
    const flagged = await runCli(['--path-map', `/app=${dir}`, ...MVN], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(flagged.exitCode).toBe(0);
    expect(verified(agent)).toContain(classEntry(classes, 'com.acme.Greeter'));

    const doctor = await runCli(['doctor', '--path-map', `/app=${dir}`], { cwd: dir });
    expect(doctor.exitCode).toBe(0);
    expect(doctor.stdout).toContain(`/app/target/classes (here ${classes})  this project's`);
    expect(doctor.stdout).toMatch(new RegExp(`watched\\s+${classes}\\n`));
  });

  it('a --path-map without an absolute agent path is a usage error naming it', async () => {
    const run = await runCli(['--path-map', 'app=.', ...MVN], { cwd: tempDir() });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--path-map "app=.": expected <agent path>=<local path> with an absolute agent path');
  });
});

describe("another app's agent behind this project's port file", { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  /** The project, and an agent of another app whose port the project's (stale) port file names. */
  async function staleProject(options: FakeAgentOptions = {}) {
    const { dir, classes } = await mavenApp();
    const other = tempDir('reclazz-test-other-app-');
    writeClass(path.join(other, 'target', 'classes'), 'org.other.Billing', 'billing');
    const agent = await agentFor({
      portFile: path.join(other, '.reclazz', 'agent.port'),
      watchDirs: [path.join(other, 'target', 'classes')],
      ...options,
    });
    const portFile = path.join(dir, '.reclazz', 'agent.port');
    fs.mkdirSync(path.dirname(portFile), { recursive: true });
    fs.writeFileSync(portFile, String(agent.port));
    // A second port file below: a refusal names it as the other choice.
    const admin = path.join(dir, 'admin', '.reclazz', 'agent.port');
    fs.mkdirSync(path.dirname(admin), { recursive: true });
    fs.writeFileSync(admin, '1');
    return { dir, classes, other, agent, portFile, admin };
  }

  it('with a complete sample: refused (69) naming that app, every port file found and the next step; the build never runs', async () => {
    const { dir, other, agent, portFile, admin } = await staleProject();
    const before = fs.readdirSync(path.join(dir, 'target', 'classes', 'com', 'acme'));
    await editGreeting(dir, 'Hello, stale');
    const run = await runCli(MVN, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain(
      `is another app's: pid ${agent.jvm!.pid}, working directory ${other}, watching ${path.join(other, 'target', 'classes')}`,
    );
    expect(run.stderr).toContain(`the port file ${portFile} is stale`);
    expect(run.stderr).toContain(`other port files here: ${admin} (pick one with --port-file <file>)`);
    expect(sent(agent, 'BUILD')).toBe(false);
    expect(fs.readdirSync(path.join(dir, 'target', 'classes', 'com', 'acme'))).toEqual(before);

    const doctor = await runCli(['doctor'], { cwd: dir });
    expect(doctor.stdout).toContain(`${path.join(other, 'target', 'classes')}  not this project's`);
    expect(doctor.stdout).toContain(
      `this agent runs in ${other} and watches none of this project's directories: it is another app's agent`,
    );
  });

  it('with a truncated sample and no command line to read: a warning, and the build runs', async () => {
    const { dir, classes, other, agent } = await staleProject({ forceWatchSampleTruncated: true, agentOn: 'attached' });
    const run = await runCli(['--no-verify', ...greeterBuild(classes, 'Hello, stale')], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toContain(
      `warning: the agent runs in ${other}, outside this project, and none of the watched directories it lists is this project's`,
    );
    expect(run.exitCode).toBe(0);
    expect(sent(agent, 'BUILD')).toBe(true);
  });

  it('nothing listening on the port: the stale-port refusal names the other port files too', async () => {
    const { dir, portFile, admin, agent } = await staleProject();
    await agent.stop();
    fs.mkdirSync(path.dirname(portFile), { recursive: true });
    fs.writeFileSync(portFile, String(agent.port));
    const run = await runCli(MVN, { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain(`nothing is listening on port ${agent.port} from ${portFile}`);
    expect(run.stderr).toContain(`other port files here: ${admin}`);
  });
});

describe("doctor: the agent's view of this project", { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it("says per class output directory whether the agent watches it, and for its watched directories which are this project's", async () => {
    const { dir, classes } = await mavenApp();
    const outside = tempDir('reclazz-test-outside-');
    writeClass(path.join(outside, 'classes'), 'x.Y', 'y');
    await agentFor({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [classes, path.join(outside, 'classes')] });
    const extra = path.join(dir, 'build', 'classes', 'java', 'main');
    writeClass(extra, 'com.acme.Extra', 'e');
    const run = await runCli(['doctor'], { cwd: dir });
    // A class output directory here that the agent does not watch is a pre-flight finding.
    expect(run.exitCode).toBe(75);
    expect(run.stdout).toContain('1 of 3 class output directories here NOT watched by the agent: changes there will not reload');
    expect(run.stdout).toContain(`${classes}  this project's`);
    expect(run.stdout).toContain(`${path.join(outside, 'classes')}  not this project's`);
    expect(run.stdout).toMatch(new RegExp(`  watched\\s+${classes}\\n`));
    expect(run.stdout).toMatch(new RegExp(`  NOT watched\\s+${extra}\\n`));
  });
});
