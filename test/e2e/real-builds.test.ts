/**
 * The main job on real Maven and Gradle builds: a compiled copy of a fixture (the app's starting
 * classes), the fake agent watching its class output directory, a source is edited, and the real
 * binary runs the real build tool. A missing mvn or gradle FAILS these tests (compiledFixture
 * throws): `bash .ci/install-build-tools.sh` installs them.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { CLASS_OUTPUT_DIR, editGreeting, fixCompileError, introduceCompileError, type AppFixture } from '../support/fixtures.js';

const TOOL_ARGS: Record<AppFixture, { tool: 'mvn' | 'gradle'; args: string[] }> = {
  'maven-app': { tool: 'mvn', args: ['-q', 'compile'] },
  'gradle-app': { tool: 'gradle', args: ['--offline', '-q', 'classes'] },
};

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

/** SHA-256 of every class file below `dir`, by binary class name. */
function hashes(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.class')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const name = path.relative(dir, file).slice(0, -'.class'.length).split(path.sep).join('.');
    out.set(name, createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
  }
  return out;
}

/** Each class file's stamp (inode and ctime) below `dir`, by binary class name: a moved one was written again. */
function stamps(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of hashes(dir).keys()) {
    const stat = fs.statSync(path.join(dir, ...name.split('.')) + '.class');
    out.set(name, `${stat.ino}:${stat.ctimeMs}`);
  }
  return out;
}

async function prepare(name: AppFixture): Promise<{ dir: string; classes: string; agent: FakeAgent }> {
  const dir = await compiledFixture(name);
  const classes = path.join(dir, CLASS_OUTPUT_DIR[name]);
  await appStartsLater();
  const agent = await startFakeAgent({
    portFile: path.join(dir, '.reclazz', 'agent.port'),
    watchDirs: [classes],
    captureDelayMs: 50,
    reloadMs: 30,
    heartbeatMs: 500,
  });
  agents.push(agent);
  return { dir, classes, agent };
}

/** What the agent received, as verbs (`BUILD started`); `RELOAD status`, read before every build and while VERIFY waits, left out. */
const commandWords = (agent: FakeAgent) =>
  agent.received
    .filter((r) => !r.line.startsWith('RELOAD status '))
    .map((r) => (r.line.startsWith('BUILD') ? r.line.split(' ').slice(0, 2).join(' ') : r.line.split(' ')[0]!));

// Each case runs the real tool up to four times (Gradle's JVM start alone is seconds): on a busy
// 2-core machine the default 60 s ran out (a Gradle case took over 60 s at load 8).
const REAL_BUILD_TIMEOUT_MS = 240_000;

describe.each(['maven-app', 'gradle-app'] as const)('%s', { timeout: REAL_BUILD_TIMEOUT_MS }, (name) => {
  const { tool, args } = TOOL_ARGS[name];

  it(`${tool}: an edited source is built under the hold and its changed classes are proven applied`, async () => {
    const { dir, classes, agent } = await prepare(name);
    const before = hashes(classes);
    const written = stamps(classes);
    await editGreeting(dir, `Hello from ${name}, edited`);
    const run = await runCli([tool, ...args], { cwd: dir });
    expect(run.stderr).toContain('proven live');
    expect(run.exitCode).toBe(0);

    const after = hashes(classes);
    const changed = [...after].filter(([cls, sha]) => before.has(cls) && before.get(cls) !== sha && !cls.endsWith('package-info'));
    expect(changed.map(([cls]) => cls)).toContain('com.acme.Greeter');
    // Written again with the same bytes (Maven's recompile writes the whole module anew): asked once, kept on not_observed.
    const now = stamps(classes);
    const rewritten = [...after].filter(
      ([cls, sha]) => before.get(cls) === sha && written.get(cls) !== now.get(cls) && !cls.endsWith('package-info'),
    );
    const words = commandWords(agent);
    expect(words.slice(0, 3)).toEqual(['DOCTOR', 'BUILD started', 'BUILD ok']);
    // Every VERIFY, then HEALTH (with a DOCTOR marking the end of its lines) for the agent's count when identical bytes were asked about.
    const verifies = words.slice(3).filter((w) => w === 'VERIFY');
    expect(words.slice(3)).toEqual([...verifies, ...(rewritten.length > 0 ? ['HEALTH', 'DOCTOR'] : [])]);
    const verified = new Set(agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ').slice(2).join(' ')));
    expect(verified).toEqual(new Set([...changed, ...rewritten].map(([cls, sha]) => `${cls} ${sha}`)));
    // javac wrote the new class file only after the started receipt had been sent.
    const acquired = agent.holdLog.find((h) => h.event === 'acquired')!;
    expect(fs.statSync(path.join(classes, 'com', 'acme', 'Greeter.class')).mtimeMs).toBeGreaterThanOrEqual(acquired.atMs - 5);
    expect(agent.hold().kind).toBe('none');
  });

  it(`${tool}: a compile error ends with the tool's exit status, no VERIFY, hold kept; the fixed rerun recovers it`, async () => {
    // The tool's own exit status for this error, from a separate copy (a failed Maven build
    // deletes class files, which must not happen outside the hold in the copy under test).
    const reference = await compiledFixture(name);
    await introduceCompileError(reference);
    const direct = await execa(tool, args, { cwd: reference, reject: false, stdio: 'ignore' });
    expect(direct.exitCode).not.toBe(0);

    const { dir, agent } = await prepare(name);
    await introduceCompileError(dir);

    const failed = await runCli(['--owner', 'dev-1', tool, ...args], { cwd: dir });
    expect(failed.exitCode).toBe(direct.exitCode);
    expect(commandWords(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'dev-1' });

    await fixCompileError(dir);
    await editGreeting(dir, 'Fixed');
    const fixed = await runCli(['--owner', 'dev-1', tool, ...args], { cwd: dir });
    expect(fixed.exitCode).toBe(0);
    // The ok receipt means "capture scheduled": the agent releases the hold once it has captured.
    await expect.poll(() => agent.hold().kind).toBe('none');
    expect(commandWords(agent).slice(3, 6)).toEqual(['DOCTOR', 'BUILD started', 'BUILD ok']);
    // The failed build deleted or rewrote class files while held; the agent still has the
    // pre-failure Greeter live, so the recovered build's Greeter is a change and is verified.
    const greeter = hashes(path.join(dir, CLASS_OUTPUT_DIR[name])).get('com.acme.Greeter');
    const verifies = agent.received.filter((r) => r.line.startsWith('VERIFY '));
    expect(verifies.map((r) => r.line.split(' ').slice(2).join(' '))).toContain(`com.acme.Greeter ${greeter}`);
    expect(fixed.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
  });
});
