/**
 * Change detection for class output directories against the class index (the evidence rule is
 * evidence.ts's). A class file changed when its bytes differ; the stat check is only a pre-filter
 * (a write always moves ctime). Columns, not an object per file, and one scan per run: at 50,000
 * files those were most of a run's time and memory. Reads are synchronous, many times faster for
 * small files. The user's class files are only ever read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { earlierHashes, RowSink, sameStampAsRow, SHA_BYTES, shaHex, STAMP_FIELDS, type ClassIndex } from './columns.js';
import { cutOf, EVIDENCE, isLive, type Question, wholeSinceStart } from './evidence.js';
import { MovedCopies } from './copies.js';
import type { FileFacts } from './file-facts.js';
import { classChange, sortChanges, type ChangeSet } from './changes.js';
import { folderStamp, FolderTableBuilder, KnownFolders, NO_PARENT } from './folders.js';
import { HistoryBuilder, sameHistories, type HistoryRule } from './history.js';
import { hashPaced, isUnreadableFolder, linkCtimeMs, linksToScan, Pacer, readFolder, statClassFile, UNREADABLE } from './scan.js';

/** Decides what one class file is from the facts the scan found: evidence.ts `verdictOf`, without an answer. */
type Judge = (file: FileFacts) => Question;

/** How {@link detectChanges} judges and what else it looks for. */
export interface ScanOptions {
  judge: Judge;
  /** How the folders listed are judged (history.ts). Default: after a build, with no folder known whole before it. */
  history?: HistoryRule;
  /** Class output directories whose rows in the base are this run's own scan from before the build, or that did not exist then. */
  scannedBeforeBuild?: ReadonlySet<string>;
  /** Folders that scan could not list: a file below one was not seen then, so it is not taken as new. */
  unseenBefore?: readonly string[];
  /** List the files other than class files whose ctime is this late or later (epoch ms), in `resources`. */
  resourcesSinceMs?: number;
  /** Whether the agent watches class file `file` (placement.ts `JvmPaths.watched`): a copy it does not is never reloaded (copies.ts). Undefined: unknown. */
  watched?: (file: string) => boolean | null;
  /** Scan only these folders (absolute, not their subfolders); `base`'s rows elsewhere are kept. Undefined: all. */
  folders?: ReadonlySet<string>;
}

/** What {@link detectChanges} found. */
export interface Detection {
  changes: ChangeSet;
  /** The index as of now: the scanned directories as found, other rows of the base kept. */
  index: ClassIndex;
  /** False when `index` need not be written: it holds what the base did, folder stamps included. */
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
  /** The new index's rows (copied only once one differs from the base's). */
  rows: RowSink;
  folders: FolderTableBuilder;
  history: HistoryBuilder;
  /** The base's folders. */
  known: KnownFolders;
  changes: ChangeSet;
  unreadable: string[];
  unreadableDirs: string[];
  resources: string[];
  pacer: Pacer;
  /** The base row expected next (the scan visits files in the order it last did), and the rows by path when it is not. */
  next: number;
  rowOf: Map<string, number> | undefined;
  seen: Uint8Array;
  dirty: boolean;
  /** What moved within the scan's window (since the record, or the JVM's start for a first scan), and the files judged live by what the scan found. */
  copies: MovedCopies;
  judgedLive: Map<string, FileFacts>;
  /** Real paths of the folders the scan went to through symbolic links. */
  linksSeen: Set<string>;
}

/**
 * Scans `dirs` (one stat per class file; they must not nest) against `base`: a file whose stamp
 * moved is hashed, and `judge` (evidence.ts) decides what a file that is not its row's live bytes
 * needs. A gone file becomes a tombstone (reported removed once). A file that cannot be read keeps
 * its row (or gets one with no bytes, so it is never taken as new later); so do rows below an
 * unlistable folder. Links to class files are followed, to folders not. A folder whose stamp is
 * unchanged is not listed again, but each of its files is still stat'ed. Yields every SLICE_MS ms so the run lock's refresh keeps running.
 * Never throws for the file system. `base` is given away (its rows may be updated in place).
 * @returns the change set (each list sorted by class name), the new index (with `base`'s
 *   sessionId), whether it differs from `base` as it was, and what could not be read.
 */
