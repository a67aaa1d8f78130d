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
 * `.class` that are files or symbolic links. Folders reached through a symbolic link are not
 * entered (no cycles); unreadable folders are skipped.
 */
export function* classFolders(dir: string): Generator<{ folder: string; names: string[] }> {
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
export function statClassFile(file: string): fs.Stats | undefined {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat?.isFile() ? stat : undefined;
}
