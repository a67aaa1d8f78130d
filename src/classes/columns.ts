/**
 * The class index as columns: every class file under the class output directories, with its
 * stamp and SHA-256, and no object per file (at 50,000 class files, objects per file were most
 * of a run's memory). state/store.ts saves it; snapshot.ts builds it.
 */
import type fs from 'node:fs';

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

/** Grows the columns of a new index row by row. */
export class IndexBuilder {
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
