/**
 * The class index as columns: every class file under the class output directories, with its
 * stamp, SHA-256 and the evidence that makes its bytes live (evidence.ts), and no object per
 * file (at 50,000 class files, objects per file were most of a run's memory). state/store.ts
 * saves it; snapshot.ts builds it.
 */
import type fs from 'node:fs';
import { EVIDENCE } from './evidence.js';
import { noFolders, type FolderTable } from './folders.js';
import type { FolderHistories } from './history.js';

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
  /** Per row, 32 bytes of SHA-256: the bytes on disk at the last scan. */
  shas: Buffer;
  /** Per row, what makes those bytes live, or that they are not known to be (an {@link EVIDENCE} code). */
  evidence: Uint8Array;
  /**
   * Per row, 1 for a tombstone: the file was removed in this agent session, and its row keeps the
   * last bytes and evidence, so that a class that comes back is checked against what the app has.
   */
  gone: Uint8Array;
  /**
   * Per path, earlier bytes seen on disk in this agent session (SHA-256 hex, latest first, at most
   * {@link HISTORY_MAX}): a VERIFY `mismatch` naming one of them means "not captured yet".
   */
  history: Map<string, string[]>;
  /** The folders the scan that made this index listed (see {@link FolderTable}). */
  folders: FolderTable;
  /** What the record knows of each folder's past in this agent session (history.ts): whether a class file without a row is new. */
  folderHistory: FolderHistories;
}

/** How many earlier hashes a path keeps in {@link ClassIndex.history}. */
export const HISTORY_MAX = 4;

/** An index covering nothing. */
export function emptyIndex(sessionId: string | null = null): ClassIndex {
  return {
    sessionId,
    dirs: [],
    paths: [],
    dirOf: new Uint32Array(0),
    stamps: new Float64Array(0),
    shas: Buffer.alloc(0),
    evidence: new Uint8Array(0),
    gone: new Uint8Array(0),
    history: new Map(),
    folders: noFolders(),
    folderHistory: new Map(),
  };
}

/**
 * `index` for a new agent session `sessionId`: its evidence is void (every row `unknown`), its
 * tombstones, earlier hashes and folder histories dropped. The stamps and hashes still spare
 * re-hashing files whose stamp did not move.
 */
export function forSession(index: ClassIndex, sessionId: string): ClassIndex {
  const count = index.paths.length;
  const builder = new IndexBuilder(sessionId, index.dirs, count);
  // Rows move up over the tombstones dropped; a folder's rows hold none (tombstones are kept after them).
  const keptBefore = new Uint32Array(count + 1);
  for (let row = 0; row < count; row += 1) {
    keptBefore[row + 1] = keptBefore[row]! + (index.gone[row] === 1 ? 0 : 1);
    if (index.gone[row] === 1) continue;
    builder.copy(index, row, index.dirOf[row]!);
    builder.setEvidence(builder.count - 1, EVIDENCE.unknown);
  }
  const folders = { ...index.folders, firstRow: index.folders.firstRow.map((first) => keptBefore[first]!) };
  return builder.finish(folders);
}

/** Grows the columns of a new index row by row. */
export class IndexBuilder {
  count = 0;
  private paths: string[] = [];
  private dirOf: Uint32Array;
  private stamps: Float64Array;
  private shas: Buffer;
  private evidence: Uint8Array;
  private gone: Uint8Array;
  private readonly history = new Map<string, string[]>();

  constructor(
    private readonly sessionId: string | null,
    private readonly dirs: string[],
    capacity: number,
  ) {
    this.dirOf = new Uint32Array(capacity);
    this.stamps = new Float64Array(capacity * STAMP_FIELDS);
    this.shas = Buffer.alloc(capacity * SHA_BYTES);
    this.evidence = new Uint8Array(capacity);
    this.gone = new Uint8Array(capacity);
  }

