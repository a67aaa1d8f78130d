/**
 * Change detection for class output directories. A class file "changed" when its bytes
 * differ from before the build; the stat check (size, mtime, ctime, inode) is only a
 * pre-filter, so a same-size, same-mtime rewrite with new bytes still counts (a write always
 * moves ctime). Reads are synchronous: for thousands of small files that is many times faster
 * than as many concurrent promises. The user's class files are only ever read.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isVerifiableClassName } from '../agent/protocol.js';

/** What the stat pre-filter compares. Times in ms (with sub-ms fractions). */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** One class file in a snapshot. */
export interface ClassFileState extends FileStamp {
  /** The class output directory it was found under (absolute). */
  dir: string;
  /** SHA-256 of its bytes, lower-case hex. */
  sha256: string;
}

/** Absolute path -> state, for every `.class` file under the snapshot's directories. */
export type Snapshot = Map<string, ClassFileState>;

/** A class file whose bytes differ, appeared or disappeared. */
export interface ClassChange {
  path: string;
  /** Binary class name derived from the path below its class output directory (`com.acme.Outer$Inner`). */
  className: string;
  /** False for names the agent's VERIFY rejects (`module-info`, `package-info`, non-identifiers). */
  verifiable: boolean;
  /** SHA-256 before the build (absent for added files). */
  before?: string;
  /** SHA-256 after the build (absent for removed files). */
  after?: string;
}

/** The difference between two snapshots. */
export interface ChangeSet {
  changed: ClassChange[];
  added: ClassChange[];
  removed: ClassChange[];
  /** Class files seen after the build. */
  total: number;
  /** Files hashed to decide, for the figures in `--verbose`. */
  hashed: number;
}

/** Lists every `.class` file below `dirs` with its stamp. Missing directories are skipped. */
export function scanClassDirs(dirs: readonly string[]): Map<string, FileStamp & { dir: string }> {
  const found = new Map<string, FileStamp & { dir: string }>();
  for (const dir of dirs) {
    const walk = (folder: string): void => {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(folder, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.isFile() && entry.name.endsWith('.class') && !found.has(full)) {
          const stat = statOrUndefined(full);
          if (stat) found.set(full, { dir, ...stat });
        }
      }
    };
    walk(dir);
  }
  return found;
}

/**
 * Snapshot before the build: every class file with its hash. Hashes are taken from `index`
 * (the last run's snapshot) where the file's stamp is unchanged, else read and hashed now.
 */
export function takeSnapshot(dirs: readonly string[], index: Snapshot = new Map()): { snapshot: Snapshot; hashed: number } {
  const snapshot: Snapshot = new Map();
  let hashed = 0;
  for (const [file, stamp] of scanClassDirs(dirs)) {
    const known = index.get(file);
    let sha256 = known !== undefined && sameStamp(known, stamp) ? known.sha256 : undefined;
    if (sha256 === undefined) {
      sha256 = hashFile(file);
      hashed += 1;
    }
    if (sha256 !== undefined) snapshot.set(file, { ...stamp, sha256 });
  }
  return { snapshot, hashed };
}

/**
 * Compares the class files under `dirs` now with `before`: files whose stamp moved are hashed
 * and count as changed only when the bytes differ.
 * @returns the change set and the snapshot after the build (for the next run's index).
 */
export function diffSnapshot(before: Snapshot, dirs: readonly string[]): { changes: ChangeSet; after: Snapshot } {
  const after: Snapshot = new Map();
  const changes: ChangeSet = { changed: [], added: [], removed: [], total: 0, hashed: 0 };
  for (const [file, stamp] of scanClassDirs(dirs)) {
    const old = before.get(file);
    if (old !== undefined && sameStamp(old, stamp)) {
      after.set(file, { ...stamp, sha256: old.sha256 });
      continue;
    }
    const sha256 = hashFile(file);
    changes.hashed += 1;
    if (sha256 === undefined) continue;
    after.set(file, { ...stamp, sha256 });
    if (old === undefined) changes.added.push(describe(file, stamp.dir, { after: sha256 }));
    else if (old.sha256 !== sha256) changes.changed.push(describe(file, stamp.dir, { before: old.sha256, after: sha256 }));
  }
  for (const [file, old] of before) {
    if (!after.has(file) && !fs.existsSync(file)) changes.removed.push(describe(file, old.dir, { before: old.sha256 }));
  }
  changes.total = after.size;
  for (const list of [changes.changed, changes.added, changes.removed]) list.sort((a, b) => compare(a.className, b.className));
  return { changes, after };
}

/**
 * The binary class name of `file` below class output directory `dir`:
 * `dir/com/acme/Outer$Inner.class` -> `com.acme.Outer$Inner`.
 */
export function binaryClassName(dir: string, file: string): string {
  const relative = path.relative(dir, file).slice(0, -'.class'.length);
  return relative.split(path.sep).join('.');
}

/** SHA-256 of a file's bytes, or undefined when it vanished or cannot be read. */
export function hashFile(file: string): string | undefined {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function describe(file: string, dir: string, hashes: { before?: string; after?: string }): ClassChange {
  const className = binaryClassName(dir, file);
  return { path: file, className, verifiable: isVerifiableClassName(className), ...hashes };
}

function statOrUndefined(file: string): FileStamp | undefined {
  try {
    const stat = fs.statSync(file);
    return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino };
  } catch {
    return undefined;
  }
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
