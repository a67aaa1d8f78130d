/**
 * The bytes of `.reclazz/classes.idx`, written and read in pieces so a 200,000-class index
 * (35 MB) never sits in memory as one buffer. Layout, little-endian: `RCLZIDX5`; u32 counts (rows,
 * header bytes, path bytes, history bytes, folders, folder text bytes, folder histories, their
 * text bytes); header JSON (sessionId, dirs); paths (UTF-8, NUL after each); then column by column,
 * each column holding every row's value: u32 directory, 4 float64 (size in bytes, mtimeMs, ctimeMs,
 * inode), 32-byte SHA-256, evidence byte, tombstone byte; history (u32 row, u8 count, 32-byte
 * hashes); the folder table, column by column too (3 float64 stamp; u32 parent, first row, row
 * count; then text: path NUL unlisted names NUL); folder histories (columns of 3 float64 stamp or
 * NaN and a whole byte, then text: path NUL); SHA-256 of all before. `RCLZIDX4` (no folder histories) and
 * `RCLZIDX3` (nor folder table) are still read, with no history: no class file is then new.
 */
import { createHash, type Hash } from 'node:crypto';
import * as z from 'zod/mini';
import { HISTORY_MAX, SHA_BYTES, STAMP_FIELDS, type ClassIndex } from '../classes/columns.js';
import { isEvidence } from '../classes/evidence.js';
import { FOLDER_STAMP_FIELDS, NO_PARENT, noFolders, type FolderTable } from '../classes/folders.js';
import type { FolderHistories } from '../classes/history.js';
import { readAt, type Pieces } from './files.js';

const INDEX_MAGIC = Buffer.from('RCLZIDX5', 'latin1');
/** The versions before, without the folder histories (and the folder table): still read (an upgrade keeps the record), never written. */
const INDEX_MAGIC_4 = Buffer.from('RCLZIDX4', 'latin1');
const INDEX_MAGIC_3 = Buffer.from('RCLZIDX3', 'latin1');
/** The magic without its version digit: an index of another version is "no record", rebuilt without a warning. */
const INDEX_FAMILY = INDEX_MAGIC.subarray(0, INDEX_MAGIC.length - 1);
/** Per row: directory number, stamp, SHA-256, evidence, tombstone flag. */
const ROW_BYTES = 4 + 8 * STAMP_FIELDS + SHA_BYTES + 1 + 1;
/** Per folder: stamp, parent, first row, row count. */
const FOLDER_BYTES = 8 * FOLDER_STAMP_FIELDS + 4 + 4 + 4;
/** Per folder history: stamp, whole flag. */
const FOLDER_HISTORY_BYTES = 8 * FOLDER_STAMP_FIELDS + 1;
/** The u32 counts after the magic, by version. */
const PREFIX_COUNTS = { 3: 4, 4: 6, 5: 8 } as const;

const indexHeaderSchema = z.object({
  sessionId: z.nullable(z.string()),
  dirs: z.array(z.string()),
});

