/**
 * The baseline of a build: the class files as the agent has them live before it, and the
 * index the next build starts from. Pure over the class index (state/ reads and writes it).
 */
import type { ClassVerdict } from '../outcome/facts.js';
import type { ClassIndex } from './columns.js';
import { detectChanges, markUnproven, type Detection } from './snapshot.js';

/**
 * The class files as the agent has them live before this build: `index`, kept by the last run
 * whose ok this agent session acknowledged (a build that failed since left the agent holding,
 * so it reloaded nothing). After an app restart, or for class output directories the index does
 * not cover, that is what is on disk now: those are scanned (only files whose stamp moved are
 * hashed), and the caller saves the result before the build starts, so that a run killed
 * mid-build still leaves it.
 * @returns the baseline, whether it was scanned (then save it), and class files that could not be read.
 */
export async function baselineOf(
  index: ClassIndex,
  dirs: readonly string[],
  sessionId: string,
): Promise<{ baseline: ClassIndex; scanned: boolean; unreadable: string[] }> {
  const sameSession = index.sessionId === sessionId;
  const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : dirs;
  if (sameSession && toScan.length === 0) return { baseline: index, scanned: false, unreadable: [] };
  const { index: baseline, unreadable } = await detectChanges({ ...index, sessionId }, toScan);
  return { baseline, scanned: true, unreadable };
}

/**
 * The next build's baseline, in place in `detected.index`: what is live now. A changed class
 * not proven applied (failed, timed out, beyond the agent's receipts, interrupted, --no-verify)
 * is marked unproven, so the next build checks it again rather than taking it as live.
 * @returns whether the index changed (then save it).
 */
export function recordProof(detected: Detection, baseline: ClassIndex, verdicts: readonly ClassVerdict[]): boolean {
  const proven = new Set(verdicts.filter((v) => v.status === 'applied').map((v) => v.path));
  const unproven = detected.changes.changed.filter((c) => c.verifiable && !proven.has(c.path));
  markUnproven(detected.index, baseline, new Set(unproven.map((c) => c.path)));
  return detected.dirty;
}
