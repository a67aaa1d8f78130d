/**
 * Several apps in one checkout, through the real binary: two services, each with its agent
 * (`svc-a/.reclazz`, `svc-b/.reclazz`), and a module both use. One run holds both agents (in the
 * order of their port files), builds once, and each agent verifies the changed classes of the
 * directories it watches; a busy second agent gives back the first hold; the run lock and the
 * agents' state live in the checkout root's `.reclazz/`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Hex, type FakeAgent } from '../../src/fake-agent/index.js';
import { jsonLineSchema } from '../../src/report/schema.js';
import { LineClient } from '../fake-agent/line-client.js';
import { useFakeAgents } from '../support/agents.js';
import { runCli, startCli, tempDir, writeClass } from '../support/cli.js';
import { release } from '../support/project.js';
import { waitFor } from '../support/wait.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

/** The checkout: `svc-a`, `svc-b` and `shared`, each with `target/classes` holding one class. */
interface Checkout {
  root: string;
  classes: { a: string; b: string; shared: string };
  portFile: { a: string; b: string };
  /** Written by the build command when it runs. */
  marker: string;
}

const NAMES = { a: 'com.acme.a.OrderService', b: 'com.acme.b.BillingService', shared: 'com.acme.shared.Money' } as const;

function checkout(): Checkout {
  const root = tempDir();
  const classes = {
    a: path.join(root, 'svc-a', 'target', 'classes'),
    b: path.join(root, 'svc-b', 'target', 'classes'),
    shared: path.join(root, 'shared', 'target', 'classes'),
  };
  for (const key of ['a', 'b', 'shared'] as const) writeClass(classes[key], NAMES[key], `${key}-v1`);
  return {
    root,
    classes,
    portFile: { a: path.join(root, 'svc-a', '.reclazz', 'agent.port'), b: path.join(root, 'svc-b', '.reclazz', 'agent.port') },
    marker: path.join(root, 'build-ran'),
  };
}

/** Both agents: each watches its service and the shared module. */
async function agents(c: Checkout): Promise<{ a: FakeAgent; b: FakeAgent }> {
  const a = await startAgent({ dir: path.join(c.root, 'svc-a'), classes: c.classes.a }, { watchDirs: [c.classes.a, c.classes.shared] });
  const b = await startAgent({ dir: path.join(c.root, 'svc-b'), classes: c.classes.b }, { watchDirs: [c.classes.b, c.classes.shared] });
  return { a, b };
}

/**
 * `-- node -e`: writes the marker, then (once the file `until` exists, when given) new bytes for
 * the classes named (key -> bytes), then exits.
 */
function build(
  c: Checkout,
  writes: Partial<Record<'a' | 'b' | 'shared', string>>,
  options: { exit?: number; until?: string } = {},
): string[] {
  const files = Object.entries(writes).map(([key, bytes]) => [
    path.join(c.classes[key as 'a'], ...NAMES[key as 'a'].split('.')) + '.class',
    bytes,
  ]);
  const script = `const fs=require('fs');fs.writeFileSync(${JSON.stringify(c.marker)},String(Date.now()));
    const end=()=>{for(const [f,b] of ${JSON.stringify(files)})fs.writeFileSync(f,b);process.exit(${options.exit ?? 0})};
    const poll=()=>(${JSON.stringify(options.until ?? '')}===''||fs.existsSync(${JSON.stringify(options.until ?? '')})?end():fs.existsSync(${JSON.stringify(c.marker)})?setTimeout(poll,20):process.exit(1));poll();`;
  return ['--', process.execPath, '-e', script];
}

/** The VERIFY lines `agent` got for class `name` with the bytes `bytes`. */
function verified(agent: FakeAgent, name: string, bytes: string): number {
  return agent.received.filter((r) => r.line.startsWith('VERIFY ') && r.line.endsWith(` ${name} ${sha256Hex(Buffer.from(bytes))}`)).length;
}

function sent(agent: FakeAgent, prefix: string): string[] {
  return agent.received.map((r) => r.line).filter((line) => line.startsWith(prefix));
}

/** Holds `agent` as another owner would (the IDE's build), on a connection of its own. */
async function holdAsIde(agent: FakeAgent): Promise<LineClient> {
  const ide = await LineClient.ready(agent.port);
  expect(await ide.ask('BUILD started request=ide-1 owner=the-ide', 'BUILD_ACK', 'ide-1')).toContain('owner=the-ide');
  return ide;
}

