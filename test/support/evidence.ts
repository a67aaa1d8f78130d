/**
 * Shared pieces of the evidence tests (issue 11): a project whose app starts after its classes
 * were written, agents and folders cleaned up after each test, build commands that delete or
 * wait, and a run as another user for what only permissions can show.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import type { FakeAgent, FakeAgentOptions } from '../../src/fake-agent/index.js';
import { LineClient } from '../fake-agent/line-client.js';
import { waitFor } from './wait.js';
import { readClassIndex } from '../../src/state/store.js';
import { runCli, type CliRun } from './cli.js';
import { agentFor, project, type Project } from './project.js';

/** The fake agent's own watcher, quick, so an outside compile reloads (or fails) within a few hundred ms. */
export const WATCHER = { autoReload: true, watchDebounceMs: 50, watchPollMs: 20 } as const;

/** Fake agent options under which reloads of these bytes fail. */
export function failing(...texts: string[]): { verifyStatus: (name: string, hash: string) => 'failed' | undefined } {
  const bad = new Set(texts.map(sha));
  return { verifyStatus: (_, hash) => (bad.has(hash) ? 'failed' : undefined) };
}

/** A run that proves nothing about `className`: no ✔, exit 75, the class read as `status`, never `added`. */
export function expectNotLive(result: CliRun, className: string, status: string): void {
  const name = className.replace(/[.$]/g, (c) => `\\${c}`);
  expect(result.stderr).not.toContain('✔');
  expect(result.stderr).not.toMatch(new RegExp(`added\\s+${name}\\b`));
  expect(result.stderr).toMatch(new RegExp(`${status}\\s+${name}\\b`));
  expect(result.exitCode, result.stderr).toBe(75);
}

/** SHA-256 hex of a fake class file's text. */
export const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The binary name's class file below `p.classes`. */
export const classFile = (p: Project, className: string): string => path.join(p.classes, ...className.split('.')) + '.class';

/**
 * Registers the cleanup of every agent and folder a test makes, and returns the maker: a
 * project (Greeter, Outer, Outer$Inner loaded by the app) and its fake agent, started after the
 * classes were written (and `setup` ran), with the agent's port file in the project; `options`
 * may depend on the project.
 */
export function useProjects(): (
  options?: FakeAgentOptions | ((p: Project) => FakeAgentOptions),
  setup?: (p: Project) => void,
) => Promise<{ p: Project; agent: FakeAgent }> {
  const agents: FakeAgent[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    for (const dir of dirs.splice(0)) {
      // A test that made a folder unreadable may have failed before giving it back.
      for (const folder of walkFolders(dir)) fs.chmodSync(folder, 0o755);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  return async (options = {}, setup) => {
    const p = project();
    dirs.push(p.dir);
    setup?.(p);
    const agent = await agentFor(p, agents, { portFile: p.portFile, ...(typeof options === 'function' ? options(p) : options) });
    return { p, agent };
  };
}

function walkFolders(dir: string): string[] {
  const found = [dir];
  try {
    fs.chmodSync(dir, 0o755);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && !entry.isSymbolicLink()) found.push(...walkFolders(path.join(dir, entry.name)));
    }
  } catch {
    // gone already
  }
  return found;
}

/** `-- node -e <script>`: a build command running `script` (CommonJS, `fs` and `path` in scope). */
export function script(code: string): string[] {
  return ['--', process.execPath, '-e', `const fs = require('fs'), path = require('path'); ${code}`];
}

/** A build that deletes the class files of `classNames`. */
export function deletes(p: Project, ...classNames: string[]): string[] {
  return script(classNames.map((name) => `fs.rmSync(${JSON.stringify(classFile(p, name))});`).join(''));
}

/** An outside compile: writes `bytes` for `className` without reclazz-build. */
export function compileOutside(p: Project, className: string, bytes: string): void {
  const file = classFile(p, className);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
}

/** Runs the CLI in the project with `args`. */
export function run(p: Project, args: string[], extra: { unprivileged?: boolean } = {}): Promise<CliRun> {
  return runCli(args, { cwd: p.dir, ...(extra.unprivileged ? { unprivileged: true, env: { RECLAZZ_CODE_CACHE: '0' } } : {}) });
}

/** Hands the project to the user the unprivileged runs go as (nobody, when the tests run as root). */
export function giveToNobody(p: Project): void {
  if (process.getuid?.() !== 0) return;
  const own = (target: string): void => {
    fs.lchownSync(target, 65534, 65534);
    if (fs.lstatSync(target).isDirectory()) for (const name of fs.readdirSync(target)) own(path.join(target, name));
  };
  own(p.dir);
}

/** The rows the project's class index keeps, by path: whether each is a tombstone. */
export function indexRows(p: Project): Map<string, { gone: boolean }> {
  const index = readClassIndex(p.dir, () => undefined);
  return new Map(index.paths.map((file, row) => [file, { gone: index.gone[row] === 1 }]));
}

/**
 * Runs `trigger` (an outside compile, a restart's writes) and resolves once the agent has
 * said, for each class named, that its reload ended: `Reloaded <class>` or `Reload failed for
 * <class>` (its VERIFY answers from then on). The agent's broadcast, awaited on a connection
 * of its own.
 */
export async function reloadsEnded(agent: FakeAgent, classNames: string[], trigger: () => unknown): Promise<void> {
  const events = await LineClient.ready(agent.port);
  try {
    await trigger();
    const ended = (name: string) =>
      events.events().some((e) => e.message.startsWith(`Reloaded ${name} `) || e.message.startsWith(`Reload failed for ${name} `));
    await waitFor(() => classNames.every(ended), `the reloads of ${classNames.join(', ')} to end`);
  } finally {
    events.close();
  }
}
