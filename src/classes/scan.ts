/**
 * Reading class output directories: folder by folder, with stamps and SHA-256, giving the
 * event loop a turn every {@link SLICE_MS} ms so timers keep running however large the tree.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** How long synchronous scanning and hashing may run before the event loop gets a turn, in ms. */
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
 * Folder by folder below `dir` (absolute, normalised): the names of its entries ending in
 * `.class` that are files or symbolic links, and of its other files (`others`). Folders reached
 * through a symbolic link are not entered (no cycles); a folder that cannot be listed is skipped
 * and added to `unreadable` (one that vanished, or a missing `dir`, is not).
 */
export function* classFolders(dir: string, unreadable: string[] = []): Generator<{ folder: string; names: string[]; others: string[] }> {
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

/**
 * Like {@link classFolders}, but only the folders of `only` that are `dir` or below it, each
 * without the folders below it (watch mode's hints name every folder that changed).
 */
export function* listedFolders(
  dir: string,
  only: ReadonlySet<string>,
  unreadable: string[] = [],
): Generator<{ folder: string; names: string[]; others: string[] }> {
  const prefix = dir + path.sep;
  for (const folder of only) {
    if (folder !== dir && !folder.startsWith(prefix)) continue;
    const { value } = classFolders(folder, unreadable).next();
    if (value !== undefined) yield value;
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