export async function detectChanges(base: ClassIndex, dirs: readonly string[], options: ScanOptions): Promise<Detection> {
  const scanned = [...new Set(dirs.map((d) => path.resolve(d)))];
  const allDirs = [...new Set([...base.dirs, ...scanned])];
  const dirNumber = new Map(allDirs.map((d, i) => [d, i]));
  const walk: Walk = {
    base,
    options,
    rows: new RowSink(base, allDirs),
    folders: new FolderTableBuilder(),
    history: new HistoryBuilder(base.folderHistory, options.history ?? { kind: 'after', before: new Map() }, scanned),
    known: new KnownFolders(base.folders),
    changes: { changed: [], checks: [], added: [], removed: [], total: 0 },
    unreadable: [],
    unreadableDirs: [],
    resources: [],
    pacer: new Pacer(),
    next: 0,
    rowOf: undefined,
    seen: new Uint8Array(base.paths.length),
    dirty: allDirs.length !== base.dirs.length,
    copies: new MovedCopies(),
    judgedLive: new Map(),
    linksSeen: new Set(),
  };
  for (const dir of scanned) {
    const dirNo = dirNumber.get(dir)!;
    const prescanned = options.scannedBeforeBuild?.has(dir) === true;
    const only = options.folders;
    if (only !== undefined) {
      // A hinted scan: each folder on its own, none below it (they have hints of their own).
      for (const folder of only)
        if (folder === dir || folder.startsWith(dir + path.sep))
          await scanFolder(walk, { folder, parent: NO_PARENT, dir, dirNo, prescanned }, []);
      continue;
    }
    const stack = [{ folder: dir, parent: NO_PARENT }];
    while (stack.length > 0) {
      await walk.pacer.turn();
      const { folder, parent } = stack.pop()!;
      await scanFolder(walk, { folder, parent, dir, dirNo, prescanned }, stack);
    }
  }
  carryOver(walk, new Set(scanned), dirNumber);
  const { changes } = walk;
  const { unreadable, unreadableDirs } = walk;
  const only = options.folders;
  const folderHistory = walk.history.finish(only ? (f) => only.has(f) : (f) => scanned.some((d) => f === d || f.startsWith(d + path.sep)));
  const index = walk.rows.finish(walk.folders.finish(), folderHistory);
  const demoted = askOtherCopies(walk, index);
  sortChanges(changes);
  const dirty = walk.dirty || demoted || !sameHistories(base.folderHistory, folderHistory);
  return { changes, index, dirty, unreadable, unreadableDirs, resources: walk.resources.sort() };
}

/** Where a folder is: its path, its parent in the new folder table, and its class output directory. */
interface Place {
  folder: string;
  parent: number;
  dir: string;
  dirNo: number;
  prescanned: boolean;
}

/**
 * One folder: its entries (the base's when its stamp is unchanged), a row per class file, and its
 * folder table entry. The stamp is read first, so an entry added while listing moves it.
 */
