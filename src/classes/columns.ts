/**
 * The class index as columns: every class file under the class output directories, with its
 * stamp, SHA-256 and the evidence that makes its bytes live (evidence.ts), and no object per
 * file (at 50,000 class files, objects per file were most of a run's memory). state/store.ts
 * saves it; snapshot.ts builds it.
 */
import type fs from 'node:fs';
import { EVIDENCE } from './evidence.js';

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
  };
}

/**
 * `index` for a new agent session `sessionId`: its evidence is void (every row `unknown`), its
 * tombstones and earlier hashes dropped. The stamps and hashes still spare re-hashing files
 * whose stamp did not move.
 */
export function forSession(index: ClassIndex, sessionId: string): ClassIndex {
  const builder = new IndexBuilder(sessionId, index.dirs, index.paths.length);
  for (let row = 0; row < index.paths.length; row += 1) {
    if (index.gone[row] === 1) continue;
    builder.copy(index, row, index.dirOf[row]!);
    builder.setEvidence(builder.count - 1, EVIDENCE.unknown);
  }
  return builder.finish();
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
    if (this.count === this.dirOf.length) {
      const capacity = Math.max(64, this.dirOf.length * 2);
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
      evidence: this.evidence.subarray(0, this.count),
      gone: this.gone.subarray(0, this.count),
      history: this.history,
    };
  }
}
