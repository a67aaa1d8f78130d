/**
 * The projects under `fixtures/`, each compiled by its real build tool at most once per
 * `vitest run` and copied for every test that needs it: a test gets a compiled project of its
 * own (class files and the tool's state, timestamps kept), as if it had built it itself.
 *
 * The cache folder is the run's (made and removed by global-setup.ts, handed over with
 * `provide`). The first test that needs a fixture compiles it there under a lock folder, so
 * workers running side by side never build one twice or copy a half-built tree; a build that
 * fails is recorded, and every test that needs that fixture fails with its output.
 *
 * There is deliberately no "skip when the build tool is missing": in CI a test skipped because
 * a tool is missing has not passed. {@link build} says how to install the tools instead.
 */
import fs from 'node:fs';
import { cp, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { inject } from 'vitest';
import { waitFor } from './wait.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's fixture cache folder (global-setup.ts). */
    fixtureCache: string;
  }
}

/** The fixtures, each with the command that compiles it and the folder it runs from. */
const RECIPES = {
  'maven-app': { from: '.', command: 'mvn', args: ['-q', 'compile'] },
  'gradle-app': { from: '.', command: 'gradle', args: ['--offline', '-q', 'classes'] },
  'maven-reactor': { from: '.', command: 'mvn', args: ['-q', '-o', 'compile'] },
  'gradle-multi': { from: '.', command: 'gradle', args: ['--offline', '-q', 'classes'] },
  'kotlin-classes': { from: '.', command: 'sh', args: ['build.sh'] },
  'sap-commerce': { from: 'hybris/bin/platform', command: 'sh', args: ['-c', '. ./setantenv.sh && ant build'] },
  'two-services': { from: '.', command: 'mvn', args: ['-q', '-o', 'compile'] },
} as const;

/** A fixture project under `fixtures/`. */
export type FixtureName = keyof typeof RECIPES;

/** Absolute path of the repository's `fixtures/` directory. */
const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/**
 * Folder names that only builds and agents create (Maven, Gradle, kotlinc, the ant build's
 * `classes`, `modelclasses`), left out when a fixture is first copied, so that a fixture built in
 * place never leaks its output into a test. No fixture has sources under such a name.
 */
const OUTPUT_FOLDERS = new Set(['target', 'build', '.gradle', '.reclazz', 'classes', 'modelclasses']);

/** How long a worker waits for another one's build of the same fixture: it only bounds a hang. */
const OTHERS_BUILD_MS = 600_000;

const copies = new Set<string>();

/**
 * A copy of `fixtures/<name>` as its build tool left it after compiling it (see the file
 * comment), in a fresh temporary folder: the absolute real path of the project folder
 * (`<tmp>/reclazz-test-<name>-XXXXXX/<name>`). Remove the copies with {@link removeFixtureCopies}.
 *
 * @throws Error with the build's output (or how to install its tool) when the fixture does not compile.
 */
export async function compiledFixture(name: FixtureName): Promise<string> {
  const compiled = await compiledOnce(name);
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), `reclazz-test-${name}-`)));
  copies.add(root);
  const projectDir = path.join(root, name);
  // Timestamps kept: Maven's and ant's staleness checks compare a source's with its class file's.
  await cp(compiled, projectDir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
  return projectDir;
}

/** Removes every copy {@link compiledFixture} made in this process (for `afterAll`). Safe to call twice. */
export async function removeFixtureCopies(): Promise<void> {
  const roots = [...copies];
  copies.clear();
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
}

/** The compiled tree of `name` in the run's cache, compiling it first if no worker has. */
async function compiledOnce(name: FixtureName): Promise<string> {
  const cache = inject('fixtureCache');
  const tree = path.join(cache, name, name);
  const ready = path.join(cache, `${name}.ready`);
  const failed = path.join(cache, `${name}.failed`);
  const lock = path.join(cache, `${name}.lock`);
  for (;;) {
    if (fs.existsSync(ready)) return tree;
    if (fs.existsSync(failed)) throw new Error(fs.readFileSync(failed, 'utf8'));
    if (takeLock(lock)) break;
    await waitFor(() => fs.existsSync(ready) || fs.existsSync(failed) || !lockHeld(lock), `another worker's build of fixtures/${name}`, {
      timeoutMs: OTHERS_BUILD_MS,
      pollMs: 100,
    });
  }
  try {
    await rm(path.dirname(tree), { recursive: true, force: true });
    await cp(path.join(FIXTURES_DIR, name), tree, {
      recursive: true,
      filter: (src) => !(fs.statSync(src).isDirectory() && OUTPUT_FOLDERS.has(path.basename(src))),
    });
    const recipe = RECIPES[name];
    await build(path.join(tree, recipe.from), recipe.command, recipe.args);
    fs.writeFileSync(ready, '');
    return tree;
  } catch (error) {
    fs.writeFileSync(failed, `fixtures/${name} did not compile: ${(error as Error).message}`);
    throw error;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Takes the lock folder (atomic mkdir), writing this process's pid in it; false when another holds it. */
function takeLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (lockHeld(lock)) return false;
    // Its holder died mid-build (a crashed worker): take it over.
    fs.rmSync(lock, { recursive: true, force: true });
    return takeLock(lock);
  }
  fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
  return true;
}

/** True while the lock folder exists and its holder runs (or has not written its pid yet). */
function lockHeld(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
  } catch (error) {
    return fs.existsSync(lock) && (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs one build command in `cwd` and waits for it (at most 240 s: real builds on a busy 2-core machine).
 *
 * @throws Error naming the command and the install script when the tool is not on PATH, or
 *   with the build's own output when it exits non-zero.
 */
export async function build(cwd: string, command: string, args: readonly string[]): Promise<void> {
  const result = await execa(command, args, { cwd, reject: false, all: true, timeout: 240_000 });
  const line = [command, ...args].join(' ');
  if (result.code === 'ENOENT') {
    throw new Error(
      `'${command}' is not on PATH, so '${line}' cannot run. Install the build tools with ` +
        `'bash .ci/install-build-tools.sh'; this test fails rather than skips without them.`,
    );
  }
  if (result.failed) {
    throw new Error(`'${line}' in ${cwd} failed (${result.shortMessage}):\n${result.all ?? ''}`);
  }
}