async function scanFolder(walk: Walk, place: Place, stack: { folder: string; parent: number }[]): Promise<void> {
  const { base } = walk;
  const { folder } = place;
  const listedAtMs = Date.now();
  let stat: fs.Stats;
  try {
    stat = fs.statSync(folder);
  } catch (error) {
    if (isUnreadableFolder(error)) unlistable(walk, folder);
    return;
  }
  if (!stat.isDirectory()) return;
  const stamp = folderStamp(stat, listedAtMs);
  walk.history.listed(folder, stat, stamp);
  const known = walk.known.unchanged(folder, stamp);
  const rule = walk.options.history;
  walk.copies.folder(folder, rule?.kind === 'first' ? !wholeSinceStart(stat.ctimeMs, rule.start) : known === undefined);
  const first = walk.rows.position;
  const unlisted: string[] = [];
  let listing: { names: string[]; others: string[]; subfolders: string[]; linked?: string[] };
  if (known !== undefined) {
    const [start, end] = walk.known.rows(known);
    for (let row = start; row < end; row += 1) {
      const file = base.paths[row]!;
      let found = scanFile(walk, file, place, row);
      // Awaited only when it hashes: an await per unchanged file was much of a scan's garbage.
      if (typeof found !== 'boolean') found = await found;
      if (!found) unlisted.push(file.slice(folder.length + 1));
    }
    listing = walk.known.listing(known);
  } else {
    try {
      listing = readFolder(folder);
    } catch (error) {
      if (isUnreadableFolder(error)) unlistable(walk, folder);
      return;
    }
    // A stamp worth keeping: saved, so the next scan need not read this folder.
    if (stamp !== undefined) walk.dirty = true;
  }
  for (const name of listing.names) {
    let found = scanFile(walk, folder + path.sep + name, place);
    if (typeof found !== 'boolean') found = await found;
    if (!found) unlisted.push(name);
  }
  listResources(walk, folder, listing.others);
  unlisted.push(...listing.others);
  const number = walk.folders.add(folder, stamp, place.parent, first, walk.rows.position - first, unlisted.join('/'));
  // Folders through a link are scanned as the JVM loads them (links followed), each once (scan.ts).
  const linked = listing.linked === undefined ? [] : linksToScan(folder, listing.linked, walk.linksSeen);
  for (const sub of [...listing.subfolders, ...linked]) stack.push({ folder: sub, parent: number });
}

