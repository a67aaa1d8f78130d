/**
 * Once per `vitest run`, whichever projects run: a fixture cache for the run (fixture-cache.ts
 * compiles into it; tests get its path with `inject`), and at the end that cache and the CLI's
 * code cache the tests used are removed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { TEST_CODE_CACHE_DIR } from './cli.js';

let fixtureCache: string | undefined;

export function setup(project: TestProject): void {
  fixtureCache = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-fixture-cache-'));
  project.provide('fixtureCache', fixtureCache);
}

export function teardown(): void {
  if (fixtureCache !== undefined) fs.rmSync(fixtureCache, { recursive: true, force: true });
  fs.rmSync(TEST_CODE_CACHE_DIR, { recursive: true, force: true });
}
