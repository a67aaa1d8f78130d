/**
 * Change detection for class output directories. A class file "changed" when its bytes
 * differ from the class index (what the agent had live as of the last build whose ok it
 * acknowledged); the stat check (size, mtime, ctime, inode) is only a pre-filter, so a
 * same-size, same-mtime rewrite with new bytes still counts (a write always moves ctime).
 *
 * The index is kept as columns with no object per file, and a run scans the class output
 * directories once, after the build: at 50,000 class files, objects per file and a second
 * stat pass were most of a run's time and memory. Reads are synchronous: for thousands of
 * small files that is many times faster than as many concurrent promises. The user's class
 * files are only ever read.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { IndexBuilder, SHA_BYTES, STAMP_FIELDS, type ClassIndex } from './columns.js';
import { classFolders, hashPaced, Pacer, statClassFile } from './scan.js';
import { isVerifiableClassName } from '../agent/protocol.js';
import type { ClassChange } from '../outcome/facts.js';

/** The difference between the class index and the class files on disk. */
export interface ChangeSet {
  changed: ClassChange[];
  added: ClassChange[];
  removed: ClassChange[];
  /** Class files found in the scanned directories. */
  total: number;
}

/** What {@link detectChanges} found. */
export interface Detection {
  changes: ChangeSet;
  /** The index as of now: the scanned directories as found, other rows of the base kept. */
  index: ClassIndex;
  /** False when `index` holds exactly what the base did (then it need not be written). */
  dirty: boolean;
  /** Class files that exist but could not be read: not checked, their rows kept as they were. */
  unreadable: string[];
}

/**
 * Scans the class output directories `dirs` (one stat per class file) and compares them with
 * `base`: a file whose stamp moved is hashed, and is "changed" only when its bytes differ from
 * the base's. Files under a directory `base` does not cover are "added" (all hashed). Rows of
 * `base` under directories not in `dirs` are carried over as they are; so is the row of a file
 * that cannot be read (listed in `unreadable`: its change is unknown, not a removal). `dirs`
 * must not nest. Symbolic links to class files are followed, links to folders are not. The
 * work yields to the event loop every {@link SLICE_MS} ms, so timers keep running (the run
 * lock's refresh) however large the tree. Never throws for the file system.
 * @returns the change set (each list sorted by class name), the new index (with `base`'s
 *   sessionId), whether it differs from `base`, and the class files that could not be read.
 */
export async function detectChanges(base: ClassIndex, dirs: readonly string[]): Promise<Detection> {
  const scanned = [...new Set(dirs.map((d) => path.resolve(d)))];
  const scannedSet = new Set(scanned);
  const allDirs = [...new Set([...base.dirs, ...scanned])];
  const dirNumber = new Map(allDirs.map((d, i) => [d, i]));
  const builder = new IndexBuilder(base.sessionId, allDirs, base.paths.length + 64);
  const changes: ChangeSet = { changed: [], added: [], removed: [], total: 0 };
  const unreadable: string[] = [];
  const pacer = new Pacer();
  let dirty = allDirs.length !== base.dirs.length;

  const rowOf = new Map<string, number>();
  for (let row = 0; row < base.paths.length; row += 1) rowOf.set(base.paths[row]!, row);
  const seen = new Uint8Array(base.paths.length);

  for (const dir of scanned) {
    const dirNo = dirNumber.get(dir)!;
    for (const { folder, names } of classFolders(dir)) {
      await pacer.turn();
      for (const name of names) {
        const file = folder + path.sep + name;
        const stat = statClassFile(file);
        if (stat === undefined) continue;
        const row = rowOf.get(file);
        if (row !== undefined) seen[row] = 1;
        const same = row !== undefined && sameStamp(base.stamps, row, stat);
        if (same && base.unproven[row] === 0) {
          builder.copy(base, row, dirNo);
          changes.total += 1;
          continue;
        }
        const sha = await hashPaced(file, pacer);
        if (sha === undefined) {
          if (!fs.existsSync(file)) {
            if (row !== undefined) seen[row] = 0; // vanished: a removal
            continue;
          }
          unreadable.push(file);
          if (row !== undefined) builder.copy(base, row, dirNo);
          changes.total += 1;
          continue;
        }
        const differs = row !== undefined && !sha.equals(base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES));
        dirty = true;
        builder.add(file, dirNo, stat, sha);
        changes.total += 1;
        if (row === undefined) changes.added.push(describe(file, dir, { after: sha.toString('hex') }));
        // Same stamp: still the bytes an earlier run built and could not prove.
        else if (differs)
          changes.changed.push(
            describe(file, dir, { before: shaHex(base, row), after: sha.toString('hex'), ...(same ? { settled: true } : {}) }),
          );
      }
    }
  }
  for (let row = 0; row < base.paths.length; row += 1) {
    const dir = base.dirs[base.dirOf[row]!]!;
    if (seen[row] === 1) continue;
    if (!scannedSet.has(dir)) {
      builder.copy(base, row, dirNumber.get(dir)!);
      continue;
    }
    dirty = true;
    if (!fs.existsSync(base.paths[row]!)) changes.removed.push(describe(base.paths[row]!, dir, { before: shaHex(base, row) }));
  }
  for (const list of [changes.changed, changes.added, changes.removed]) list.sort((a, b) => compare(a.className, b.className));
  return { changes, index: builder.finish(), dirty, unreadable };
}

