/**
 * Change detection for class output directories, against the class index: per file its bytes
 * at the last scan and the evidence that makes them live (evidence.ts holds the rule). A class
 * file "changed" when its bytes differ from the index; the stat check (size, mtime, ctime,
 * inode) is only a pre-filter, so a same-size, same-mtime rewrite with new bytes still counts
 * (a write always moves ctime).
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
import { EVIDENCE, isLive, type Decision, type FileFacts } from './evidence.js';

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

/** The class files on disk set against the class index, by what each needs (see evidence.ts). */
export interface ChangeSet {
  /** Changed by this build and not backed by evidence: to be verified (polled under the deadline). */
  changed: ClassChange[];
  /** There before this build and not backed by evidence: to be asked once. */
  checks: ClassChange[];
  /** New to the app: absent before this build and not seen earlier in this agent session. */
  added: ClassChange[];
  removed: ClassChange[];
  /** Class files found in the scanned directories. */
  total: number;
}

/** Decides what one class file needs from the facts the scan found (see evidence.ts). */
type Judge = (file: FileFacts) => Decision;

/** How {@link detectChanges} judges and what else it looks for. */
export interface ScanOptions {
  judge: Judge;
  /** Class output directories whose rows in the base are this run's own scan from before the build, or that did not exist then. */
  scannedBeforeBuild?: ReadonlySet<string>;
  /** Folders that scan could not list: a file below one was not seen then, so it is not taken as new. */
  unseenBefore?: readonly string[];
  /** List the files other than class files whose ctime is this late or later (epoch ms), in `resources`. */
  resourcesSinceMs?: number;
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
  /** Folders below the class output directories that could not be listed: their rows are kept as they were. */
  unreadableDirs: string[];
  /** Files other than class files written since `resourcesSinceMs` (sorted; none without it). */
  resources: string[];
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

/** How long synchronous scanning and hashing may run before the event loop gets a turn, in ms. */
export const SLICE_MS = 100;

/**
 * Scans the class output directories `dirs` (one stat per class file) and sets them against
 * `base`: a file whose stamp moved is hashed, and `judge` (the rule in evidence.ts) decides what
 * every file that is not simply the row's live bytes needs, which becomes its row's evidence and
 * puts it in `changed`, `checks` or `added`. A file of `base` that is gone becomes a tombstone
 * (reported removed once). Rows of `base` under directories not in `dirs` are carried over as
 * they are; so is the row of a file that cannot be read (listed in `unreadable`: its change is
 * unknown, not a removal; without a row it gets one with no bytes, so it is never taken as new
 * later) and every row below a folder that cannot be listed (`unreadableDirs`). `dirs` must not
 * nest. Symbolic links to class files are followed, links to folders are not. The work yields
 * to the event loop every {@link SLICE_MS} ms, so timers keep running (the run lock's refresh)
 * however large the tree. Never throws for the file system.
 * @returns the change set (each list sorted by class name), the new index (with `base`'s
 *   sessionId), whether it differs from `base`, and what could not be read.
 */
export async function detectChanges(base: ClassIndex, dirs: readonly string[], options: ScanOptions): Promise<Detection> {
  const { judge, scannedBeforeBuild = new Set<string>(), unseenBefore = [], resourcesSinceMs } = options;
  const scanned = [...new Set(dirs.map((d) => path.resolve(d)))];
  const scannedSet = new Set(scanned);
  const allDirs = [...new Set([...base.dirs, ...scanned])];
  const dirNumber = new Map(allDirs.map((d, i) => [d, i]));
  const builder = new IndexBuilder(base.sessionId, allDirs, base.paths.length + 64);
  const changes: ChangeSet = { changed: [], checks: [], added: [], removed: [], total: 0 };
  const unreadable: string[] = [];
  const unreadableDirs: string[] = [];
  const resources: string[] = [];
  const pacer = new Pacer();
  let dirty = allDirs.length !== base.dirs.length;

  const rowOf = new Map<string, number>();
  for (let row = 0; row < base.paths.length; row += 1) rowOf.set(base.paths[row]!, row);
  const seen = new Uint8Array(base.paths.length);

  for (const dir of scanned) {
    const dirNo = dirNumber.get(dir)!;
    const prescanned = scannedBeforeBuild.has(dir);
    for (const { folder, names, others } of classFolders(dir, unreadableDirs)) {
      await pacer.turn();
      if (resourcesSinceMs !== undefined) {
        for (const name of others) {
          const file = folder + path.sep + name;
          const stat = statClassFile(file);
          if (stat !== undefined && stat !== UNREADABLE && stat.ctimeMs >= resourcesSinceMs) resources.push(file);
        }
      }
      for (const name of names) {
        const file = folder + path.sep + name;
        const stat = statClassFile(file);
        if (stat === undefined) continue;
        const row = rowOf.get(file);
        if (row !== undefined) seen[row] = 1;
        const gone = row !== undefined && base.gone[row] === 1;
        const same = row !== undefined && !gone && stat !== UNREADABLE && sameStamp(base.stamps, row, stat);
        if (same && isLive(base.evidence[row]!)) {
          builder.copy(base, row, dirNo);
          changes.total += 1;
          continue;
        }
        const sha =
          stat === UNREADABLE
            ? undefined
            : same
              ? base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES)
              : await hashPaced(file, pacer);
        if (sha === undefined || stat === UNREADABLE) {
          if (!fs.existsSync(file) && stat !== UNREADABLE) {
            if (row !== undefined) seen[row] = 0; // vanished: a removal
            continue;
          }
          unreadable.push(file);
          if (row !== undefined) builder.copy(base, row, dirNo);
          else {
            builder.addUnread(file, dirNo);
            dirty = true;
          }
          changes.total += 1;
          continue;
        }
        const sameBytes = row !== undefined && sha.equals(base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES));
        const decision = judge({
          ...(row === undefined ? {} : { recorded: base.evidence[row] as FileFacts['recorded'] }),
          gone,
          sameBytes,
          ctimeMs: stat.ctimeMs,
          scannedBeforeBuild: prescanned && !unseenBefore.some((folder) => file.startsWith(folder + path.sep)),
        });
        const evidence = decision.kind === 'live' ? decision.evidence : decision.liveUnknown ? EVIDENCE.unknown : EVIDENCE.unproven;
        const history = row === undefined ? [] : earlierHashes(base, row, sha);
        if (!(same && evidence === base.evidence[row])) dirty = true;
        builder.add(file, dirNo, stat, sha, evidence, history);
        changes.total += 1;
        if (decision.kind === 'verify') {
          const list = decision.by === 'build' ? changes.changed : changes.checks;
          const after = sha.toString('hex');
          list.push(
            describe(file, dir, {
              ...(row === undefined ? {} : { before: shaHex(base, row) }),
              after,
              previous: history,
              liveUnknown: decision.liveUnknown,
              ctimeMs: stat.ctimeMs,
            }),
          );
        } else if (decision.evidence === EVIDENCE.added && row === undefined) {
          changes.added.push(describe(file, dir, { after: sha.toString('hex') }));
        }
      }
    }
  }
  const hidden = (file: string) => unreadableDirs.some((folder) => file.startsWith(folder + path.sep));
  for (let row = 0; row < base.paths.length; row += 1) {
    const dir = base.dirs[base.dirOf[row]!]!;
    if (seen[row] === 1) continue;
    if (!scannedSet.has(dir) || base.gone[row] === 1 || hidden(base.paths[row]!)) {
      builder.copy(base, row, dirNumber.get(dir)!);
      continue;
    }
    dirty = true;
    changes.removed.push(describe(base.paths[row]!, dir, { before: shaHex(base, row) }));
    builder.copy(base, row, dirNumber.get(dir)!);
    builder.setGone(builder.count - 1);
  }
  for (const list of [changes.changed, changes.checks, changes.added, changes.removed])
    list.sort((a, b) => compare(a.className, b.className));
  return { changes, index: builder.finish(), dirty, unreadable, unreadableDirs, resources: resources.sort() };
}

