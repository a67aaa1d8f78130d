/**
 * Reading class output directories: folder by folder, with stamps and SHA-256, giving the
 * event loop a turn every {@link SLICE_MS} ms so timers keep running however large the tree.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { SightFacts, StartCut } from './evidence.js';
import { type JvmPaths, Placement } from './placement.js';
import { realOf } from '../util/fs.js';

/**
 * How long synchronous scanning and hashing may run before the event loop gets a turn, in ms.
 * @internal for its tests
 */
export const SLICE_MS = 100;

/** Reused by {@link hashPaced}: one buffer for every read instead of one per class file. */
const readBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * SHA-256 of a file's bytes (32 bytes), read in 64 KiB pieces with a turn for the event loop
 * whenever `pacer` says so; undefined when it vanished or cannot be read.
 */
export async function hashPaced(file: string, pacer: Pacer): Promise<Buffer | undefined> {
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
export class Pacer {
  private since = performance.now();

  async turn(): Promise<void> {
    if (performance.now() - this.since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

/**
 * The entries of `folder`: `.class` files and links (`names`), its other files and links (`others`),
 * its folders (`subfolders`, absolute) and its symbolic links to folders (`linked`, absolute: the
 * JVM's class loader follows them, the agent's watcher does not).
 * @throws what `readdirSync` throws.
 */
export function readFolder(folder: string): { names: string[]; others: string[]; subfolders: string[]; linked: string[] } {
  const names: string[] = [];
  const others: string[] = [];
  const subfolders: string[] = [];
  const linked: string[] = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = folder + path.sep + entry.name;
    if (entry.isDirectory()) subfolders.push(full);
    else if (entry.isSymbolicLink() && !entry.name.endsWith('.class') && isFolder(full)) linked.push(full);
    else if (entry.isFile() || entry.isSymbolicLink()) (entry.name.endsWith('.class') ? names : others).push(entry.name);
  }
  return { names, others, subfolders, linked };
}

function isFolder(file: string): boolean {
  return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * Of the symbolic links to folders `links` found in `folder`, those a scan goes through: not one
 * to a folder holding `folder` (a cycle), nor to one it went through before (`seen`: real paths,
 * added to).
 */
export function linksToScan(folder: string, links: readonly string[], seen: Set<string>): string[] {
  const here = realOf(folder);
  return links.filter((link) => {
    const real = realOf(link);
    if (seen.has(real) || here === real || here.startsWith(real + path.sep)) return false;
    seen.add(real);
    return true;
  });
}

/**
 * The first symbolic link to a folder on the way from class output directory `dir` (not itself)
 * to class file `file`, if any: the agent's watcher registers no folder through one (its walk does
 * not follow links), so a class file there is never reloaded, while the JVM loads it.
 */
export function linkBetween(dir: string, file: string): string | undefined {
  const relative = path.relative(dir, path.dirname(file));
  if (relative === '' || relative.startsWith('..')) return undefined;
  let folder = dir;
  for (const part of relative.split(path.sep)) {
    folder = folder + path.sep + part;
    if (fs.lstatSync(folder, { throwIfNoEntry: false })?.isSymbolicLink()) return folder;
  }
  return undefined;
}

/** Whether a folder that cannot be listed (`error` from stat or readdir) is named unreadable: not when it vanished or is no folder. */
export function isUnreadableFolder(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code !== 'ENOENT' && code !== 'ENOTDIR';
}

/**
 * Folder by folder below `dir` (absolute, normalised), as {@link readFolder} gives them. A folder that
 * cannot be listed is skipped and added to `unreadable` (not one that vanished, or a missing `dir`).
 */
export function* classFolders(dir: string, unreadable: string[] = []): Generator<{ folder: string; names: string[]; others: string[] }> {
  const folders = [dir];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let listing;
    try {
      listing = readFolder(folder);
    } catch (error) {
      if (isUnreadableFolder(error)) unreadable.push(folder);
      continue;
    }
    folders.push(...listing.subfolders);
    yield { folder, names: listing.names, others: listing.others };
  }
}

/** A class file that is there but whose stamp cannot be read (a folder without search permission). */
export const UNREADABLE = 'unreadable';

/**
 * The stamp of a class file (through a symbolic link); undefined when it is gone or not a regular
 * file, {@link UNREADABLE} when it cannot be looked at.
 */
export function statClassFile(file: string): fs.Stats | typeof UNREADABLE | undefined {
  try {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    return stat?.isFile() ? stat : undefined;
  } catch {
    return UNREADABLE;
  }
}

/**
 * The ctime of `file`'s symbolic link itself (a link re-pointed later is younger than its target),
 * else `stat`'s; +Infinity, never before anything, when it vanished.
 */
export function linkCtimeMs(file: string, stat: fs.Stats): number {
  try {
    const own = fs.lstatSync(file);
    return own.isSymbolicLink() ? own.ctimeMs : stat.ctimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
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

/** SHA-256 of a file's bytes as lower-case hex, or undefined when it vanished or cannot be read. */
export function hashFile(file: string): string | undefined {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

/** Constant-pool entry sizes after the tag byte, by tag (JVMS table 4.4-B); Utf8 (1) is variable. */
const ENTRY_BYTES: Record<number, number> = {
  3: 4,
  4: 4,
  5: 8,
  6: 8,
  7: 2,
  8: 2,
  9: 4,
  10: 4,
  11: 4,
  12: 4,
  15: 3,
  16: 2,
  17: 4,
  18: 4,
  19: 2,
  20: 2,
};

/**
 * The binary class name a class file declares (`this_class`, JVMS §4.1, §4.4): `com.acme.Outer$Inner`
 * for `com/acme/Outer$Inner`; undefined when `bytes` is not well-formed. For a class file given to
 * `verify` outside every class output directory, whose path cannot give its name.
 */
export function declaredClassName(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (offset: number, n: number) => offset + n <= bytes.length;
  if (!need(0, 10) || view.getUint32(0) !== 0xcafebabe) return undefined;
  const count = view.getUint16(8);
  const utf8 = new Map<number, string>();
  const classes = new Map<number, number>();
  let offset = 10;
  for (let index = 1; index < count; index += 1) {
    if (!need(offset, 1)) return undefined;
    const tag = bytes[offset]!;
    offset += 1;
    if (tag === 1) {
      if (!need(offset, 2)) return undefined;
      const length = view.getUint16(offset);
      if (!need(offset + 2, length)) return undefined;
      utf8.set(index, new TextDecoder().decode(bytes.subarray(offset + 2, offset + 2 + length)));
      offset += 2 + length;
      continue;
    }
    const size = ENTRY_BYTES[tag];
    if (size === undefined || !need(offset, size)) return undefined;
    if (tag === 7) classes.set(index, view.getUint16(offset));
    offset += size;
    if (tag === 5 || tag === 6) index += 1; // long and double take two slots
  }
  if (!need(offset, 4)) return undefined;
  const nameIndex = classes.get(view.getUint16(offset + 2));
  const internal = nameIndex === undefined ? undefined : utf8.get(nameIndex);
  return internal === undefined || internal === '' ? undefined : internal.split('/').join('.');
}

/**
 * What the disk shows of a built class file against a JVM's start ({@link sightSince}): gone,
 * other bytes, changed while read (`unknown`), or the facts of the rule's pre-start kind.
 */
export type SinceStart = 'gone' | 'other-bytes' | 'unknown' | { ctimeMs: number; sight: SightFacts };

/**
 * Whether class file `file` (binary name `className`) still holds the build's bytes `sha256`, and
 * the facts of whether it has been at its path, as the JVM resolves it through its class path
 * (`paths`), since before `start` (evidence.ts, kind `pre-start`; placement.ts). `gone` when it
 * cannot be read, `unknown` when it changed while read. Never throws.
 */
export function sightSince(file: string, className: string, sha256: string, start: StartCut, paths: JvmPaths): SinceStart {
  const stat = statOf(file);
  const hash = stat === undefined ? undefined : hashFile(file);
  if (stat === undefined || hash === undefined) return 'gone';
  if (hash !== sha256) return 'other-bytes';
  // A file swapped between the stat and the read would lend the old file's times to the new bytes.
  const again = statOf(file);
  if (again?.ino !== stat.ino || again.ctimeMs !== stat.ctimeMs) return 'unknown';
  let dir = file;
  for (let i = className.split('.').length; i > 0; i -= 1) dir = path.dirname(dir);
  const sight: SightFacts = new Placement(start, paths).sight(file, dir, linkCtimeMs(file, stat));
  return { ctimeMs: stat.ctimeMs, sight };
}

/** `fs.statSync(file)` (links followed), or undefined when it cannot be stat'ed. */
export function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}
