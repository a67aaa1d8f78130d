/** Scan options the class tests share: the rule after a build, and what the record shows of the folders before it. */
import type { ClassIndex } from '../../src/classes/columns.js';
import { EVIDENCE, RECHECK, verdictOf } from '../../src/classes/evidence.js';
import { wholeBefore } from '../../src/classes/history.js';
import type { ScanOptions } from '../../src/classes/snapshot.js';
import { afterBuildFacts } from '../../src/classes/file-facts.js';

/**
 * The rule after a build whose hold was taken at 0 (every stamp is the build's). `before`: the
 * record just before the build, checked now (call this before the "build" writes): its folders
 * whose history is whole (history.ts `wholeBefore`). `heldNothing`: class output directories the
 * record shows held no class in the session (a first build into them: their files are new).
 */
export function afterBuild(before?: ClassIndex, heldNothing: readonly string[] = []): ScanOptions {
  const whole = before === undefined ? new Map<string, boolean>() : wholeBefore(before.folderHistory, () => false);
  for (const dir of heldNothing) whole.set(dir, true);
  return { judge: (file) => verdictOf(afterBuildFacts(file, 0)), history: { kind: 'after', before: whole } };
}

/**
 * `index` with every class new to the JVM that waits on its single ask (RECHECK + added) kept
 * `added`, as the proof records it when DIAGNOSE says the JVM has not loaded the class.
 */
export function keptNew(index: ClassIndex): ClassIndex {
  index.evidence.forEach((code, row) => {
    if (code === RECHECK + EVIDENCE.added) index.evidence[row] = EVIDENCE.added;
  });
  return index;
}
