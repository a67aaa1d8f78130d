/**
 * Issue 35, item 3, on the real binary against fake agents: a run touches only its own checkout.
 * From a folder in no checkout, port files found only in other checkouts below it (folders with
 * their own `.git`) are refused (69) before any hold, named, with `--port-file`; no run moves,
 * rewrites or deletes a file in another checkout's `.reclazz/`, a submodule's included, while inside
 * a checkout the agents below it are held as before (docs/state.md, "Which folder is the checkout root").
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { useFakeAgents } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

/** A checkout at `dir` (`.git` a folder, or a submodule's file) with one class and its app's agent. */
async function checkout(dir: string, git: 'folder' | 'file'): Promise<{ dir: string; classes: string; agent: FakeAgent }> {
  if (git === 'folder') fs.mkdirSync(path.join(dir, '.git'), { recursive: true });
  else {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, '.git'), 'gitdir: ../.git/modules/sub');
  }
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  return { dir, classes, agent: await startAgent({ dir, classes }) };
}

/** The bytes and stamps of a checkout's own state files: what no run from elsewhere may change. */
function stateOf(dir: string): Record<string, { bytes: string; mtimeMs: number; ino: number }> {
  const state = path.join(dir, '.reclazz');
  return Object.fromEntries(
    ['owner.json', 'classes.idx'].map((name) => {
      const file = path.join(state, name);
      const stat = fs.statSync(file);
      return [name, { bytes: fs.readFileSync(file, 'latin1'), mtimeMs: stat.mtimeMs, ino: stat.ino }];
    }),
  );
}

/** A build writing Greeter's class file in `classes` with `bytes`. */
const writesGreeter = (classes: string, bytes: string) => [
  '--',
  process.execPath,
  '-e',
  `require('fs').writeFileSync(${JSON.stringify(path.join(classes, 'com', 'acme', 'Greeter.class'))}, ${JSON.stringify(bytes)})`,
];

const builds = (agent: FakeAgent) => agent.received.filter((r) => r.line.startsWith('BUILD ')).length;

describe('a run from a folder in no checkout, with checkouts below it', () => {
  it('refuses (69) before any hold, naming their port files and --port-file; their state stays untouched, and the next run inside one is proven', async () => {
    const plain = tempDir();
    const a = await checkout(path.join(plain, 'a'), 'folder');
    const b = await checkout(path.join(plain, 'b'), 'folder');
    const inside = await runCli(writesGreeter(a.classes, 'greeter-v2'), { cwd: a.dir });
    expect(inside.exitCode, inside.stderr).toBe(0);
    const before = stateOf(a.dir);
    const buildsBefore = [builds(a.agent), builds(b.agent)];

    const refused = await runCli(['--', 'true'], { cwd: plain });
    expect(refused.exitCode, refused.stderr).toBe(69);
    expect(refused.stderr).toContain(`${plain} is in no checkout`);
    for (const c of [a, b]) expect(refused.stderr).toContain(path.join(c.dir, '.reclazz', 'agent.port'));
    expect(refused.stderr).toContain(`--port-file ${path.join(a.dir, '.reclazz', 'agent.port')}`);
    expect([builds(a.agent), builds(b.agent)]).toEqual(buildsBefore);
    expect(stateOf(a.dir)).toEqual(before);
    expect(fs.existsSync(path.join(plain, '.reclazz'))).toBe(false);

    const next = await runCli(writesGreeter(a.classes, 'greeter-v3'), { cwd: a.dir });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/✔ proven live/);
  });

  it("--port-file names one: the run is that checkout's, with its owner token and state, and leaves nothing here", async () => {
    const plain = tempDir();
    const a = await checkout(path.join(plain, 'a'), 'folder');
    const inside = await runCli(['--verbose', ...writesGreeter(a.classes, 'greeter-v2')], { cwd: a.dir });
    expect(inside.exitCode, inside.stderr).toBe(0);
    const owner = JSON.parse(fs.readFileSync(path.join(a.dir, '.reclazz', 'owner.json'), 'utf8')).owner;

    const named = await runCli(['--verbose', '--port-file', 'a/.reclazz/agent.port', ...writesGreeter(a.classes, 'greeter-v3')], {
      cwd: plain,
    });
    expect(named.exitCode, named.stderr).toBe(0);
    expect(named.stderr).toContain(`owner token ${owner}`);
    expect(fs.existsSync(path.join(plain, '.reclazz'))).toBe(false);
    const next = await runCli(writesGreeter(a.classes, 'greeter-v4'), { cwd: a.dir });
    expect(next.exitCode, next.stderr).toBe(0);
  });
});

describe('a run inside a checkout', () => {
  it("holds a submodule's agent below it as before, but never moves the submodule's own state: the runs there keep it", async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '.git'));
    const sub = await checkout(path.join(root, 'sub'), 'file');
    const inside = await runCli(['--verbose', ...writesGreeter(sub.classes, 'greeter-v2')], { cwd: sub.dir });
    expect(inside.exitCode, inside.stderr).toBe(0);
    const owner = JSON.parse(fs.readFileSync(path.join(sub.dir, '.reclazz', 'owner.json'), 'utf8')).owner;
    const before = stateOf(sub.dir);

    const fromRoot = await runCli(['--', 'true'], { cwd: root });
    expect(fromRoot.exitCode, fromRoot.stderr).toBe(0);
    expect(fromRoot.stderr).not.toContain(`moved ${path.join(sub.dir, '.reclazz')}`);
    expect(stateOf(sub.dir)).toEqual(before);
    expect(fs.readdirSync(path.join(root, '.reclazz', 'agents'))).toEqual([expect.stringMatching(/^sub-[0-9a-f]{12}$/)]);

    const next = await runCli(['--verbose', ...writesGreeter(sub.classes, 'greeter-v3')], { cwd: sub.dir });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toContain(`owner token ${owner}`);
    expect(next.stderr).toMatch(/✔ proven live/);
  });
});