  /** Appends row `row` of `from` (path string, stamp, hash, evidence and history shared, not re-read). */
  copy(from: ClassIndex, row: number, dirNo: number): void {
    const at = this.grow();
    const file = from.paths[row]!;
    this.paths.push(file);
    this.dirOf[at] = dirNo;
    this.stamps.set(from.stamps.subarray(row * STAMP_FIELDS, (row + 1) * STAMP_FIELDS), at * STAMP_FIELDS);
    from.shas.copy(this.shas, at * SHA_BYTES, row * SHA_BYTES, (row + 1) * SHA_BYTES);
    this.evidence[at] = from.evidence[row]!;
    this.gone[at] = from.gone[row]!;
    const history = from.history.get(file);
    if (history !== undefined) this.history.set(file, history);
  }

  /** Appends rows `start .. end - 1` of `from` as they are, in one go (same directory numbers). */
  copyRows(from: ClassIndex, start: number, end: number): void {
    this.reserve(end - start);
    const at = this.count;
    for (let row = start; row < end; row += 1) this.paths.push(from.paths[row]!);
    this.dirOf.set(from.dirOf.subarray(start, end), at);
    this.stamps.set(from.stamps.subarray(start * STAMP_FIELDS, end * STAMP_FIELDS), at * STAMP_FIELDS);
    from.shas.copy(this.shas, at * SHA_BYTES, start * SHA_BYTES, end * SHA_BYTES);
    this.evidence.set(from.evidence.subarray(start, end), at);
    this.gone.set(from.gone.subarray(start, end), at);
    if (from.history.size > 0) {
      for (let row = start; row < end; row += 1) {
        const history = from.history.get(from.paths[row]!);
        if (history !== undefined) this.history.set(from.paths[row]!, history);
      }
    }
    this.count += end - start;
  }

  /** Appends a row for `file` as scanned now. */
  add(file: string, dirNo: number, stat: fs.Stats, sha: Buffer, evidence: number, history: string[]): void {
    const at = this.grow();
    this.paths.push(file);
    this.dirOf[at] = dirNo;
    const s = at * STAMP_FIELDS;
    this.stamps[s] = stat.size;
    this.stamps[s + 1] = stat.mtimeMs;
    this.stamps[s + 2] = stat.ctimeMs;
    this.stamps[s + 3] = stat.ino;
    sha.copy(this.shas, at * SHA_BYTES);
    this.evidence[at] = evidence;
    if (history.length > 0) this.history.set(file, history);
  }

  /** Appends a row for a file that is there but could not be read: no stamp, no bytes, nothing known. */
  addUnread(file: string, dirNo: number): void {
    const at = this.grow();
    this.paths.push(file);
    this.dirOf[at] = dirNo;
    this.evidence[at] = EVIDENCE.unknown;
  }

  setEvidence(row: number, evidence: number): void {
    this.evidence[row] = evidence;
  }

  setGone(row: number): void {
    this.gone[row] = 1;
  }

  /** The position of the next row, with room for it. */
  private grow(): number {
    this.reserve(1);
    return this.count++;
  }

  /** Room for `rows` more rows (the capacity at least doubles when it grows). */
  private reserve(rows: number): void {
    if (this.count + rows <= this.dirOf.length) return;
    const capacity = Math.max(64, this.dirOf.length * 2, this.count + rows);
    const dirOf = new Uint32Array(capacity);
    dirOf.set(this.dirOf);
    const stamps = new Float64Array(capacity * STAMP_FIELDS);
    stamps.set(this.stamps);
    const shas = Buffer.alloc(capacity * SHA_BYTES);
    this.shas.copy(shas);
    const evidence = new Uint8Array(capacity);
    evidence.set(this.evidence);
    const gone = new Uint8Array(capacity);
    gone.set(this.gone);
    [this.dirOf, this.stamps, this.shas, this.evidence, this.gone] = [dirOf, stamps, shas, evidence, gone];
  }

  /**
   * The index as built, with the folders its scan listed and the folder histories it leaves
   * (none by default): views on the columns, not copies (the capacity was sized to the base).
   */
  finish(folders: FolderTable = noFolders(), folderHistory: FolderHistories = new Map()): ClassIndex {
    return {
      sessionId: this.sessionId,
      dirs: this.dirs,
      paths: this.paths,
      dirOf: this.dirOf.subarray(0, this.count),
      stamps: this.stamps.subarray(0, this.count * STAMP_FIELDS),
      shas: this.shas.subarray(0, this.count * SHA_BYTES),
      evidence: this.evidence.subarray(0, this.count),
      gone: this.gone.subarray(0, this.count),
      history: this.history,
      folders,
      folderHistory,
    };
  }
}

