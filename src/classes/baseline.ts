/**
 * The baseline of a build: the record before it, the class index of this agent session with
 * the evidence of each file (evidence.ts) and the history of each folder (history.ts). Pure over
 * the class index (state/ reads and writes it).
 */
import path from 'node:path';
import type { AppStart } from '../outcome/facts.js';
import { forSession, type ClassIndex } from './columns.js';
import { EVIDENCE, firstSeen } from './evidence.js';
import { breakHistories, wholeBefore } from './history.js';
import { detectChanges } from './snapshot.js';

/** The record before a build. */
export interface Baseline {
  baseline: ClassIndex;
  /** Save the baseline before the build: it was scanned now, or a folder's history was found broken. */
  save: boolean;
  /** The class output directories scanned now. */
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
 * The histories of the folders scanned earlier are checked against their stamps now, unless the
 * hold has been ours since the record was saved (`heldSince`: a failed build left it held, and
 * what it wrote is this build's); a folder found no longer whole is recorded so (then `save`).
 * What cannot be read now is named after the build.
 */
export async function baselineOf(
  index: ClassIndex,
  dirs: readonly string[],
  sessionId: string,
  appStart: AppStart,
  heldSince = false,
): Promise<Baseline> {
  const sameSession = index.sessionId === sessionId;
  const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : [...dirs];
  if (sameSession && toScan.length === 0) {
    const whole = wholeBefore(index.folderHistory, () => heldSince);
    return { baseline: index, save: breakHistories(index.folderHistory, whole), scanned: [], unseen: [], whole };
  }
  const start = appStart.kind === 'known' ? { startMs: appStart.startMs, errorMs: appStart.errorMs } : undefined;
  const { index: baseline, unreadableDirs } = await detectChanges(sameSession ? index : forSession(index, sessionId), toScan, {
    judge: (file) => {
      const evidence = firstSeen(file, start);
      return evidence === EVIDENCE.preStart ? { kind: 'live', evidence } : { kind: 'verify', by: 'once', liveUnknown: true };
    },
    history: { kind: 'first', start },
  });
  const fresh = (folder: string) => heldSince || toScan.some((dir) => folder === dir || folder.startsWith(dir + path.sep));
  const whole = wholeBefore(baseline.folderHistory, fresh);
  breakHistories(baseline.folderHistory, whole);
  return { baseline, save: true, scanned: toScan, unseen: unreadableDirs, whole };
}
