/**
 * Three projects, chosen by folder, so a new test file lands in the right one by where it is put
 * (CONTRIBUTING.md, "Setup and tests"):
 *
 * - unit: everything under test/ but the folders below; in-process, several workers. A worker
 *   keeps the modules it loaded from one file to the next (`isolate: false`), which halves the
 *   project's time; helpers therefore register their cleanup with test/support/cleanup.ts, whose
 *   hook setup.ts adds to every file, never a hook of their own.
 * - blackbox: the built CLI against the fake agent (test/blackbox). Their files mostly wait on
 *   child processes, so they share the unit tests' workers, more of them than this machine has
 *   cores, and their modules as the unit files do.
 * - e2e: real Maven, Gradle, kotlinc and ant builds (test/e2e, test/fixtures), the packed
 *   package and the documents' samples recorded from real Maven runs (test/package), and the
 *   fuzz's thousand runs (test/fuzz), after the others, two files at a time: a build's JVM keeps
 *   about one core busy, the fuzz waits on its peers' timers more than it computes, and the
 *   tests wait on events, not on guessed times.
 *
 * vitest runs a group of projects with one worker count, and groups one after another
 * (`sequence.groupOrder`). The e2e project's global setup (test/support/e2e-setup.ts) compiles
 * each fixture once, in the background while the first group runs.
 */
import { defineConfig } from 'vitest/config';

/** Workers of the first group: the blackbox files wait on processes far more than they compute. */
const PARALLEL_WORKERS = 4;

const BLACKBOX = ['test/blackbox/**/*.test.ts'];
const E2E = ['test/e2e/**/*.test.ts', 'test/fixtures/**/*.test.ts', 'test/package/**/*.test.ts', 'test/fuzz/**/*.test.ts'];

/** What every project shares. */
const common = {
  // Every test file removes the temp folders it made.
  setupFiles: ['test/support/setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // expect.poll waits for an event; its deadline only bounds a hang (as test/support/wait.ts's).
  expect: { poll: { timeout: 30_000 } },
};

export default defineConfig({
  test: {
    // Once per run, whichever projects run: the code cache of the CLI runs is removed at the end.
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...BLACKBOX, ...E2E],
          maxWorkers: PARALLEL_WORKERS,
          isolate: false,
        },
      },
      { test: { ...common, name: 'blackbox', include: BLACKBOX, maxWorkers: PARALLEL_WORKERS, isolate: false } },
      {
        test: {
          ...common,
          name: 'e2e',
          include: E2E,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          // At the run's start when e2e files are in it: the fixture cache, compiled in the background meanwhile.
          globalSetup: ['test/support/e2e-setup.ts'],
        },
      },
    ],
  },
});