/** A folder that cannot be listed: named, and its history is not whole. */
function unlistable(walk: Walk, folder: string): void {
  walk.unreadableDirs.push(folder);
  walk.history.unreadable(folder);
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

/** The base row of `file`: the one the scan expects next, else looked up by path (the lookup made on first need). */
function baseRowOf(walk: Walk, file: string): number | undefined {
  const { base } = walk;
  if (base.paths[walk.next] === file) return walk.next;
  walk.rowOf ??= new Map(base.paths.map((f, row) => [f, row]));
  return walk.rowOf.get(file);
}

/**
 * One class file (with its base row when the caller knows it): its row in the new index, and
 * the list it goes in; settled at once unless it has to be hashed.
 * @returns whether it has a row (false when it vanished or is not a file)
 */
function scanFile(walk: Walk, file: string, place: Place, knownRow?: number): boolean | Promise<boolean> {
  const { base, changes } = walk;
  const stat = statClassFile(file);
  if (stat === undefined) return false;
  const row = knownRow ?? baseRowOf(walk, file);
  if (row !== undefined) {
    walk.seen[row] = 1;
    walk.next = row + 1;
  }
  const gone = row !== undefined && base.gone[row] === 1;
  const same = row !== undefined && !gone && stat !== UNREADABLE && sameStampAsRow(base, row, stat);
  if (same && isLive(base.evidence[row]!)) {
    walk.rows.keep(row, place.dirNo);
    changes.total += 1;
    return true;
  }
  return scanMoved(walk, file, place, { stat, row, gone, same });
}

/** A class file that is not simply its row's live bytes: hashed unless its stamp stayed, then judged. */
async function scanMoved(
  walk: Walk,
  file: string,
  place: Place,
  { stat, row, gone, same }: { stat: fs.Stats | typeof UNREADABLE; row: number | undefined; gone: boolean; same: boolean },
): Promise<boolean> {
  const { base, changes } = walk;
  const { dir, dirNo, prescanned } = place;
  const sha =
    stat === UNREADABLE
      ? undefined
      : same && row !== undefined
        ? base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES)
        : await hashPaced(file, walk.pacer);
  if (sha === undefined || stat === UNREADABLE) {
    if (!fs.existsSync(file) && stat !== UNREADABLE) {
      if (row !== undefined) walk.seen[row] = 0; // vanished: a removal
      return false;
    }
    walk.unreadable.push(file);
    if (row !== undefined) walk.rows.keep(row, dirNo);
    else {
      walk.rows.next().addUnread(file, dirNo);
      walk.dirty = true;
    }
    changes.total += 1;
    return true;
  }
  const sameBytes = row !== undefined && sha.equals(base.shas.subarray(row * SHA_BYTES, (row + 1) * SHA_BYTES));
  const unseen = walk.options.unseenBefore ?? [];
  const facts: FileFacts = {
    file,
    folder: place.folder,
    dir,
    ...(row === undefined ? {} : { recorded: base.evidence[row]! }),
    gone,
    sameBytes,
    sameStamp: same,
    ctimeMs: stat.ctimeMs,
    linkCtimeMs: linkCtimeMs(file, stat),
    scannedBeforeBuild: prescanned && !unseen.some((folder) => file.startsWith(folder + path.sep)),
    newInSession: row === undefined && walk.history.newIn(place.folder),
  };
  const decision = walk.options.judge(facts);
  if (moved(walk, facts)) walk.copies.file(file);
  if (decision.kind === 'live') walk.judgedLive.set(file, facts);
  const evidence = decision.code;
  const history = row === undefined ? [] : earlierHashes(base, row, sha);
  if (!(same && row !== undefined && evidence === base.evidence[row])) walk.dirty = true;
  const after = sha.toString('hex');
  // Read before the row is put: it may be the base's row, updated in place.
  const before = row === undefined ? {} : { before: shaHex(base, row) };
  walk.rows.put(row, file, dirNo, stat, sha, evidence, history);
  changes.total += 1;
  if (decision.kind === 'ask') {
    const keeps = decision.keeps === undefined ? {} : { keeps: decision.keeps };
    const facts = {
      ...before,
      after,
      previous: history,
      liveUnknown: decision.liveUnknown,
      ...keeps,
      ctimeMs: stat.ctimeMs,
    };
    // Without a row, bytes to keep are a class new to the JVM by the record (evidence.ts verdictOf).
    const list =
      row === undefined && decision.keeps === EVIDENCE.added ? changes.added : decision.how === 'poll' ? changes.changed : changes.checks;
    list.push(classChange(file, dir, facts));
  }
  return true;
}

/**
 * Rows of the base not seen by the scan: kept, or tombstones for files removed from a scanned
 * directory or with a directory that is gone (a removed class output directory's files are
 * removed too, not a copy left for ever).
 */
function carryOver(walk: Walk, scannedSet: ReadonlySet<string>, dirNumber: ReadonlyMap<string, number>): void {
  const { base } = walk;
  const hidden = (file: string) => walk.unreadableDirs.some((folder) => file.startsWith(folder + path.sep));
  const goneDirs = new Map<string, boolean>();
  const looked = (dir: string) => scannedSet.has(dir) || (goneDirs.get(dir) ?? goneDirs.set(dir, isGoneFolder(dir)).get(dir)!);
  for (let row = 0; row < base.paths.length; row += 1) {
    const dir = base.dirs[base.dirOf[row]!]!;
    if (walk.seen[row] === 1) continue;
    const removed = base.gone[row] !== 1 && looked(dir) && !hidden(base.paths[row]!);
    const unlooked = removed && walk.options.folders !== undefined && !walk.options.folders.has(path.dirname(base.paths[row]!));
    if (unlooked) walk.changes.total += 1;
    if (!removed || unlooked) {
      walk.rows.keep(row, dirNumber.get(dir)!);
      continue;
    }
    walk.rows.next().copy(base, row, dirNumber.get(dir)!);
    walk.dirty = true;
    walk.changes.removed.push(classChange(base.paths[row]!, dir, { before: shaHex(base, row) }));
    walk.copies.file(base.paths[row]!);
    walk.rows.setLastGone();
  }
}

