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
import { isVerifiableClassName } from '../agent/protocol.js';
import type { ClassChange } from '../outcome/facts.js';

/** Numbers per row in {@link ClassIndex.stamps}: size (bytes), mtimeMs, ctimeMs, inode. */
export const STAMP_FIELDS = 4;
/** Bytes per row in {@link ClassIndex.shas} (a raw SHA-256). */
export const SHA_BYTES = 32;

/**
 * Every class file under the class output directories `dirs`, with its stamp and SHA-256.
 * Row `i` is `paths[i]`, found under `dirs[dirOf[i]]`, with stamp
 * `stamps[4i .. 4i+3]` and hash `shas[32i .. 32i+31]`.
 */
export interface ClassIndex {
  /**
   * The agent session (`sessionId`) whose live classes this index describes, or null when not
   * known: then it only saves re-hashing files whose stamp did not move.
   */
  sessionId: string | null;
  /** Class output directories covered (absolute). A covered directory may hold no file. */
  dirs: string[];
  /** Absolute path per row. */
  paths: string[];
  /** Per row, the position of its class output directory in `dirs`. */
  dirOf: Uint32Array;
  /** Per row: size in bytes, mtime and ctime in ms (with sub-ms fractions), inode number. */
  stamps: Float64Array;
  /** Per row, 32 bytes of SHA-256. */
  shas: Buffer;
  /**
   * Per row, 1 when the file's newer bytes were not proven live: `shas` then keeps the bytes
   * last proven (or first seen) and `stamps` the stamp of the newer bytes, so that the next run
   * still reports the class as changed, and knows the agent has already had its capture of them.
   */
  unproven: Uint8Array;
}

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

/** An index covering nothing. */
export function emptyIndex(sessionId: string | null = null): ClassIndex {
  return {
    sessionId,
    dirs: [],
    paths: [],
    dirOf: new Uint32Array(0),
    stamps: new Float64Array(0),
    shas: Buffer.alloc(0),
    unproven: new Uint8Array(0),
  };
}

/** How long synchronous scanning and hashing may run before the event loop gets a turn, in ms. */
export const SLICE_MS = 100;

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

/** Reused by {@link hashPaced}: one buffer for every read instead of one per class file. */
const readBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * SHA-256 of a file's bytes (32 bytes), read in 64 KiB pieces with a turn for the event loop
 * whenever `pacer` says so; undefined when it vanished or cannot be read.
 */
async function hashPaced(file: string, pacer: Pacer): Promise<Buffer | undefined> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const hash = createHash('sha256');
    for (;;) {
      const read = fs.readSync(fd, readBuffer, 0, readBuffer.length, null);
      if (read === 0) break;
      hash.update(readBuffer.subarray(0, read));
      if (read === readBuffer.length) await pacer.turn();
    }
    return hash.digest();
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Gives the event loop a turn once synchronous work has run for {@link SLICE_MS} ms. */
class Pacer {
  private since = performance.now();

  async turn(): Promise<void> {
    if (performance.now() - this.since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/**
 * Folder by folder below `dir` (absolute, normalised): the names of its entries ending in
 * `.class` that are files or symbolic links. Folders reached through a symbolic link are not
 * entered (no cycles); unreadable folders are skipped.
 */
function* classFolders(dir: string): Generator<{ folder: string; names: string[] }> {
  const folders = [dir];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    const names: string[] = [];
    for (const entry of entries) {
      if (entry.isDirectory()) folders.push(folder + path.sep + entry.name);
      else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith('.class')) names.push(entry.name);
    }
    yield { folder, names };
  }
}

/** The stamp of a class file (through a symbolic link), or undefined when it is gone or not a regular file. */
function statClassFile(file: string): fs.Stats | undefined {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat?.isFile() ? stat : undefined;
}

/** Grows the columns of a new index row by row. */
class IndexBuilder {
  count = 0;
  private paths: string[] = [];
  private dirOf: Uint32Array;
  private stamps: Float64Array;
  private shas: Buffer;
  private unproven: Uint8Array;

  constructor(
    private readonly sessionId: string | null,
    private readonly dirs: string[],
    capacity: number,
  ) {
    this.dirOf = new Uint32Array(capacity);
    this.stamps = new Float64Array(capacity * STAMP_FIELDS);
    this.shas = Buffer.alloc(capacity * SHA_BYTES);
    this.unproven = new Uint8Array(capacity);
  }

  /** Appends row `row` of `from` (path string, stamp and hash shared, not re-read). */
  copy(from: ClassIndex, row: number, dirNo: number): void {
    const at = this.grow();
    this.paths.push(from.paths[row]!);
    this.dirOf[at] = dirNo;
    this.stamps.set(from.stamps.subarray(row * STAMP_FIELDS, (row + 1) * STAMP_FIELDS), at * STAMP_FIELDS);
    from.shas.copy(this.shas, at * SHA_BYTES, row * SHA_BYTES, (row + 1) * SHA_BYTES);
    this.unproven[at] = from.unproven[row]!;
  }

  add(file: string, dirNo: number, stat: fs.Stats, sha: Buffer): void {
    const at = this.grow();
    this.paths.push(file);
    this.dirOf[at] = dirNo;
    const s = at * STAMP_FIELDS;
    this.stamps[s] = stat.size;
    this.stamps[s + 1] = stat.mtimeMs;
    this.stamps[s + 2] = stat.ctimeMs;
    this.stamps[s + 3] = stat.ino;
    sha.copy(this.shas, at * SHA_BYTES);
  }

  /** The position of the next row, with room for it. */
  private grow(): number {
    if (this.count === this.dirOf.length) {
      const capacity = Math.max(64, this.dirOf.length * 2);
      const dirOf = new Uint32Array(capacity);
      dirOf.set(this.dirOf);
      const stamps = new Float64Array(capacity * STAMP_FIELDS);
      stamps.set(this.stamps);
      const shas = Buffer.alloc(capacity * SHA_BYTES);
      this.shas.copy(shas);
      const unproven = new Uint8Array(capacity);
      unproven.set(this.unproven);
      [this.dirOf, this.stamps, this.shas, this.unproven] = [dirOf, stamps, shas, unproven];
    }
    return this.count++;
  }

  /** The index as built: views on the columns, not copies (the capacity was sized to the base). */
  finish(): ClassIndex {
    return {
      sessionId: this.sessionId,
      dirs: this.dirs,
      paths: this.paths,
      dirOf: this.dirOf.subarray(0, this.count),
      stamps: this.stamps.subarray(0, this.count * STAMP_FIELDS),
      shas: this.shas.subarray(0, this.count * SHA_BYTES),
      unproven: this.unproven.subarray(0, this.count),
    };
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