/**
 * Marks the rows of `paths` in `index` as not proven, in place: each keeps its new stamp, takes
 * back the hash `base` has for it (the bytes last proven live) and gets its `unproven` flag, so
 * the next run reports the class as changed again, as `settled` while its bytes stay the same.
 * Paths missing from either index are skipped.
 */
export function markUnproven(index: ClassIndex, base: ClassIndex, paths: ReadonlySet<string>): void {
  if (paths.size === 0) return;
  const baseRow = new Map<string, number>();
  base.paths.forEach((file, row) => {
    if (paths.has(file)) baseRow.set(file, row);
  });
  index.paths.forEach((file, row) => {
    const from = baseRow.get(file);
    if (from === undefined) return;
    base.shas.copy(index.shas, row * SHA_BYTES, from * SHA_BYTES, (from + 1) * SHA_BYTES);
    index.unproven[row] = 1;
  });
}

/** Every `.class` file below `dir` (absolute paths; symbolic links to files followed); none when it is missing. */
export function listClassFiles(dir: string): string[] {
  const files: string[] = [];
  for (const { folder, names } of classFolders(path.resolve(dir))) {
    for (const name of names) {
      const file = folder + path.sep + name;
      if (statClassFile(file) !== undefined) files.push(file);
    }
  }
  return files;
}

/**
 * The binary class name of `file` below class output directory `dir`:
 * `dir/com/acme/Outer$Inner.class` -> `com.acme.Outer$Inner`.
 */
export function binaryClassName(dir: string, file: string): string {
  const relative = path.relative(dir, file).slice(0, -'.class'.length);
  return relative.split(path.sep).join('.');
}

/** SHA-256 of a file's bytes as lower-case hex, or undefined when it vanished or cannot be read. */
export function hashFile(file: string): string | undefined {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function describe(file: string, dir: string, hashes: { before?: string; after?: string; settled?: boolean }): ClassChange {
  const className = binaryClassName(dir, file);
  return { path: file, className, verifiable: isVerifiableClassName(className), ...hashes };
}

function shaHex(index: ClassIndex, row: number): string {
  return index.shas.toString('hex', row * SHA_BYTES, (row + 1) * SHA_BYTES);
}

function sameStamp(stamps: Float64Array, row: number, stat: fs.Stats): boolean {
  const s = row * STAMP_FIELDS;
  return stamps[s] === stat.size && stamps[s + 1] === stat.mtimeMs && stamps[s + 2] === stat.ctimeMs && stamps[s + 3] === stat.ino;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
