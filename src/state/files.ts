/**
 * File access for the state folder that never follows a symbolic link (lstat, O_NOFOLLOW). Files
 * are replaced whole, so a full disk or a killed run leaves the previous one as it was.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A file or folder in the state folder that cannot be written (or read); `path` names it. */
export class StateError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
    access: 'read' | 'write' = 'write',
  ) {
    super(`cannot ${access} ${path} (${(cause as Error).message})`, { cause });
    this.name = 'StateError';
  }
}

/** Runs `write`, turning a file-system error into a {@link StateError} naming `file` (a StateError passes as it is). */
function writingState<T>(file: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    throw error instanceof StateError ? error : new StateError(file, error);
  }
}

// 0 where the platform lacks the flag (Windows): the lstat checks still apply there.
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const CREATE_FLAGS = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | NOFOLLOW;
// O_NONBLOCK: a FIFO swapped in after the lstat must not block the open.
const READ_FLAGS = fs.constants.O_RDONLY | NOFOLLOW | (fs.constants.O_NONBLOCK ?? 0);

/** The refusal for a symbolic link at `file`, with the fix. */
function linkRefused(file: string, access: 'read' | 'write'): StateError {
  return new StateError(file, new Error('it is a symbolic link, and reclazz-build never follows links in its state folder: remove the link'), access);
}

