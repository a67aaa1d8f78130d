/**
 * The baseline of a build: the record before it, the class index of this agent session with
 * the evidence of each file (evidence.ts). Pure over the class index (state/ reads and writes it).
 */
import type { AppStart } from '../outcome/facts.js';
import { forSession, type ClassIndex } from './columns.js';
import { EVIDENCE, firstSeen } from './evidence.js';
import { detectChanges } from './snapshot.js';

/**
 * The record before this build: `index` when it is of this agent session and covers `dirs`.
 * Missing, corrupt, of another version or of another session, it is no record: then, and for
 * class output directories it does not cover, the files are scanned now (only files whose stamp
 * moved are hashed), each one live only when unchanged since the app's JVM started; the caller
 * saves the result before the build starts, so that a run killed mid-build still leaves it.
 * What cannot be read now is named after the build.
 * @returns the baseline, the directories scanned now (save it when there are any), and the
 *   folders that scan could not list.
 */
export async function baselineOf(
  index: ClassIndex,
  dirs: readonly string[],
  sessionId: string,
  appStart: AppStart,
): Promise<{ baseline: ClassIndex; scanned: string[]; unseen: string[] }> {
  const sameSession = index.sessionId === sessionId;
  const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : [...dirs];
  if (sameSession && toScan.length === 0) return { baseline: index, scanned: [], unseen: [] };
  const start = appStart.kind === 'known' ? { startMs: appStart.startMs, errorMs: appStart.errorMs } : undefined;
  const { index: baseline, unreadableDirs } = await detectChanges(sameSession ? index : forSession(index, sessionId), toScan, {
    judge: (file) => {
      const evidence = firstSeen(file.ctimeMs, start);
      return evidence === EVIDENCE.preStart ? { kind: 'live', evidence } : { kind: 'verify', by: 'once', liveUnknown: true };
    },
  });
  return { baseline, scanned: toScan, unseen: unreadableDirs };
}