/** The index file's bytes, in pieces: the columns are written from the index's own arrays, the paths through one reused buffer. */
export function encodeIndex(index: ClassIndex): Pieces {
  const count = index.paths.length;
  const header = Buffer.from(JSON.stringify({ sessionId: index.sessionId, dirs: index.dirs }), 'utf8');
  let pathBytes = count;
  for (const file of index.paths) pathBytes += Buffer.byteLength(file, 'utf8');
  const history = historyBytes(index);
  const { folders } = index;
  const folderText = Buffer.from(folders.paths.map((folder, f) => `${folder}\0${folders.unlisted[f]}\0`).join(''), 'utf8');
  const pasts = folderHistoryPieces(index.folderHistory);
  const prefix = Buffer.alloc(INDEX_MAGIC.length + 4 * PREFIX_COUNTS[5]);
  INDEX_MAGIC.copy(prefix);
  [count, header.length, pathBytes, history.length, folders.paths.length, folderText.length, pasts.count, pasts.text.length].forEach((n, i) =>
    prefix.writeUInt32LE(n, 8 + 4 * i),
  );
  const bodyBytes =
    prefix.length +
    header.length +
    pathBytes +
    count * ROW_BYTES +
    history.length +
    folders.paths.length * FOLDER_BYTES +
    folderText.length +
    pasts.count * FOLDER_HISTORY_BYTES +
    pasts.text.length;
  function* pieces(): Generator<Uint8Array> {
    const hash = createHash('sha256');
    const hashed = (piece: Uint8Array) => (hash.update(piece), piece);
    yield hashed(prefix);
    yield hashed(header);
    for (const piece of pathPieces(index.paths)) yield hashed(piece);
    for (const column of [index.dirOf, index.stamps, index.shas, index.evidence, index.gone]) yield hashed(bytesOf(column));
    yield hashed(history);
    for (const column of [folders.stamps, folders.parent, folders.firstRow, folders.rowCount]) yield hashed(bytesOf(column));
    yield hashed(folderText);
    for (const piece of [bytesOf(pasts.stamps), bytesOf(pasts.whole), pasts.text]) yield hashed(piece);
    yield hash.digest();
  }
  return { size: bodyBytes + SHA_BYTES, pieces: pieces() };
}

/** The folder history section's columns and text. */
function folderHistoryPieces(histories: FolderHistories): { count: number; stamps: Float64Array; whole: Uint8Array; text: Buffer } {
  const count = histories.size;
  const stamps = new Float64Array(count * FOLDER_STAMP_FIELDS).fill(Number.NaN);
  const whole = new Uint8Array(count);
  const paths: string[] = [];
  let f = 0;
  for (const [folder, past] of histories) {
    if (past.stamp !== undefined) stamps.set(past.stamp, f * FOLDER_STAMP_FIELDS);
    whole[f] = past.whole ? 1 : 0;
    paths.push(folder);
    f += 1;
  }
  return { count, stamps, whole, text: Buffer.from(paths.map((folder) => `${folder}\0`).join(''), 'utf8') };
}

/** Bytes of one piece of the path section: the paths are encoded into one buffer of this size, reused piece after piece. */
const PATH_PIECE_BYTES = 64 * 1024;
/** Paths joined into one string before they are encoded: one encode call per group, and a string small enough for the young generation. */
const PATHS_PER_GROUP = 256;

/**
 * The paths, each followed by NUL, encoded into one reused buffer, yielded when full. A buffer per
 * group (17 MB of garbage at 200,000 classes) or a write per path were slower.
 */
function* pathPieces(paths: readonly string[]): Generator<Uint8Array> {
  const piece = Buffer.allocUnsafe(PATH_PIECE_BYTES);
  let at = 0;
  for (let first = 0; first < paths.length; first += PATHS_PER_GROUP) {
    const group = `${paths.slice(first, first + PATHS_PER_GROUP).join('\0')}\0`;
    const bytes = Buffer.byteLength(group, 'utf8');
    if (at + bytes > piece.length && at > 0) {
      yield piece.subarray(0, at);
      at = 0;
    }
    if (bytes > piece.length) yield Buffer.from(group, 'utf8');
    else at += piece.write(group, at, 'utf8');
  }
  if (at > 0) yield piece.subarray(0, at);
}

/** The history section: per path that has one, u32 row, u8 count, that many hashes. */
function historyBytes(index: ClassIndex): Buffer {
  const rows: number[] = [];
  let size = 0;
  index.paths.forEach((file, row) => {
    const hashes = index.history.get(file);
    if (hashes === undefined || hashes.length === 0) return;
    rows.push(row);
    size += 5 + SHA_BYTES * hashes.length;
  });
  const out = Buffer.alloc(size);
  let at = 0;
  for (const row of rows) {
    const hashes = index.history.get(index.paths[row]!)!;
    at = out.writeUInt32LE(row, at);
    out[at++] = hashes.length;
    for (const hash of hashes) at += out.write(hash, at, 'hex');
  }
  return out;
}

