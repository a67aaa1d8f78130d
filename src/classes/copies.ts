/**
 * Other copies of a class, for the evidence rule's `others-unmoved` (evidence.ts). The JVM runs one
 * class of each binary name, and the agent reloads a class by its name from whichever watched file
 * changed (agent ClassReloader.reloadBatch: the loaded class is found by name, wherever it was loaded
 * from). So bytes live by the record, or by their age, stay live only while no other file of their
 * binary name, in another class output directory, can have been attempted since: none changed,
 * came or went there since the record (since the JVM's start, for a file first seen). Where one
 * may have, the class is asked once: the agent's receipt is per class, so its answer covers every
 * copy. Gathered by one scan (snapshot.ts); the answers are plain facts.
 */
import path from 'node:path';
import { type ClassIndex, sameStampAsRow } from './columns.js';
import { cutOf, type StartCut } from './evidence.js';
import { linkCtimeMs, statClassFile, UNREADABLE } from './scan.js';

/** What one scan saw move: class files and folders, by absolute path. */
export class MovedCopies {
  /** Class files that changed, appeared or went away within the scan's window. */
  private readonly files = new Set<string>();
  /** Folders the scan listed, and whether their entries changed within its window (something may have come and gone). */
  private readonly folders = new Map<string, boolean>();

  /** Class file `file` changed, appeared or went away within the window. */
  file(file: string): void {
    this.files.add(file);
  }

  /** The scan listed `folder`; `moved`: its entries changed within the window. */
  folder(folder: string, moved: boolean): void {
    this.folders.set(folder, moved);
  }

  /** True when nothing moved at all (the common run): no row needs looking at. */
  get none(): boolean {
    return this.files.size === 0 && ![...this.folders.values()].some(Boolean);
  }

  /**
   * Whether a class file of the same binary name as `file` (below class output directory `dir`)
   * may have changed, come or gone in another of `index`'s directories within the window: `copy`
   * when one did (it moved there, or a `full` scan did not list its directory, which is gone: a
   * copy the record has there may have been attempted before it went); `maybe` when there is none
   * (`present`: the paths with a row) but the nearest folder on its way that the scan listed had
   * its entries changed (one may have come and gone: a build that makes its package folders anew).
   * A copy `watched` says the agent does not watch is left out.
   */
  movedBesides(
    index: ClassIndex,
    present: ReadonlySet<string>,
    file: string,
    dir: string,
    full: boolean,
    watched?: (file: string) => boolean | null,
  ): 'copy' | 'maybe' | undefined {
    const relative = path.relative(dir, file);
    let maybe = false;
    for (const other of index.dirs) {
      if (other === dir) continue;
      const copy = path.join(other, relative);
      // The agent reloads only from files it watches: a copy where it does not watch cannot have replaced the class.
      if (watched?.(copy) === false) continue;
      if (this.files.has(copy)) return 'copy';
      if (full && !this.folders.has(other)) {
        if (present.has(copy)) return 'copy';
        continue;
      }
      if (present.has(copy)) continue;
      for (let folder = path.dirname(copy); ; folder = path.dirname(folder)) {
        const moved = this.folders.get(folder);
        if (moved !== undefined) {
          maybe ||= moved;
          break;
        }
        if (folder === other || path.dirname(folder) === folder) break;
      }
    }
    return maybe ? 'maybe' : undefined;
  }
}

/**
 * Whether a class file of the same binary name as `file` (below class output directory `dir`) in
 * another folder of `others` (the record's class output directories and the JVM's class path
 * folders) changed, came or went since the record, for a run that reads the record without a scan
 * of those folders (`verify`): one the record has whose stamp is not its row's, that is gone, or
 * that is there against a tombstone; one it does not have that is there and changed since the
 * JVM's `start` (any, when the start is not known). A copy `watched` says the agent does not watch
 * is left out. One stat per folder. `rows`: `index`'s rows by path.
 */
export function movedSinceRecord(
  index: ClassIndex,
  rows: ReadonlyMap<string, number>,
  { file, dir, others }: { file: string; dir: string; others: readonly string[] },
  start: StartCut | undefined,
  watched?: (file: string) => boolean | null,
): boolean {
  const relative = path.relative(dir, file);
  for (const other of new Set(others)) {
    if (other === dir) continue;
    const copy = path.join(other, relative);
    if (watched?.(copy) === false) continue;
    const stat = statClassFile(copy);
    const row = rows.get(copy);
    if (row === undefined || index.gone[row] === 1) {
      if (stat === undefined) continue;
      if (stat === UNREADABLE || row !== undefined || start === undefined) return true;
      if (Math.max(stat.ctimeMs, linkCtimeMs(copy, stat)) >= cutOf(start)) return true;
      continue;
    }
    if (stat === undefined || stat === UNREADABLE || !sameStampAsRow(index, row, stat)) return true;
  }
  return false;
}