/** lstat, or undefined when nothing is there. */
export function lstatOrNone(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Refuses a symbolic link at `file`.
 * @returns its lstat, or undefined when nothing is there.
 * @throws StateError for a link, or when it cannot be checked.
 */
export function refuseLink(file: string, access: 'read' | 'write'): fs.Stats | undefined {
  let stat: fs.Stats | undefined;
  try {
    stat = lstatOrNone(file);
  } catch (error) {
    throw new StateError(file, error, access);
  }
  if (stat?.isSymbolicLink()) throw linkRefused(file, access);
  return stat;
}

/**
 * Refuses what no write can replace at `file`: a symbolic link, or something other than a regular file.
 * @throws StateError naming `file`.
 */
export function refuseUnwritable(file: string): void {
  const stat = refuseLink(file, 'write');
  if (stat !== undefined && !stat.isFile()) throw new StateError(file, new Error('it is not a regular file: move it away'));
}

/** What {@link readStateFile} read. */
export interface ReadFile {
  bytes: Buffer;
  /** False when the file holds more than the limit: `bytes` is then its first `limit` bytes. */
  whole: boolean;
}

/**
 * Reads a regular file without following a link, at most `limit` bytes.
 * @returns undefined when there is no file.
 * @throws StateError when `file` is a symbolic link; a plain Error when it is not a regular file
 *   (a folder, a FIFO: never opened) or cannot be read (the caller decides what that means).
 */
export function readStateFile(file: string, limit = Number.POSITIVE_INFINITY): ReadFile | undefined {
  return withStateFile(file, (fd, size) => {
    const want = Math.min(size, limit);
    const bytes = Buffer.allocUnsafe(want);
    const got = readAt(fd, bytes, 0);
    return { bytes: bytes.subarray(0, got), whole: size <= limit };
  });
}

/**
 * Opens a regular file without following a link and hands `read` its descriptor and size in
 * bytes (for a reader that takes it in pieces); the file is closed after.
 * @returns what `read` returned; undefined when there is no file.
 * @throws as {@link readStateFile} does, and what `read` throws.
 */
export function withStateFile<T>(file: string, read: (fd: number, size: number) => T): T | undefined {
  const stat = refuseLink(file, 'read');
  if (stat === undefined) return undefined;
  if (!stat.isFile()) throw new Error('it is not a regular file');
  let fd: number;
  try {
    fd = fs.openSync(file, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // Replaced by a link since the lstat (FreeBSD says EMLINK).
    if (code === 'ELOOP' || code === 'EMLINK') throw linkRefused(file, 'read');
    throw error;
  }
  try {
    const opened = fs.fstatSync(fd);
    if (!opened.isFile() || opened.ino !== stat.ino || opened.dev !== stat.dev) throw new Error('it was replaced while being read');
    return read(fd, opened.size);
  } finally {
    fs.closeSync(fd);
  }
}

/** Fills `into` from file position `at` (fewer bytes at the end of the file). @returns the bytes read */
export function readAt(fd: number, into: Uint8Array, at: number): number {
  let got = 0;
  while (got < into.length) {
    const n = fs.readSync(fd, into, got, into.length - got, at + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/** The temp file name a write of `file` uses: `<name>.tmp-<pid>-<8 hex>`, beside it. */
function tempName(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * The temp files of interrupted writes of the files named `names`: this module's
 * `<name>.tmp-<pid>-<8 hex>`, and `<name>.<number>` of write-file-atomic, which earlier
 * versions used (and a claimed `build.lock.holder.<pid>`).
 */
export function isInterruptedWrite(entry: string, names: readonly string[]): boolean {
  return names.some((name) => entry.startsWith(`${name}.`) && /^(tmp-\d+-[0-9a-f]{8}|\d{1,10})$/.test(entry.slice(name.length + 1)));
}

/** What a state file must survive: `crash` (default) of the machine, or only this `process` (no fsync). */
export type Survives = 'crash' | 'process';

/**
 * Replaces `file` whole with `data`: an exclusive temp file beside it, written, fsynced and renamed
 * over it, then the folder fsynced (neither with `survives: 'process'`). On error `file` stays.
 * @throws StateError naming `file` when it is a symbolic link or not a regular file, or when
 *   any step fails (ENOSPC, EFBIG, EACCES...).
 */
export function writeStateFile(file: string, data: Buffer | string | Pieces, survives: Survives = 'crash'): void {
  const bytes: Pieces = typeof data === 'string' ? whole(Buffer.from(data, 'utf8')) : Buffer.isBuffer(data) ? whole(data) : data;
  refuseUnwritable(file);
  const temp = tempName(file);
  let fd: number | undefined;
  let created = false;
  try {
    fd = fs.openSync(temp, CREATE_FLAGS, 0o666);
    created = true;
    writeAll(fd, bytes);
    if (survives === 'crash') fs.fsyncSync(fd);
    const closing = fd;
    fd = undefined;
    fs.closeSync(closing);
    fs.renameSync(temp, file);
    created = false;
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    // Only a temp file this call created: O_EXCL failing means the name was someone else's.
    if (created) unlinkQuietly(temp);
    throw new StateError(file, error);
  }
  if (survives === 'crash') syncFolder(path.dirname(file), file);
}

/**
 * A file's bytes given in pieces, so that a large one never sits in memory whole: `size` bytes
 * in all, in the order `pieces` yields them; each piece is written before the next is asked for
 * (so a piece may be a buffer the next one reuses).
 */
export interface Pieces {
  size: number;
  pieces: Iterable<Uint8Array>;
}

const whole = (bytes: Buffer): Pieces => ({ size: bytes.length, pieces: [bytes] });

function writeAll(fd: number, bytes: Pieces): void {
  let done = 0;
  try {
    for (const piece of bytes.pieces) {
      let at = 0;
      while (at < piece.length) {
        const n = fs.writeSync(fd, piece, at, piece.length - at, done);
        if (n <= 0) throw new Error('the file system accepted no more bytes');
        at += n;
        done += n;
      }
    }
    if (done !== bytes.size) throw new Error(`${done} bytes were given where ${bytes.size} were announced`);
  } catch (error) {
    throw new Error(`${(error as Error).message}; wrote ${done} of ${bytes.size} bytes, the previous file is kept`, { cause: error });
  }
}

function unlinkQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    // Already failing; a temp file left behind is removed by the next run.
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already failing: the first error is the one to report.
  }
}

/** fsync errors meaning the platform or file system cannot sync a folder (not a failed write). */
const NO_FOLDER_SYNC = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'EACCES', 'EISDIR', 'EBADF']);

/** Makes a rename in `dir` durable; `file` is named if that fails. Not on Windows, which cannot open a folder. */
function syncFolder(dir: string, file: string): void {
  if (process.platform === 'win32') return;
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | NOFOLLOW);
    fs.fsyncSync(fd);
  } catch (error) {
    if (!NO_FOLDER_SYNC.has((error as NodeJS.ErrnoException).code ?? '')) throw new StateError(file, new Error(`renamed into place, but its folder could not be synced: ${(error as Error).message}`));
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
}

/**
 * Removes `file` when it is a regular file; nothing there is fine.
 * @throws StateError when it is a symbolic link or something else (never removed), or cannot be removed.
 */
export function removeStateFile(file: string): void {
  const stat = refuseLink(file, 'write');
  if (stat === undefined) return;
  if (!stat.isFile()) throw new StateError(file, new Error('it is not a regular file: move it away'));
  writingState(file, () => fs.rmSync(file, { force: true }));
}

/**
 * Moves a corrupt regular file aside to `<file>.corrupt-<UTC time>` (`-2`, `-3`... when taken:
 * an earlier one is never replaced), never following a link.
 * @returns the new path.
 * @throws StateError naming `file` when it cannot be moved.
 */
export function moveCorruptAside(file: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  let aside = '';
  try {
    for (let n = 1; aside === '' || lstatOrNone(aside) !== undefined; n++) aside = `${file}.corrupt-${stamp}${n === 1 ? '' : `-${n}`}`;
    fs.renameSync(file, aside);
  } catch (error) {
    throw new StateError(file, new Error(`it is corrupt, and moving it aside to ${aside} failed: ${(error as Error).message}`));
  }
  syncFolder(path.dirname(file), aside);
  return aside;
}