/** Reads the file's sections one after another, hashing what it reads. A file shorter than announced is {@link Corrupt}. */
class Sections {
  private at = 0;
  private readonly hash: Hash = createHash('sha256');

  constructor(private readonly fd: number) {}

  take(n: number): Buffer {
    return this.fill(Buffer.allocUnsafe(n));
  }

  /** Reads into `array`'s own bytes (no copy). */
  fill<T extends Uint8Array | Uint32Array | Float64Array>(array: T): T {
    const bytes = bytesOf(array);
    if (readAt(this.fd, bytes, this.at) !== bytes.length) throw new Corrupt();
    this.hash.update(bytes);
    this.at += bytes.length;
    return array;
  }

  /** Whether the SHA-256 at the end is that of everything read. */
  checksumHolds(): boolean {
    const stored = Buffer.allocUnsafe(SHA_BYTES);
    return readAt(this.fd, stored, this.at) === SHA_BYTES && this.hash.digest().equals(stored);
  }
}

class Corrupt extends Error {}

/**
 * Decodes the index file open at `fd` (`size` bytes).
 * @returns the index; 'other-version' for an index of a version this one does not read;
 *   'corrupt' when any part of it is wrong.
 * @throws what reading the file throws.
 */
export function decodeIndex(fd: number, size: number): ClassIndex | 'other-version' | 'corrupt' {
  if (size < INDEX_MAGIC.length) return 'corrupt';
  const sections = new Sections(fd);
  try {
    const magic = sections.take(INDEX_MAGIC.length);
    const version = magic.equals(INDEX_MAGIC) ? 5 : magic.equals(INDEX_MAGIC_4) ? 4 : magic.equals(INDEX_MAGIC_3) ? 3 : undefined;
    if (version === undefined) return magic.subarray(0, INDEX_FAMILY.length).equals(INDEX_FAMILY) ? 'other-version' : 'corrupt';
    if (size < INDEX_MAGIC.length + 4 * PREFIX_COUNTS[version] + SHA_BYTES) return 'corrupt';
    const prefix = sections.take(4 * PREFIX_COUNTS[version]);
    const [count, headerBytes, pathBytes, historyLength, folderCount = 0, folderTextBytes = 0, pastCount = 0, pastTextBytes = 0] = Array.from(
      { length: prefix.length / 4 },
      (_, i) => prefix.readUInt32LE(4 * i),
    ) as [number, number, number, number, number?, number?, number?, number?];
    const bodyBytes =
      magic.length +
      prefix.length +
      headerBytes +
      pathBytes +
      count * ROW_BYTES +
      historyLength +
      folderCount * FOLDER_BYTES +
      folderTextBytes +
      pastCount * FOLDER_HISTORY_BYTES +
      pastTextBytes;
    if (size !== bodyBytes + SHA_BYTES) return 'corrupt';
    const headerText = sections.take(headerBytes).toString('utf8');
    const pathText = sections.take(pathBytes).toString('utf8');
    const dirOf = sections.fill(new Uint32Array(count));
    const stamps = sections.fill(new Float64Array(count * STAMP_FIELDS));
    const shas = sections.take(SHA_BYTES * count);
    const evidence = sections.fill(new Uint8Array(count));
    const gone = sections.fill(new Uint8Array(count));
    const history = sections.take(historyLength);
    const folderColumns = sections.take(folderCount * FOLDER_BYTES);
    const folderText = sections.take(folderTextBytes);
    const pastStamps = sections.fill(new Float64Array(pastCount * FOLDER_STAMP_FIELDS));
    const pastWhole = sections.fill(new Uint8Array(pastCount));
    const pastText = sections.take(pastTextBytes);
    if (!sections.checksumHolds()) return 'corrupt';
    const header = parseHeader(headerText);
    const paths = count === 0 ? [] : pathText.slice(0, -1).split('\0');
    if (header === undefined || paths.length !== count || (count > 0 && !pathText.endsWith('\0'))) return 'corrupt';
    if (dirOf.some((d) => d >= header.dirs.length) || !evidence.every(isEvidence) || gone.some((flag) => flag > 1)) return 'corrupt';
    const histories = decodeHistory(history, paths);
    const folders = decodeFolders(folderColumns, folderText, folderCount, count);
    const folderHistory = decodeFolderHistory(pastStamps, pastWhole, pastText);
    if (histories === undefined || folders === undefined || folderHistory === undefined) return 'corrupt';
    return { sessionId: header.sessionId, dirs: header.dirs, paths, dirOf, stamps, shas, evidence, gone, history: histories, folders, folderHistory };
  } catch (error) {
    if (error instanceof Corrupt) return 'corrupt';
    throw error;
  }
}