/** Whether `folder` is not there (nor a folder): unlike one that cannot be read, its files are gone. */
function isGoneFolder(folder: string): boolean {
  try {
    return !fs.statSync(folder).isDirectory();
  } catch (error) {
    return !isUnreadableFolder(error);
  }
}

/** Whether a file the scan judged changed, came or went within its window: since the JVM's start for a first scan, else since the record. */
function moved(walk: Walk, file: FileFacts): boolean {
  const rule = walk.options.history;
  if (rule?.kind === 'first') return rule.start === undefined || Math.max(file.ctimeMs, file.linkCtimeMs) >= cutOf(rule.start);
  return file.recorded === undefined || file.gone || !file.sameStamp;
}

/**
 * Every row live by the record or by its age whose class another file may have replaced since
 * (copies.ts: one of its binary name changed, came or went in another class output directory)
 * is judged again with that fact, and asked once when the rule says so. Where a copy itself moved
 * (not only a folder on its way), the ask, and a file already to be asked once, is marked: the
 * agent may still reload the class from that copy after it answers, so no answer keeps it live
 * (evidence.ts `others-unmoved`). A copy that may only have come and gone is gone: the one answer
 * covers it. `index` is updated in place.
 * @returns whether any row was.
 */
function askOtherCopies(walk: Walk, index: ClassIndex): boolean {
  const { copies, options } = walk;
  if (copies.none || index.dirs.length < 2) return false;
  const present = new Set(index.paths.filter((_, row) => index.gone[row] !== 1));
  const full = options.folders === undefined;
  const movedBesides = (file: string, row: number) =>
    copies.movedBesides(index, present, file, index.dirs[index.dirOf[row]!]!, full, options.watched);
  const rows = new Map(index.paths.map((file, row) => [file, row]));
  for (const change of walk.changes.checks) if (movedBesides(change.path, rows.get(change.path)!) === 'copy') change.othersMoved = true;
  let demoted = false;
  index.paths.forEach((file, row) => {
    const code = index.evidence[row]!;
    if (index.gone[row] === 1 || !isLive(code)) return;
    const moved = movedBesides(file, row);
    if (moved === undefined) return;
    const dir = index.dirs[index.dirOf[row]!]!;
    const facts = walk.judgedLive.get(file) ?? keptFacts(walk, index, row, dir);
    const decision = options.judge({ ...facts, othersMoved: true });
    if (decision.kind !== 'ask') return;
    index.evidence[row] = decision.code;
    demoted = true;
    const sha = shaHex(index, row);
    const keeps = decision.keeps === undefined ? {} : { keeps: decision.keeps };
    const before = facts.recorded === undefined ? {} : { before: sha };
    const asked = {
      ...before,
      after: sha,
      previous: index.history.get(file) ?? [],
      liveUnknown: decision.liveUnknown,
      ...keeps,
      ctimeMs: facts.ctimeMs,
      ...(moved === 'copy' ? { othersMoved: true } : {}),
    };
    walk.changes.checks.push(classChange(file, dir, asked));
  });
  return demoted;
}

/** The facts of a row the scan kept as it was: its live bytes at its stamp. */
function keptFacts(walk: Walk, index: ClassIndex, row: number, dir: string): FileFacts {
  const file = index.paths[row]!;
  const ctimeMs = index.stamps[row * STAMP_FIELDS + 2]!;
  return {
    file,
    folder: path.dirname(file),
    dir,
    recorded: index.evidence[row]!,
    gone: false,
    sameBytes: true,
    sameStamp: true,
    ctimeMs,
    linkCtimeMs: ctimeMs,
    scannedBeforeBuild: walk.options.scannedBeforeBuild?.has(dir) === true,
    newInSession: false,
  };
}
