/**
 * The baseline of a build: the record before it, the class index of this agent session with
 * the evidence of each file (evidence.ts) and the history of each folder (history.ts). Pure over
 * the class index (state/ reads and writes it).
 */
import path from 'node:path';
import type { AppStart } from '../outcome/facts.js';
import { forSession, sameStampAsRow, STAMP_FIELDS, type ClassIndex } from './columns.js';
import { isLive, verdictOf } from './evidence.js';
import { statClassFile, UNREADABLE } from './scan.js';
import { type JvmPaths, Placement } from './placement.js';
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

/** The pre-start facts of a file when the JVM's start is not known: nothing is older than it. */
const UNKNOWN_START = {
  start: undefined,
  linkCtimeMs: Number.POSITIVE_INFINITY,
  placed: false,
  onClassPath: false,
  earlier: 'unknown',
  elsewhere: false,
  classPathKnown: false,
} as const;

/**
 * The record before this build: `index` when it is of this agent session and covers `dirs`. For
 * no record (missing, corrupt, another session) and uncovered directories, files are scanned now,
 * each live only when at its path, as the JVM resolves it through its class path (`paths`), since
 * before the JVM started (evidence.ts, kind `pre-start`; placement.ts); the
 * caller saves that before the build, so a run killed mid-build leaves it. Older folders' histories
 * are checked against their stamps, unless the hold has been ours since the save (`heldSince`).
 */
export async function baselineOf(
  index: ClassIndex,
  dirs: readonly string[],
  sessionId: string,
  appStart: AppStart,
  paths: JvmPaths,
  heldSince = false,
): Promise<Baseline> {
  const sameSession = index.sessionId === sessionId;
  const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : [...dirs];
  if (sameSession && toScan.length === 0) {
    const whole = wholeBefore(index.folderHistory, () => heldSince);
    return { baseline: index, save: breakHistories(index.folderHistory, whole), scanned: [], unseen: [], whole };
  }
  const start = appStart.kind === 'known' ? { startMs: appStart.startMs, errorMs: appStart.errorMs } : undefined;
  const placement = start === undefined ? undefined : new Placement(start, paths);
  const { index: baseline, unreadableDirs } = await detectChanges(sameSession ? index : forSession(index, sessionId), toScan, {
    judge: (file) =>
      verdictOf({
        ctimeMs: file.ctimeMs,
        byBuild: false,
        newInSession: false,
        sight: placement?.sight(file.file, file.dir, file.linkCtimeMs) ?? UNKNOWN_START,
        othersMoved: file.othersMoved === true,
      }),
    history: { kind: 'first', start },
    watched: paths.watched,
  });
  const fresh = (folder: string) => heldSince || toScan.some((dir) => folder === dir || folder.startsWith(dir + path.sep));
  const whole = wholeBefore(baseline.folderHistory, fresh);
  breakHistories(baseline.folderHistory, whole);
  return { baseline, save: true, scanned: toScan, unseen: unreadableDirs, whole };
}

/**
 * The class files of `baseline` not live by it that have their row's stamp just before the build
 * (the hold taken), by path: the ctime since which they hold their row's bytes (epoch ms). A build
 * that writes the same bytes again changes nothing the agent's watcher saw before it
 * (evidence.ts, precondition `noticed`).
 */
export function steadyBefore(baseline: ClassIndex): Map<string, number> {
  const steady = new Map<string, number>();
  baseline.paths.forEach((file, row) => {
    if (baseline.gone[row] === 1 || isLive(baseline.evidence[row]!)) return;
    const stat = statClassFile(file);
    if (stat !== undefined && stat !== UNREADABLE && sameStampAsRow(baseline, row, stat))
      steady.set(file, baseline.stamps[row * STAMP_FIELDS + 2]!);
  });
  return steady;
}
