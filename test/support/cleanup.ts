/**
 * Steps to run when the current test ends, whichever helper module registered them. The hook
 * that runs them is registered per test file by setup.ts: a helper module is evaluated once per
 * worker (the unit and blackbox files share their workers' modules), so a hook it registered
 * itself would run in the first file that imported it only.
 */
const steps: Array<() => unknown> = [];

/** Runs `step` when the current test ends, after steps registered later (last in, first out). */
export function afterThisTest(step: () => unknown): void {
  steps.push(step);
}

/** Runs and forgets every registered step, the newest first; called by setup.ts after each test. */
export async function runAfterTestSteps(): Promise<void> {
  while (steps.length > 0) await steps.pop()!();
}
