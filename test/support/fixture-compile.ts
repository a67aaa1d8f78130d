/**
 * The projects under `fixtures/` compiled by their real build tools into a run's cache folder,
 * at most once per run: the first caller compiles a fixture there under a lock folder, so
 * workers running side by side (and the e2e project's warm-up, e2e-setup.ts) never build one
 * twice or copy a half-built tree; a build that fails is recorded, and every later caller gets
 * its output as the error. Tests take copies (fixture-cache.ts). Free of vitest's runtime, so
 * the global setup can use it.
 *
 * There is deliberately no "skip when the build tool is missing": in CI a test skipped because
 * a tool is missing has not passed. {@link build} says how to install the tools instead.
 */
import fs from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { waitFor } from './wait.js';

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

/** Every fixture, in the order the warm-up compiles them. */
export const FIXTURE_NAMES = Object.keys(RECIPES) as FixtureName[];

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

/** Options of {@link compiledTree}. */
interface CompileOptions {
  /**
   * Run the build at a lower priority (`nice`): a warm-up that must not slow the tests running
   * meanwhile. A build that is not in the background says so ({@link testsWaiting}).
   */
  background?: boolean;
  /** Stops the build and leaves the fixture to the next caller (nothing is recorded). */
  signal?: AbortSignal;
}

/** The marker a test's call leaves in the cache: from then on a warm-up gives way ({@link testsWaiting}). */
const FOREGROUND = '.tests-waiting';

/** True once a test asked for a fixture: a background warm-up stops then, and the test builds at full priority. */
export function testsWaiting(cache: string): boolean {
  return fs.existsSync(path.join(cache, FOREGROUND));
}

/**
 * The compiled tree of `name` in the cache folder `cache`, compiling it first if no one has.
 *
 * @throws Error with the build's output (or how to install its tool) when it does not compile.
 */
export async function compiledTree(cache: string, name: FixtureName, options: CompileOptions = {}): Promise<string> {
  const tree = path.join(cache, name, name);
  const ready = path.join(cache, `${name}.ready`);
  const failed = path.join(cache, `${name}.failed`);
  const lock = path.join(cache, `${name}.lock`);
  if (options.background !== true) fs.writeFileSync(path.join(cache, FOREGROUND), '');
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
    // Gradle's client would start the run's daemon at the lower priority too, for every later build.
    const nice = options.background === true && recipe.command !== 'gradle';
    await build(path.join(tree, recipe.from), recipe.command, recipe.args, { nice, signal: options.signal });
    fs.writeFileSync(ready, '');
    return tree;
  } catch (error) {
    if (options.signal?.aborted === true) await rm(path.dirname(tree), { recursive: true, force: true });
    else fs.writeFileSync(failed, `fixtures/${name} did not compile: ${(error as Error).message}`);
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
 * Runs one build command in `cwd` and waits for it (at most 240 s: real builds on a busy 2-core
 * machine), with `nice` at a lower priority, stopped when `signal` aborts.
 *
 * @throws Error naming the command and the install script when the tool is not on PATH, or
 *   with the build's own output when it exits non-zero (under `nice` a missing tool is that).
 */
export async function build(
  cwd: string,
  command: string,
  args: readonly string[],
  options: { nice?: boolean; signal?: AbortSignal } = {},
): Promise<void> {
  const [file, ...rest] = options.nice === true ? ['nice', '-n', '10', command, ...args] : [command, ...args];
  const result = await execa(file!, rest, { cwd, reject: false, all: true, timeout: 240_000, cancelSignal: options.signal });
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
