/**
 * The e2e project's global setup (it runs when e2e files are in the run, at its start): a
 * folder of the run's own with the fixture cache (fixture-compile.ts; tests get its path with
 * `inject`) and a Gradle user home, and a warm-up that compiles every fixture into the cache in
 * the background at a lower priority while the other projects' tests run, so the e2e files,
 * which run after them one at a time, find the fixtures compiled (once they ask for one, the
 * warm-up stops and leaves the rest to them). At the end the warm-up is stopped if it still
 * runs, the run's Gradle daemon is stopped and the folder removed.
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
import { compiledTree, FIXTURE_NAMES, testsWaiting } from './fixture-compile.js';

let runDir: string | undefined;
let warmUp: Promise<void> | undefined;
const stopWarmUp = new AbortController();

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
  // Once the e2e files ask for fixtures themselves, the warm-up stops (a build it has begun too):
  // at its lower priority it would only hold them up.
  const givingWay = setInterval(() => {
    if (testsWaiting(fixtureCache)) stopWarmUp.abort();
  }, 250);
  warmUp = (async () => {
    for (const name of FIXTURE_NAMES) {
      if (stopWarmUp.signal.aborted) break;
      // A fixture that does not compile is recorded in the cache: the tests that need it fail with its output.
      await compiledTree(fixtureCache, name, { background: true, signal: stopWarmUp.signal }).catch(() => undefined);
    }
    clearInterval(givingWay);
  })();
}

export async function teardown(): Promise<void> {
  stopWarmUp.abort();
  await warmUp;
  if (runDir === undefined) return;
  const gradleHome = path.join(runDir, 'gradle-home');
  if (fs.existsSync(path.join(gradleHome, 'daemon'))) {
    spawnSync('gradle', ['--stop'], { env: { ...process.env, GRADLE_USER_HOME: gradleHome }, stdio: 'ignore', timeout: 60_000 });
  }
  fs.rmSync(runDir, { recursive: true, force: true });
}