function parseHeader(text: string): z.infer<typeof indexHeaderSchema> | undefined {
  try {
    const parsed = indexHeaderSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function decodeHistory(bytes: Buffer, paths: readonly string[]): Map<string, string[]> | undefined {
  const history = new Map<string, string[]>();
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < 5) return undefined;
    const row = bytes.readUInt32LE(at);
    const n = bytes[at + 4]!;
    at += 5;
    if (row >= paths.length || n === 0 || n > HISTORY_MAX || bytes.length - at < n * SHA_BYTES || history.has(paths[row]!)) return undefined;
    history.set(
      paths[row]!,
      Array.from({ length: n }, () => bytes.toString('hex', at, (at += SHA_BYTES))),
    );
  }
  return history;
}

/**
 * The folder table of an index of `rows` rows; undefined when it is inconsistent: a row range
 * beyond the rows, a parent that is not listed before its folder, text that does not split.
 */
function decodeFolders(columns: Buffer, textBytes: Buffer, count: number, rows: number): FolderTable | undefined {
  if (count === 0) return textBytes.length === 0 ? noFolders() : undefined;
  const stamps = new Float64Array(count * FOLDER_STAMP_FIELDS);
  const parent = new Uint32Array(count);
  const firstRow = new Uint32Array(count);
  const rowCount = new Uint32Array(count);
  let at = 0;
  for (const column of [stamps, parent, firstRow, rowCount]) {
    bytesOf(column).set(columns.subarray(at, at + column.byteLength));
    at += column.byteLength;
  }
  const text = textBytes.toString('utf8');
  if (!text.endsWith('\0')) return undefined;
  const parts = text.slice(0, -1).split('\0');
  if (parts.length !== 2 * count) return undefined;
  const paths = parts.filter((_, i) => i % 2 === 0);
  const unlisted = parts.filter((_, i) => i % 2 === 1);
  for (let f = 0; f < count; f += 1) {
    if (firstRow[f]! + rowCount[f]! > rows || (parent[f] !== NO_PARENT && parent[f]! >= f)) return undefined;
  }
  return { paths, stamps, parent, firstRow, rowCount, unlisted };
}

/** The folder histories from their columns and text; undefined when the text does not split into one path per folder or a flag is not 0 or 1. */
function decodeFolderHistory(stamps: Float64Array, whole: Uint8Array, textBytes: Buffer): FolderHistories | undefined {
  const histories: FolderHistories = new Map();
  if (whole.length === 0) return textBytes.length === 0 ? histories : undefined;
  const text = textBytes.toString('utf8');
  const paths = text.endsWith('\0') ? text.slice(0, -1).split('\0') : [];
  if (paths.length !== whole.length || whole.some((flag) => flag > 1)) return undefined;
  paths.forEach((folder, f) => {
    const at = f * FOLDER_STAMP_FIELDS;
    const stamp = Number.isNaN(stamps[at]) ? undefined : ([stamps[at]!, stamps[at + 1]!, stamps[at + 2]!] as const);
    histories.set(folder, { stamp, whole: whole[f] === 1 });
  });
  return histories;
}

/** The bytes of a typed array (a view, not a copy). Typed arrays are little-endian on every platform Node runs on here. */
function bytesOf(array: Uint32Array | Float64Array | Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}
