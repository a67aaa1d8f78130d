/**
 * The tests' truth oracle: what a fake agent's stand-in JVM runs of a class (loaded.ts), read
 * beside the wire, never through it. Not part of the fake agent's API (index.ts does not export
 * it): a client learns only what the agent says.
 */
import type { ClassTruth, LoadedClasses } from './loaded.js';
import type { FakeAgent } from './types.js';

const jvms = new WeakMap<object, LoadedClasses>();

/** Ties a fake agent's application to the classes its JVM runs. */
export function registerTruth(application: object, classes: LoadedClasses): void {
  jvms.set(application, classes);
}

/**
 * What `agent`'s JVM runs of `className` (a binary name) now, or would load on first use.
 * @internal for the truth oracle of the tests (test/fuzz/)
 * @throws when `agent` is not a fake agent started in this process.
 */
export function jvmTruth(agent: FakeAgent, className: string): ClassTruth {
  return jvmOf(agent).truth(className);
}

/**
 * When `agent`'s JVM loaded its classes at its last start, epoch ms: a class file written after
 * that is one it did not load.
 * @internal for the truth oracle of the tests (test/fuzz/)
 * @throws when `agent` is not a fake agent started in this process.
 */
export function jvmLoadedAtMs(agent: FakeAgent): number {
  return jvmOf(agent).loadedAtMs;
}

function jvmOf(agent: FakeAgent): LoadedClasses {
  const classes = jvms.get(agent);
  if (classes === undefined) throw new Error('not a fake agent of this process');
  return classes;
}
