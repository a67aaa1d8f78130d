/**
 * The state folder `.reclazz/` of a project and the names reclazz-build keeps in it. The folder
 * and every one of these names must be the real thing, never a symbolic link: a link (a checkout
 * that ships `.reclazz` pointing elsewhere) would send writes and deletes out of the project.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isInterruptedWrite, lstatOrNone, refuseLink, StateError } from './files.js';

/** The owner token file. */
export const OWNER_FILE = 'owner.json';
/** The class index. */
export const INDEX_FILE = 'classes.idx';
/** The JSON class state of earlier versions; removed when the index is written. */
export const LEGACY_CLASS_STATE_FILE = 'classes.json';
/** The run lock (a folder, made by proper-lockfile). */
export const LOCK_DIR = 'build.lock';
/** Names the process holding the run lock. */
export const LOCK_HOLDER_FILE = 'build.lock.holder';

/** Everything reclazz-build itself keeps in the state folder (the agent's port file is not ours). */
const OWN_NAMES = [OWNER_FILE, INDEX_FILE, LEGACY_CLASS_STATE_FILE, LOCK_DIR, LOCK_HOLDER_FILE] as const;
/** The files replaced whole by temp file and rename, whose temp files a killed run may leave. */
const WRITTEN_NAMES = [OWNER_FILE, INDEX_FILE, LOCK_HOLDER_FILE] as const;

/** The state folder of a project. */
function stateDir(projectDir: string): string {
  return path.join(projectDir, '.reclazz');
}

/**
 * The state folder of `projectDir` if it exists.
 * @returns its path, or undefined when there is none.
 * @throws StateError when it is a symbolic link or not a folder.
 */
export function existingStateFolder(projectDir: string, access: 'read' | 'write' = 'read'): string | undefined {
  const dir = stateDir(projectDir);
  const stat = refuseLink(dir, access);
  if (stat === undefined) return undefined;
  if (!stat.isDirectory()) throw new StateError(dir, new Error('it is not a folder: move it away'), access);
  return dir;
}

/**
 * The state folder of `projectDir`, created (in an existing project folder) when missing.
 * @throws StateError when it is a symbolic link or not a folder, or cannot be created.
 */
export function createStateFolder(projectDir: string): string {
  const dir = stateDir(projectDir);
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new StateError(dir, error);
  }
  return existingStateFolder(projectDir, 'write') ?? createStateFolder(projectDir);
}

/**
 * Opens the state folder for a run: creates it when missing and refuses a symbolic link in the
 * place of any name reclazz-build keeps there, before anything is read or sent.
 * @returns the folder's path.
 * @throws StateError naming the link (or the folder when it cannot be created).
 */
export function openStateFolder(projectDir: string): string {
  const dir = createStateFolder(projectDir);
  for (const name of OWN_NAMES) refuseLink(path.join(dir, name), 'write');
  return dir;
}

/**
 * Removes the temp files that interrupted writes left in the state folder `dir` (see
 * {@link isInterruptedWrite}): regular files only, never a link or a folder, never any other
 * name. Call it holding the run lock, so no live write's temp file is taken. Files that cannot
 * be removed are left for a later run.
 */
export function removeInterruptedWrites(dir: string): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!isInterruptedWrite(entry.name, WRITTEN_NAMES)) continue;
    const file = path.join(dir, entry.name);
    try {
      if (lstatOrNone(file)?.isFile()) fs.unlinkSync(file);
    } catch {
      // Gone already, or not ours to remove: harmless to leave.
    }
  }
}