/**
 * The earlier hashes for the new row of `base`'s row `row` now that the file holds `sha`: the
 * row's own hash first, then its history, without `sha`, at most {@link HISTORY_MAX}.
 */
function earlierHashes(base: ClassIndex, row: number, sha: Buffer): string[] {
  const now = sha.toString('hex');
  const all = [shaHex(base, row), ...(base.history.get(base.paths[row]!) ?? [])];
  return all.filter((h, i) => h !== now && all.indexOf(h) === i).slice(0, HISTORY_MAX);
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
 * `.class` that are files or symbolic links, and of its other files (`others`). Folders reached through a symbolic link are not
 * entered (no cycles); a folder that cannot be listed is skipped and added to `unreadable`
 * (one that vanished, or a missing `dir`, is not).
 */
function* classFolders(dir: string, unreadable: string[] = []): Generator<{ folder: string; names: string[]; others: string[] }> {
  const folders = [dir];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') unreadable.push(folder);
      continue;
    }
    const names: string[] = [];
    const others: string[] = [];
    for (const entry of entries) {
      if (entry.isDirectory()) folders.push(folder + path.sep + entry.name);
      else if (entry.isFile() || entry.isSymbolicLink()) (entry.name.endsWith('.class') ? names : others).push(entry.name);
    }
    yield { folder, names, others };
  }
}

/** A class file that is there but whose stamp cannot be read (a folder without search permission). */
const UNREADABLE = 'unreadable';

/**
 * The stamp of a class file (through a symbolic link); undefined when it is gone or not a regular
 * file, {@link UNREADABLE} when it cannot be looked at.
 */
function statClassFile(file: string): fs.Stats | typeof UNREADABLE | undefined {
  try {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return stat?.isFile() ? stat : undefined;
  } catch {
    return UNREADABLE;
  }
}

/** Grows the columns of a new index row by row. */
class IndexBuilder {
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

function describe(file: string, dir: string, facts: Omit<ClassChange, 'path' | 'className' | 'verifiable'>): ClassChange {
  const className = binaryClassName(dir, file);
  return { path: file, className, verifiable: isVerifiableClassName(className), ...facts };
}

function shaHex(index: ClassIndex, row: number): string {
  return index.shas.toString('hex', row * SHA_BYTES, (row + 1) * SHA_BYTES);
}

/** True when `stat` is the stamp row `row` of `index` was scanned with (size, mtime, ctime, inode). */
export function sameStampAsRow(index: ClassIndex, row: number, stat: fs.Stats): boolean {
  return sameStamp(index.stamps, row, stat);
}

function sameStamp(stamps: Float64Array, row: number, stat: fs.Stats): boolean {
  const s = row * STAMP_FIELDS;
  return stamps[s] === stat.size && stamps[s + 1] === stat.mtimeMs && stamps[s + 2] === stat.ctimeMs && stamps[s + 3] === stat.ino;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
