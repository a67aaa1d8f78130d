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
import { HISTORY_MAX, IndexBuilder, SHA_BYTES, STAMP_FIELDS, type ClassIndex } from './columns.js';
import { EVIDENCE, isLive, type Decision, type FileFacts } from './evidence.js';
import { classFolders, hashPaced, listedFolders, Pacer, statClassFile, UNREADABLE } from './scan.js';

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
  /**
   * Scan only these folders (absolute, each without the folders below it) of `dirs`; rows of
   * `base` elsewhere are kept as they are. Undefined: every folder. For a large base, hinted.ts
   * `detectInFolders` costs the rows of these folders only.
   */
  folders?: ReadonlySet<string>;
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

/** What one scan keeps while it walks the class output directories. */
interface Walk {
  base: ClassIndex;
  options: ScanOptions;
  builder: IndexBuilder;
  changes: ChangeSet;
  unreadable: string[];
  unreadableDirs: string[];
  resources: string[];
  pacer: Pacer;
  rowOf: Map<string, number>;
  seen: Uint8Array;
  dirty: boolean;
}

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
 * to the event loop every SLICE_MS ms (scan.ts), so timers keep running (the run lock's refresh)
 * however large the tree. Never throws for the file system.
 * @returns the change set (each list sorted by class name), the new index (with `base`'s
 *   sessionId), whether it differs from `base`, and what could not be read.
 */
export async function detectChanges(base: ClassIndex, dirs: readonly string[], options: ScanOptions): Promise<Detection> {
  const scanned = [...new Set(dirs.map((d) => path.resolve(d)))];
  const allDirs = [...new Set([...base.dirs, ...scanned])];
  const dirNumber = new Map(allDirs.map((d, i) => [d, i]));
  const walk: Walk = {
    base,
    options,
    builder: new IndexBuilder(base.sessionId, allDirs, base.paths.length + 64),
    changes: { changed: [], checks: [], added: [], removed: [], total: 0 },
    unreadable: [],
    unreadableDirs: [],
    resources: [],
    pacer: new Pacer(),
    rowOf: new Map(base.paths.map((file, row) => [file, row])),
    seen: new Uint8Array(base.paths.length),
    dirty: allDirs.length !== base.dirs.length,
  };
  for (const dir of scanned) {
    const dirNo = dirNumber.get(dir)!;
    const prescanned = options.scannedBeforeBuild?.has(dir) === true;
    const only = options.folders;
    for (const { folder, names, others } of only === undefined
      ? classFolders(dir, walk.unreadableDirs)
      : listedFolders(dir, only, walk.unreadableDirs)) {
      await walk.pacer.turn();
      listResources(walk, folder, others);
      for (const name of names) await scanFile(walk, folder + path.sep + name, dir, dirNo, prescanned);
    }
  }
  carryOver(walk, new Set(scanned), dirNumber);
  const { changes } = walk;
  for (const list of [changes.changed, changes.checks, changes.added, changes.removed])
    list.sort((a, b) => compare(a.className, b.className));
  const { unreadable, unreadableDirs } = walk;
  return { changes, index: walk.builder.finish(), dirty: walk.dirty, unreadable, unreadableDirs, resources: walk.resources.sort() };
}

/** Files other than class files in `folder` written since `resourcesSinceMs`. */
function listResources(walk: Walk, folder: string, others: string[]): void {
  const since = walk.options.resourcesSinceMs;
  if (since === undefined) return;
  for (const name of others) {
    const file = folder + path.sep + name;
    const stat = statClassFile(file);
    if (stat !== undefined && stat !== UNREADABLE && stat.ctimeMs >= since) walk.resources.push(file);
  }
}

/** One class file: its row in the new index, and the list it goes in. */
async function scanFile(walk: Walk, file: string, dir: string, dirNo: number, prescanned: boolean): Promise<void> {
  const { base, builder, changes } = walk;
  const stat = statClassFile(file);
  if (stat === undefined) return;
  const row = walk.rowOf.get(file);
  if (row !== undefined) walk.seen[row] = 1;
  const gone = row !== undefined && base.gone[row] === 1;
  const same = row !== undefined && !gone && stat !== UNREADABLE && sameStamp(base.stamps, row, stat);
  if (same && isLive(base.evidence[row]!)) {
    builder.copy(base, row, dirNo);
    changes.total += 1;
    return;
  }
  const sha =
    stat === UNREADABLE ? undefined : same ? base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES) : await hashPaced(file, walk.pacer);
  if (sha === undefined || stat === UNREADABLE) {
    if (!fs.existsSync(file) && stat !== UNREADABLE) {
      if (row !== undefined) walk.seen[row] = 0; // vanished: a removal
      return;
    }
    walk.unreadable.push(file);
    if (row !== undefined) builder.copy(base, row, dirNo);
    else {
      builder.addUnread(file, dirNo);
      walk.dirty = true;
    }
    changes.total += 1;
    return;
  }
  const sameBytes = row !== undefined && sha.equals(base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES));
  const unseen = walk.options.unseenBefore ?? [];
  const decision = walk.options.judge({
    ...(row === undefined ? {} : { recorded: base.evidence[row] as FileFacts['recorded'] }),
    gone,
    sameBytes,
    ctimeMs: stat.ctimeMs,
    scannedBeforeBuild: prescanned && !unseen.some((folder) => file.startsWith(folder + path.sep)),
  });
  const evidence = decision.kind === 'live' ? decision.evidence : decision.liveUnknown ? EVIDENCE.unknown : EVIDENCE.unproven;
  const history = row === undefined ? [] : earlierHashes(base, row, sha);
  if (!(same && evidence === base.evidence[row])) walk.dirty = true;
  builder.add(file, dirNo, stat, sha, evidence, history);
  changes.total += 1;
  const after = sha.toString('hex');
  if (decision.kind === 'verify') {
    const before = row === undefined ? {} : { before: shaHex(base, row) };
    const facts = { ...before, after, previous: history, liveUnknown: decision.liveUnknown, ctimeMs: stat.ctimeMs };
    (decision.by === 'build' ? changes.changed : changes.checks).push(describe(file, dir, facts));
  } else if (decision.evidence === EVIDENCE.added && row === undefined) {
    changes.added.push(describe(file, dir, { after }));
  }
}

/** Rows of the base not seen by the scan: kept, or tombstones for files removed from a scanned directory. */
function carryOver(walk: Walk, scannedSet: ReadonlySet<string>, dirNumber: ReadonlyMap<string, number>): void {
  const { base, builder } = walk;
  const hidden = (file: string) => walk.unreadableDirs.some((folder) => file.startsWith(folder + path.sep));
  for (let row = 0; row < base.paths.length; row += 1) {
    const dir = base.dirs[base.dirOf[row]!]!;
    if (walk.seen[row] === 1) continue;
    builder.copy(base, row, dirNumber.get(dir)!);
    if (!scannedSet.has(dir) || base.gone[row] === 1 || hidden(base.paths[row]!)) continue;
    // Not in a folder a hinted scan looked at: the file is there as its row says, not removed.
    if (walk.options.folders !== undefined && !walk.options.folders.has(path.dirname(base.paths[row]!))) {
      walk.changes.total += 1;
      continue;
    }
    walk.dirty = true;
    walk.changes.removed.push(describe(base.paths[row]!, dir, { before: shaHex(base, row) }));
    builder.setGone(builder.count - 1);
  }
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