describe('two services with an agent each, and a shared module', () => {
  it('one run holds both, builds once, and each agent proves the classes of the folders it watches', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    const run = await runCli(['--json', ...build(c, { a: 'a-v2', b: 'b-v2', shared: 'shared-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(0);
    // The shared class with both agents; each service's class with its own agent only.
    expect([verified(a, NAMES.shared, 'shared-v2'), verified(b, NAMES.shared, 'shared-v2')].every((n) => n > 0)).toBe(true);
    expect(verified(a, NAMES.a, 'a-v2')).toBeGreaterThan(0);
    expect(verified(b, NAMES.b, 'b-v2')).toBeGreaterThan(0);
    expect(sent(a, 'VERIFY ').some((l) => l.includes(NAMES.b))).toBe(false);
    expect(sent(b, 'VERIFY ').some((l) => l.includes(NAMES.a))).toBe(false);
    // Both held, one build, both released.
    for (const agent of [a, b]) {
      expect(sent(agent, 'BUILD ').map((l) => l.split(' ')[1])).toEqual(['started', 'ok']);
      expect(agent.hold().kind).toBe('none');
    }
    expect(run.stderr.match(/hold acquired; running/g)).toHaveLength(1);
    expect(run.stderr).toContain('svc-a: ');
    expect(run.stderr).toContain(`agent ${c.portFile.a}:`);
    expect(run.stderr).toContain(`agent ${c.portFile.b}:`);
    expect(run.stderr).toMatch(/✔ proven live: every one of the 2 agents proved its classes live/);

    // --json: every line valid; the result per agent; class lines name their agent.
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const line of lines) expect(jsonLineSchema.safeParse(line).success, JSON.stringify(line)).toBe(true);
    const result = lines.at(-1);
    expect(result).toMatchObject({ type: 'result', reason: 'ok', exitCode: 0, provenLive: true });
    expect(result.agents.map((x: { agentSource: string }) => x.agentSource)).toEqual([c.portFile.a, c.portFile.b]);
    const classesOf = (source: string) =>
      lines
        .filter((l) => l.type === 'class' && l.agentSource === source)
        .map((l) => `${l.className} ${l.status}`)
        .sort();
    expect(classesOf(c.portFile.a)).toEqual([`${NAMES.a} applied`, `${NAMES.shared} applied`]);
    expect(classesOf(c.portFile.b)).toEqual([`${NAMES.b} applied`, `${NAMES.shared} applied`]);
    expect(lines.filter((l) => l.type === 'hold').map((l) => l.agentSource)).toEqual([c.portFile.a, c.portFile.b]);

    // State: the lock and both agents' state under the checkout root; the services keep only the agent's port file.
    expect(fs.readdirSync(path.join(c.root, 'svc-a', '.reclazz'))).toEqual(['agent.port']);
    expect(fs.readdirSync(path.join(c.root, 'svc-b', '.reclazz'))).toEqual(['agent.port']);
    const agentsDir = path.join(c.root, '.reclazz', 'agents');
    const folders = fs.readdirSync(agentsDir).sort();
    expect(folders).toHaveLength(2);
    expect(folders[0]).toMatch(/^svc-a-[0-9a-f]{12}$/);
    expect(folders[1]).toMatch(/^svc-b-[0-9a-f]{12}$/);
    for (const folder of folders) expect(fs.readdirSync(path.join(agentsDir, folder)).sort()).toEqual(['classes.idx', 'owner.json']);
    expect(fs.existsSync(path.join(c.root, '.reclazz', 'build.lock'))).toBe(false);
  });

  it('exit 0 only when every agent proved its classes: one that cannot prove its own makes the run 75', async () => {
    const c = checkout();
    await startAgent(
      { dir: path.join(c.root, 'svc-a'), classes: c.classes.a },
      { watchDirs: [c.classes.a, c.classes.shared], verifyStatus: (name) => (name === NAMES.a ? 'failed' : undefined) },
    );
    const b = await startAgent({ dir: path.join(c.root, 'svc-b'), classes: c.classes.b }, { watchDirs: [c.classes.b, c.classes.shared] });
    const run = await runCli(['--json', ...build(c, { a: 'a-v2', b: 'b-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(75);
    expect(verified(b, NAMES.b, 'b-v2')).toBeGreaterThan(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    expect(result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, provenLive: false });
    expect(result.agents.map((x: { exitCode: number; provenLive: boolean }) => [x.exitCode, x.provenLive])).toEqual([
      [75, false],
      [0, true],
    ]);
    expect(run.stderr).toContain(`✘ not proven live: 1 of 2 agents proved their classes live; the agent of ${c.portFile.a}:`);
    expect(run.stderr).toMatch(/failed\s+com\.acme\.a\.OrderService/);
  });

  it('the first agent going away during the build: the run names that agent, and the other proves its classes and is released', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    const go = path.join(c.root, 'go');
    const cli = startCli(['--json', ...build(c, { shared: 'shared-v2' }, { until: go })], { cwd: c.root });
    await waitFor(() => fs.existsSync(c.marker), 'the build to start');
    await a.stop();
    release(go);
    const run = await cli;
    expect(run.exitCode, run.stderr).toBe(70);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    expect(result.agents.map((x: { agentSource: string; exitCode: number }) => [x.agentSource, x.exitCode])).toEqual([
      [c.portFile.a, 70],
      [c.portFile.b, 0],
    ]);
    expect(run.stderr).toContain(`✘ not proven live: 1 of 2 agents proved their classes live; the agent of ${c.portFile.a}: `);
    expect(verified(b, NAMES.shared, 'shared-v2')).toBeGreaterThan(0);
    expect(sent(b, 'BUILD ').map((l) => l.split(' ')[1])).toEqual(['started', 'ok']);
    expect(b.hold().kind).toBe('none');
  });

  it("a module one app loads (its class path) but its agent does not watch: not watched for that app, 75, whatever the other's agent proves", async () => {
    const c = checkout();
    const a = await startAgent({ dir: path.join(c.root, 'svc-a'), classes: c.classes.a }, { watchDirs: [c.classes.a, c.classes.shared] });
    // svc-b depends on shared (on its JVM's class path), but its agent watches only svc-b.
    const b = await startAgent(
      { dir: path.join(c.root, 'svc-b'), classes: c.classes.b },
      { watchDirs: [c.classes.b], classPath: [c.classes.b, c.classes.shared] },
    );
    const run = await runCli(['--json', ...build(c, { shared: 'shared-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(75);
    expect(verified(a, NAMES.shared, 'shared-v2')).toBeGreaterThan(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const classesOf = (source: string) =>
      lines.filter((l) => l.type === 'class' && l.agentSource === source).map((l) => `${l.className} ${l.status}`);
    expect(classesOf(c.portFile.a)).toEqual([`${NAMES.shared} applied`]);
    expect(classesOf(c.portFile.b)).toEqual([`${NAMES.shared} not-watched`]);
    expect(lines.at(-1).agents.map((x: { exitCode: number }) => x.exitCode)).toEqual([0, 75]);
    expect(run.stderr).toContain(`1 changed class(es) lie in ${c.classes.shared}, which the agent does not watch`);
    expect(run.stderr).toContain(`watchDirs=${c.classes.b};${c.classes.shared}`);
    expect(run.stderr).not.toMatch(/✔ proven live: every one/);
    expect(b.hold().kind).toBe('none');
  });

  it('svc-b alone, its agent watching only svc-b: a change in shared is not watched (75), and the warnings name only that folder', async () => {
    const c = checkout();
    await startAgent({ dir: path.join(c.root, 'svc-b'), classes: c.classes.b }, { watchDirs: [c.classes.b] });
    const run = await runCli(['--port-file', c.portFile.b, ...build(c, { shared: 'shared-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.shared\.Money/);
    const warned = run.stderr.split('\n').filter((line) => line.includes('warning: the agent does not watch'));
    expect(warned).toEqual([
      `reclazz-build: warning: the agent does not watch ${c.classes.shared}: changes there will not reload (it watches ${c.classes.b})`,
    ]);
    expect(run.stderr).not.toContain(c.classes.a);
  });

  it("a module an app's JVM does not load is checked only where it is watched: the other app's agent proves it, 0", async () => {
    const c = checkout();
    await startAgent({ dir: path.join(c.root, 'svc-a'), classes: c.classes.a }, { watchDirs: [c.classes.a, c.classes.shared] });
    const b = await startAgent({ dir: path.join(c.root, 'svc-b'), classes: c.classes.b }, { watchDirs: [c.classes.b] });
    const run = await runCli(build(c, { shared: 'shared-v2' }), { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(sent(b, 'VERIFY ')).toEqual([]);
    expect(run.stderr).toMatch(/✔ proven live: every one of the 2 agents proved its classes live/);
  });

  it('--port-file (repeatable) selects the agents to hold', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    const run = await runCli(['--port-file', 'svc-a/.reclazz/agent.port', ...build(c, { a: 'a-v2', shared: 'shared-v2' })], {
      cwd: c.root,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(verified(a, NAMES.shared, 'shared-v2')).toBeGreaterThan(0);
    expect(b.received.filter((r) => r.line.startsWith('BUILD'))).toEqual([]);
    // One agent named: the one-agent report, no per-agent sections.
    expect(run.stderr).not.toContain('every one of the');
    const both = await runCli(
      ['--port-file', 'svc-b/.reclazz/agent.port', '--port-file', 'svc-a/.reclazz/agent.port', ...build(c, { b: 'b-v3' })],
      { cwd: c.root },
    );
    expect(both.exitCode, both.stderr).toBe(0);
    expect(verified(b, NAMES.b, 'b-v3')).toBeGreaterThan(0);
    // Held in the order of the port files' paths, whatever order they were named in.
    expect(both.stderr).toContain(`agent --port-file ${c.portFile.b}:`);
    expect(both.stderr.indexOf(`agent --port-file ${c.portFile.a}:`)).toBeLessThan(
      both.stderr.indexOf(`agent --port-file ${c.portFile.b}:`),
    );
  });

  it('a busy second agent: the first hold, taken fresh, gets ok (nothing was built) and the run refuses with 69 naming both', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    const ide = await holdAsIde(b);
    try {
      const run = await runCli(['--wait', '300', ...build(c, { a: 'a-v2' })], { cwd: c.root });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(fs.existsSync(c.marker)).toBe(false);
      expect(sent(a, 'BUILD ').map((l) => l.split(' ')[1])).toEqual(['started', 'ok']);
      expect(run.stderr).toContain(`released the hold on the agent of ${c.portFile.a}`);
      expect(run.stderr).toContain('held by another owner');
      expect(run.stderr).toContain(c.portFile.a);
      expect(run.stderr).toContain(c.portFile.b);
      expect(run.stderr).toMatch(/next: .*--port-file <path> for each/);
      expect(b.hold()).toMatchObject({ kind: 'named', owner: 'the-ide' });
      await expect.poll(() => a.hold().kind).toBe('none');
    } finally {
      ide.socket.destroy();
    }
  });

  it('a busy second agent never gets the first agent an ok for a hold recovered from an earlier failed build', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    const failed = await runCli(['--port-file', c.portFile.a, ...build(c, { a: 'a-broken' }, { exit: 1 })], { cwd: c.root });
    expect(failed.exitCode).toBe(1);
    const owner = a.hold().owner;
    expect(a.hold()).toMatchObject({ kind: 'named' });
    fs.rmSync(c.marker);
    const ide = await holdAsIde(b);
    try {
      const run = await runCli(['--wait', '300', ...build(c, { a: 'a-v2' })], { cwd: c.root });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(fs.existsSync(c.marker)).toBe(false);
      // started (the failed run), failed, started again (recovered by this run): never ok.
      expect(sent(a, 'BUILD ').map((l) => l.split(' ')[1])).toEqual(['started', 'failed', 'started']);
      expect(a.hold()).toMatchObject({ kind: 'named', owner });
      expect(run.stderr).toContain(`left the hold on the agent of ${c.portFile.a} with owner ${owner}`);
    } finally {
      ide.socket.destroy();
    }
  });

  it('runs naming different port files are serialised by the one lock in the checkout root', async () => {
    const c = checkout();
    await agents(c);
    fs.mkdirSync(path.join(c.root, '.git'));
    const go = path.join(c.root, 'go');
    const first = startCli(['--port-file', c.portFile.a, ...build(c, { shared: 'shared-v2' }, { until: go })], { cwd: c.root });
    await expect.poll(() => fs.existsSync(c.marker)).toBe(true);
    const second = await runCli(['--wait', '0', '--port-file', c.portFile.b, ...build(c, { shared: 'shared-v3' })], {
      cwd: path.join(c.root, 'svc-b'),
    });
    release(go);
    expect(second.exitCode).toBe(69);
    expect(second.stderr).toContain(
      `another reclazz-build run in this checkout still holds ${path.join(c.root, '.reclazz', 'build.lock')}`,
    );
    expect((await first).exitCode).toBe(0);
  });
});

describe('where state lives', () => {
  it('--port-file outside the checkout never puts state next to it; the checkout root keeps it', async () => {
    const c = checkout();
    const elsewhere = tempDir();
    const portFile = path.join(elsewhere, 'agent.port');
    const agent = await startAgent({ dir: elsewhere, classes: c.classes.a }, { portFile, watchDirs: [c.classes.a] });
    const run = await runCli(['--port-file', portFile, ...build(c, { a: 'a-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(verified(agent, NAMES.a, 'a-v2')).toBeGreaterThan(0);
    expect(fs.readdirSync(elsewhere)).toEqual(['agent.port']);
    const [folder] = fs.readdirSync(path.join(c.root, '.reclazz', 'agents'));
    expect(fs.readdirSync(path.join(c.root, '.reclazz', 'agents', folder!)).sort()).toEqual(['classes.idx', 'owner.json']);
  });

  it("state an earlier version kept in a module's .reclazz/ is read once and moved: its owner token recovers the hold", async () => {
    const c = checkout();
    const { a } = await agents(c);
    // An earlier version's run left a failed build held, its token in the module's .reclazz/.
    const ide = await LineClient.ready(a.port);
    expect(await ide.ask('BUILD started request=r-1 owner=left-behind', 'BUILD_ACK', 'r-1')).toContain('owner=left-behind');
    expect(await ide.ask('BUILD failed request=r-2 owner=left-behind', 'BUILD_ACK', 'r-2')).toContain('failed');
    ide.socket.destroy();
    const old = path.join(c.root, 'svc-a', '.reclazz', 'owner.json');
    const saved = { owner: 'left-behind', sessionId: a.sessionId, port: a.port, updatedAt: new Date().toISOString(), held: true };
    fs.writeFileSync(old, `${JSON.stringify(saved)}\n`);
    const run = await runCli(['--port-file', c.portFile.a, ...build(c, { a: 'a-v2' })], { cwd: c.root });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('recovering the build an earlier run left held (owner token left-behind)');
    expect(run.stderr).toMatch(/moved .*svc-a\/\.reclazz\/owner\.json to .*\.reclazz\/agents\/svc-a-[0-9a-f]{12}\/owner\.json/);
    expect(fs.existsSync(old)).toBe(false);
    expect(a.hold().kind).toBe('none');
  });
});

describe('refusals name every port file found and the next step', () => {
  it('a subcommand, which talks to one agent, lists them and says how to pick one', async () => {
    const c = checkout();
    await agents(c);
    const run = await runCli(['doctor'], { cwd: c.root });
    expect(run.exitCode).toBe(69);
    expect(run.stderr).toContain(`found 2 agent port files below ${c.root}`);
    expect(run.stderr).toContain(`  ${c.portFile.a}`);
    expect(run.stderr).toContain(`  ${c.portFile.b}`);
    expect(run.stderr).toContain(`--port-file ${c.portFile.a}`);
    const named = await runCli(['doctor', '--port-file', c.portFile.b, '--port-file', c.portFile.a], { cwd: c.root });
    expect(named.exitCode).toBe(69);
    expect(named.stderr).toContain(`--port-file names 2 agent port files:\n  ${c.portFile.a}\n  ${c.portFile.b}`);
  });

  it('a stale second port file: the run refuses naming it among both, before any hold', async () => {
    const c = checkout();
    const { a, b } = await agents(c);
    await b.stop();
    fs.mkdirSync(path.dirname(c.portFile.b), { recursive: true });
    fs.writeFileSync(c.portFile.b, String(b.port));
    const run = await runCli(build(c, { a: 'a-v2' }), { cwd: c.root });
    expect(run.exitCode).toBe(69);
    expect(fs.existsSync(c.marker)).toBe(false);
    expect(sent(a, 'BUILD ')).toEqual([]);
    expect(run.stderr).toContain(`the agent of ${c.portFile.b}; this run found 2 agents`);
    expect(run.stderr).toContain(c.portFile.a);
  });
});
