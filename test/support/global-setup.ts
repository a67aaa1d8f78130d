/**
 * Once per `vitest run`, whichever projects run: a fixture cache for the run (fixture-cache.ts
 * compiles into it; tests get its path with `inject`) and a Gradle user home of the run's own,
 * and at the end both, the Gradle daemon of that home and the CLI's code cache the tests used
 * are removed.
 *
 * Gradle runs with a daemon here (as developers run it): the fixtures turn it off for a build of
 * their own (`gradle.properties`), but the run's Gradle home turns it on, so each of the suite's
 * Gradle builds after the first skips a JVM's start and warm-up (seconds each). The home is the
 * run's, so `gradle --stop` at the end stops this run's daemon and no one else's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { TEST_CODE_CACHE_DIR } from './cli.js';

let runDir: string | undefined;

export function setup(project: TestProject): void {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-run-'));
  const fixtureCache = path.join(runDir, 'fixtures');
  fs.mkdirSync(fixtureCache);
  project.provide('fixtureCache', fixtureCache);
  const gradleHome = path.join(runDir, 'gradle-home');
  fs.mkdirSync(gradleHome);
  // An idle daemon ends by itself after a minute: even a run killed before its teardown leaves none behind for long.
  fs.writeFileSync(path.join(gradleHome, 'gradle.properties'), 'org.gradle.daemon=true\norg.gradle.daemon.idletimeout=60000\n');
  // The workers, and every build they start, inherit it.
  process.env.GRADLE_USER_HOME = gradleHome;
}

export function teardown(): void {
  if (runDir !== undefined) {
    const gradleHome = path.join(runDir, 'gradle-home');
    if (fs.existsSync(path.join(gradleHome, 'daemon'))) {
      spawnSync('gradle', ['--stop'], { env: { ...process.env, GRADLE_USER_HOME: gradleHome }, stdio: 'ignore', timeout: 60_000 });
    }
    fs.rmSync(runDir, { recursive: true, force: true });
  }
  fs.rmSync(TEST_CODE_CACHE_DIR, { recursive: true, force: true });
}
