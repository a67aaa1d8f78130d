/**
 * The projects under `fixtures/`, compiled at most once per `vitest run` (fixture-compile.ts)
 * and copied for every test that needs it: a test gets a compiled project of its own (class
 * files and the tool's state, timestamps kept), as if it had built it itself. The cache folder
 * is the run's e2e project's (e2e-setup.ts, handed over with `provide`).
 */
import { cp, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { compiledTree, type FixtureName } from './fixture-compile.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's fixture cache folder (e2e-setup.ts). */
    fixtureCache: string;
  }
}

const copies = new Set<string>();

/**
 * A copy of `fixtures/<name>` as its build tool left it after compiling it (see the file
 * comment), in a fresh temporary folder: the absolute real path of the project folder
 * (`<tmp>/reclazz-test-<name>-XXXXXX/<name>`). Remove the copies with {@link removeFixtureCopies}.
 *
 * @throws Error with the build's output (or how to install its tool) when the fixture does not compile.
 */
export async function compiledFixture(name: FixtureName): Promise<string> {
  const compiled = await compiledTree(inject('fixtureCache'), name);
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
