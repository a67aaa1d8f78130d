/**
 * Each folder's past in the agent session, for evidence.ts's rule that a class file is new to the
 * JVM only when its path held no class in the session. A folder's history is **whole** when every
 * class file and folder it held in the session is in the record. It is whole when first listed
 * only if unchanged since the JVM started; between runs only while its stamp stays; after a build
 * as before it (a new folder as its parent). A folder gone or unlistable makes its parent not whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { wholeSinceStart, type StartCut } from './evidence.js';
import type { FolderStamp } from './folders.js';

/** One folder's history in the record. */
export interface FolderHistory {
  /** Its mtimeMs, ctimeMs and inode when it was listed; undefined when it changed too close to that to be compared. */
  stamp: FolderStamp | undefined;
  /** Every class file and folder it has held since the agent session began is in the record. */
  whole: boolean;
}

/** Folder histories by absolute folder path. */
export type FolderHistories = Map<string, FolderHistory>;

/**
 * How a scan judges the folders it lists. `first`: no record yet; whole when unchanged since the
 * JVM started (`start` unknown: never). `after`: after a build, as `before` says; a folder the
 * build made is as whole as its parent.
 */
export type HistoryRule = { kind: 'first'; start: StartCut | undefined } | { kind: 'after'; before: ReadonlyMap<string, boolean> };

/**
 * Which folders of `histories` are whole just before a build: a folder listed by this run's own
 * scan before the build (`fresh`) as that scan found it; any other only when its stamp is still
 * the one recorded (one stat per folder), else not. Never throws for the file system.
 */
export function wholeBefore(histories: FolderHistories, fresh: (folder: string) => boolean): Map<string, boolean> {
  const whole = new Map<string, boolean>();
  for (const [folder, history] of histories) {
    const { stamp } = history;
    whole.set(folder, history.whole && (fresh(folder) || (stamp !== undefined && sameStamp(folder, stamp))));
  }
  return whole;
}

/**
 * Marks in `histories` (in place) the folders `whole` finds no longer whole, for the record saved
 * before a build: after a failed build the next run takes what changed under the hold as its own.
 * @returns whether any folder was.
 */
export function breakHistories(histories: FolderHistories, whole: ReadonlyMap<string, boolean>): boolean {
  let broken = false;
  for (const [folder, history] of histories) {
    if (!history.whole || whole.get(folder) !== false) continue;
    histories.set(folder, { ...history, whole: false });
    broken = true;
  }
  return broken;
}

/** True when `a` and `b` hold the same folders with the same stamps and flags. */
export function sameHistories(a: FolderHistories, b: FolderHistories): boolean {
  if (a.size !== b.size) return false;
  for (const [folder, x] of a) {
    const y = b.get(folder);
    if (y === undefined || x.whole !== y.whole || String(x.stamp) !== String(y.stamp)) return false;
  }
  return true;
}

function sameStamp(folder: string, stamp: FolderStamp): boolean {
  try {
    const stat = fs.statSync(folder);
    return stat.isDirectory() && stat.mtimeMs === stamp[0] && stat.ctimeMs === stamp[1] && stat.ino === stamp[2];
  } catch {
    return false;
  }
}

/** The folder histories one scan leaves: the folders it listed, judged by its {@link HistoryRule}, and the rest of the base. */
export class HistoryBuilder {
  private readonly listedNow = new Map<string, FolderHistory>();
  private readonly unlistable: string[] = [];
  /** `after`: whole after the build, per folder asked. */
  private readonly after = new Map<string, boolean>();

  /**
   * @param base the folder histories of the record scanned against.
   * @param rule how the folders listed are judged.
   * @param roots the class output directories scanned (absolute).
   */
  constructor(
    private readonly base: FolderHistories,
    private readonly rule: HistoryRule,
    private readonly roots: readonly string[],
  ) {}

  /** A folder the scan listed (its parent, when the scan walks, listed before it), with its stat and its stamp as kept. */
  listed(folder: string, stat: fs.Stats, stamp: FolderStamp | undefined): void {
    const { rule } = this;
    if (rule.kind === 'after') {
      this.listedNow.set(folder, { stamp, whole: this.wholeAfter(folder) });
      return;
    }
    this.listedNow.set(folder, { stamp, whole: wholeSinceStart(stat.ctimeMs, rule.start) });
  }

  /** A folder the scan could not list: its files are not in the record, so its history is not whole. */
  unreadable(folder: string): void {
    this.listedNow.set(folder, { stamp: undefined, whole: false });
    this.unlistable.push(folder);
  }

  /** `after`: a class file with no row in `folder` is new in the agent session (the folder's history is whole). */
  newIn(folder: string): boolean {
    return this.rule.kind === 'after' && this.wholeAfter(folder);
  }

  /** The histories after the scan: those listed, the base's others kept where not looked at; gone ones hand theirs up. */
  finish(looked: (folder: string) => boolean): FolderHistories {
    const result: FolderHistories = new Map(this.listedNow);
    const hidden = (folder: string) => this.unlistable.some((u) => folder.startsWith(u + path.sep));
    for (const [folder, history] of this.base) {
      if (result.has(folder)) continue;
      if (!looked(folder) || hidden(folder)) result.set(folder, history);
      else if (!history.whole) this.breakAbove(result, folder);
    }
    return result;
  }

  /** The nearest folder above `folder` that `result` has is no longer whole. */
  private breakAbove(result: FolderHistories, folder: string): void {
    for (let above = path.dirname(folder); above !== path.dirname(above); above = path.dirname(above)) {
      const history = result.get(above);
      if (history === undefined) continue;
      if (history.whole) result.set(above, { ...history, whole: false });
      return;
    }
  }

  private wholeAfter(folder: string): boolean {
    const known = this.after.get(folder);
    if (known !== undefined) return known;
    const rule = this.rule as Extract<HistoryRule, { kind: 'after' }>;
    const parent = path.dirname(folder);
    const whole = rule.before.get(folder) ?? (!this.roots.includes(folder) && parent !== folder && this.wholeAfter(parent));
    this.after.set(folder, whole);
    return whole;
  }
}
