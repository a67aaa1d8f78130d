/** The folder table of the class index: the next scan takes an unchanged folder's entries from it. */
import type fs from 'node:fs';
import { COARSE_CLOCK_MS } from './evidence.js';

/**
 * The folders a scan listed, in listing order. A folder's stamp moves only when an entry is added,
 * removed or renamed (files are still each looked at). Folder `f` is `paths[f]`, stamp
 * `stamps[3f .. 3f+2]` (mtimeMs, ctimeMs, inode; NaN: not trusted), in `parent[f]`; its rows are
 * `firstRow[f]` onwards, `rowCount[f]` of them; `unlisted[f]` names ('/'-separated) its other files.
 */
export interface FolderTable {
  paths: string[];
  stamps: Float64Array;
  parent: Uint32Array;
  firstRow: Uint32Array;
  rowCount: Uint32Array;
  unlisted: string[];
}

/** Numbers per folder in {@link FolderTable.stamps}: mtimeMs, ctimeMs, inode. */
export const FOLDER_STAMP_FIELDS = 3;
/** {@link FolderTable.parent} of a class output directory. */
export const NO_PARENT = 0xffffffff;

/** A folder table listing nothing. */
export function noFolders(): FolderTable {
  return {
    paths: [],
    stamps: new Float64Array(0),
    parent: new Uint32Array(0),
    firstRow: new Uint32Array(0),
    rowCount: new Uint32Array(0),
    unlisted: [],
  };
}

/** Grows a {@link FolderTable} folder by folder. */
export class FolderTableBuilder {
  private readonly paths: string[] = [];
  private readonly stamps: number[] = [];
  private readonly parent: number[] = [];
  private readonly firstRow: number[] = [];
  private readonly rowCount: number[] = [];
  private readonly unlisted: string[] = [];

  /** Appends a folder (`stamp`: mtimeMs, ctimeMs, inode, or undefined when not to be trusted). @returns its number */
  add(
    folder: string,
    stamp: readonly [number, number, number] | undefined,
    parent: number,
    firstRow: number,
    rowCount: number,
    unlisted: string,
  ): number {
    this.paths.push(folder);
    this.stamps.push(...(stamp ?? [Number.NaN, Number.NaN, Number.NaN]));
    this.parent.push(parent);
    this.firstRow.push(firstRow);
    this.rowCount.push(rowCount);
    this.unlisted.push(unlisted);
    return this.paths.length - 1;
  }

  finish(): FolderTable {
    return {
      paths: this.paths,
      stamps: Float64Array.from(this.stamps),
      parent: Uint32Array.from(this.parent),
      firstRow: Uint32Array.from(this.firstRow),
      rowCount: Uint32Array.from(this.rowCount),
      unlisted: this.unlisted,
    };
  }
}

/** A folder's mtimeMs, ctimeMs and inode. */
export type FolderStamp = readonly [number, number, number];

/**
 * The stamp of a folder read at `listedAtMs` (epoch ms, before the stat), or undefined when it
 * changed so shortly before that the coarse clock could hide a later change (evidence.ts), or its
 * stamps are whole seconds: then it is listed again next time.
 */
export function folderStamp(stat: fs.Stats, listedAtMs: number): FolderStamp | undefined {
  const settled = listedAtMs - COARSE_CLOCK_MS;
  const wholeSeconds = stat.mtimeMs % 1000 === 0 && stat.ctimeMs % 1000 === 0;
  return !wholeSeconds && stat.mtimeMs < settled && stat.ctimeMs < settled ? [stat.mtimeMs, stat.ctimeMs, stat.ino] : undefined;
}

/**
 * The folders of an index's table, looked up by path: the ones whose stamp is still the one the
 * table has, their rows, and their other entries as the table lists them.
 */
export class KnownFolders {
  private readonly number: Map<string, number>;
  /** Per folder, its folders in the order a scan pushes them (the reverse of the order it listed them). */
  private readonly children: number[][];

  constructor(private readonly table: FolderTable) {
    this.number = new Map(table.paths.map((folder, f) => [folder, f]));
    this.children = table.paths.map(() => []);
    for (let f = table.paths.length - 1; f >= 0; f -= 1) if (table.parent[f] !== NO_PARENT) this.children[table.parent[f]!]!.push(f);
  }

  /** The number of `folder` when the table has it with `stamp` (never for an untrusted stamp); else undefined. */
  unchanged(folder: string, stamp: FolderStamp | undefined): number | undefined {
    const f = this.number.get(folder);
    if (f === undefined || stamp === undefined) return undefined;
    const s = f * FOLDER_STAMP_FIELDS;
    const { stamps } = this.table;
    return stamps[s] === stamp[0] && stamps[s + 1] === stamp[1] && stamps[s + 2] === stamp[2] ? f : undefined;
  }

  /** Folder `f`'s rows in the index: `[start, end)`. */
  rows(f: number): [number, number] {
    const start = this.table.firstRow[f]!;
    return [start, start + this.table.rowCount[f]!];
  }

  /** Folder `f`'s entries other than its rows: class files with no row (`names`), other files, and its folders. */
  listing(f: number): { names: string[]; others: string[]; subfolders: string[] } {
    const unlisted = this.table.unlisted[f] === '' ? [] : this.table.unlisted[f]!.split('/');
    return {
      names: unlisted.filter((n) => n.endsWith('.class')),
      others: unlisted.filter((n) => !n.endsWith('.class')),
      subfolders: this.children[f]!.map((c) => this.table.paths[c]!),
    };
  }
}
