/**
 * The baseline of a build: the record before it, the class index of this agent session with
 * the evidence of each file (evidence.ts) and the history of each folder (history.ts). Pure over
 * the class index (state/ reads and writes it).
 */
import path from 'node:path';
import type { AppStart } from '../outcome/facts.js';
import { forSession, type ClassIndex } from './columns.js';
import { EVIDENCE, firstSeen } from './evidence.js';
import { wholeBefore } from './history.js';
import { detectChanges } from './snapshot.js';

/** The record before a build. */
export interface Baseline {
  baseline: ClassIndex;
  /** The class output directories scanned now (save the baseline when there are any). */
  scanned: string[];
  /** The folders that scan could not list. */
  unseen: string[];
  /** Per folder of the record, whether its history is whole just before the build (history.ts `wholeBefore`). */
  whole: Map<string, boolean>;
}

/**
 * The record before this build: `index` when it is of this agent session and covers `dirs`.
 * Missing, corrupt, of another version or of another session, it is no record: then, and for
 * class output directories it does not cover, the files are scanned now (only files whose stamp
 * moved are hashed), each one live only when at its path since before the app's JVM started
 * (evidence.ts `firstSeen`), each folder whole only when unchanged since then; the caller
 * saves the result before the build starts, so that a run killed mid-build still leaves it.
 * The histories of the folders scanned earlier are checked against their stamps now.
 * What cannot be read now is named after the build.
 */
export async function baselineOf(index: ClassIndex, dirs: readonly string[], sessionId: string, appStart: AppStart): Promise<Baseline> {
  const sameSession = index.sessionId === sessionId;
  const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : [...dirs];
  if (sameSession && toScan.length === 0)
    return { baseline: index, scanned: [], unseen: [], whole: wholeBefore(index.folderHistory, () => false) };
  const start = appStart.kind === 'known' ? { startMs: appStart.startMs, errorMs: appStart.errorMs } : undefined;
  const { index: baseline, unreadableDirs } = await detectChanges(sameSession ? index : forSession(index, sessionId), toScan, {
    judge: (file) => {
      const evidence = firstSeen(file, start);
      return evidence === EVIDENCE.preStart ? { kind: 'live', evidence } : { kind: 'verify', by: 'once', liveUnknown: true };
    },
    history: { kind: 'first', start },
  });
  const fresh = (folder: string) => toScan.some((dir) => folder === dir || folder.startsWith(dir + path.sep));
  return { baseline, scanned: toScan, unseen: unreadableDirs, whole: wholeBefore(baseline.folderHistory, fresh) };
}