/**
 * The rows of the index a scan makes from `base`, copied only once a row is added or removed or
 * moves: until then the new rows are rows `0 .. position - 1` of the base, updated in place
 * where a file changed (the base is the scan's to give away), and an unchanged tree costs no
 * copy at all.
 */
export class RowSink {
  /** How many rows the new index has so far. */
  position = 0;
  private builder: IndexBuilder | undefined;

  constructor(
    private readonly base: ClassIndex,
    private readonly dirs: string[],
  ) {}

  /** Keeps row `row` of the base as the next row, under directory number `dirNo`. */
  keep(row: number, dirNo: number): void {
    if (this.builder === undefined && row === this.position && this.base.dirOf[row] === dirNo) this.position += 1;
    else this.next().copy(this.base, row, dirNo);
  }

  /** The builder to append the next row to (one row is counted). */
  next(): IndexBuilder {
    if (this.builder === undefined) {
      this.builder = new IndexBuilder(this.base.sessionId, this.dirs, this.base.paths.length + 64);
      this.builder.copyRows(this.base, 0, this.position);
    }
    this.position += 1;
    return this.builder;
  }

  /**
   * Appends the row of `file` as scanned now (see {@link IndexBuilder.add}). While the rows are
   * still the base's and this is the base's row `row`, the base's row is updated in place
   * instead: no copy of the columns for files rewritten where they were.
   */
  put(row: number | undefined, file: string, dirNo: number, stat: fs.Stats, sha: Buffer, evidence: number, history: string[]): void {
    const { base } = this;
    if (this.builder !== undefined || row !== this.position || base.dirOf[row] !== dirNo) {
      this.next().add(file, dirNo, stat, sha, evidence, history);
      return;
    }
    base.stamps.set([stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino], row * STAMP_FIELDS);
    sha.copy(base.shas, row * SHA_BYTES);
    base.evidence[row] = evidence;
    base.gone[row] = 0;
    if (history.length > 0) base.history.set(file, history);
    else base.history.delete(file);
    this.position += 1;
  }

  /** Marks the last row appended a tombstone. */
  setLastGone(): void {
    this.builder!.setGone(this.position - 1);
  }

  /** The new index, with the folders and folder histories of its scan: the base itself (its columns shared) when no row differed. */
  finish(folders: FolderTable, folderHistory: FolderHistories): ClassIndex {
    return this.builder?.finish(folders, folderHistory) ?? { ...this.base, dirs: this.dirs, folders, folderHistory };
  }
}

/**
 * The earlier hashes for the new row of `base`'s row `row` now that the file holds `sha`: the
 * row's own hash first, then its history, without `sha`, at most {@link HISTORY_MAX}.
 */
export function earlierHashes(base: ClassIndex, row: number, sha: Buffer): string[] {
  const now = sha.toString('hex');
  const all = [shaHex(base, row), ...(base.history.get(base.paths[row]!) ?? [])];
  return all.filter((h, i) => h !== now && all.indexOf(h) === i).slice(0, HISTORY_MAX);
}

/** Row `row`'s SHA-256 as lower-case hex. */
export function shaHex(index: ClassIndex, row: number): string {
  return index.shas.toString('hex', row * SHA_BYTES, (row + 1) * SHA_BYTES);
}

/** True when `stat` is the stamp row `row` of `index` was scanned with (size, mtime, ctime, inode). */
export function sameStampAsRow({ stamps }: ClassIndex, row: number, stat: fs.Stats): boolean {
  const s = row * STAMP_FIELDS;
  return stamps[s] === stat.size && stamps[s + 1] === stat.mtimeMs && stamps[s + 2] === stat.ctimeMs && stamps[s + 3] === stat.ino;
}
