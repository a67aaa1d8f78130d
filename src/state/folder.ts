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

/** The folder of per-agent state inside the checkout's state folder. */
const AGENTS_DIR = 'agents';

/**
 * Where one agent's state lives (see state/place.ts): a checkout root, whose `.reclazz/` holds
 * the run lock and the state of the agent whose port file is the root's own; or one agent's
 * folder `<checkout>/.reclazz/agents/<agent>/`.
 */
export type StatePlace = string | { checkout: string; agent: string };

/** The folders from the checkout's `.reclazz/` down to the state folder of `place`. */
function stateDirs(place: StatePlace): string[] {
  const root = path.join(typeof place === 'string' ? place : place.checkout, '.reclazz');
  if (typeof place === 'string') return [root];
  return [root, path.join(root, AGENTS_DIR), path.join(root, AGENTS_DIR, place.agent)];
}

/** The path of the state folder of `place` (whether or not it exists). */
export function stateFolderPath(place: StatePlace): string {
  return stateDirs(place).at(-1)!;
}

/**
 * The state folder of `place` if it exists.
 * @returns its path, or undefined when there is none.
 * @throws StateError when it, or a folder above it up to `.reclazz/`, is a symbolic link or not a folder.
 */
export function existingStateFolder(place: StatePlace, access: 'read' | 'write' = 'read'): string | undefined {
  const dirs = stateDirs(place);
  for (const dir of dirs) {
    const stat = refuseLink(dir, access);
    if (stat === undefined) return undefined;
    if (!stat.isDirectory()) throw new StateError(dir, new Error('it is not a folder: move it away'), access);
  }
  return dirs.at(-1);
}

/** What `.reclazz/.gitignore` says: nothing in the folder, itself included, belongs in version control. */
const GITIGNORE = '# written by reclazz-build: its state, never to be committed\n*\n';

/**
 * Writes `.gitignore` into the checkout's `.reclazz/` when it has none (never through a link:
 * an exclusive create), so the folder keeps itself out of version control. Best effort: a
 * folder it cannot write to only means the user adds `.reclazz/` to their own `.gitignore`.
 */
function ignoreItself(root: string): void {
  try {
    fs.writeFileSync(path.join(root, '.gitignore'), GITIGNORE, { flag: 'wx' });
  } catch {
    // There already (the user's own, or ours), or not writable: nothing to do.
  }
}

/**
 * The state folder of `place`, created (in an existing checkout folder) when missing.
 * @throws StateError when it or a folder above it is a symbolic link or not a folder, or cannot be created.
 */
export function createStateFolder(place: StatePlace): string {
  for (const dir of stateDirs(place)) {
    try {
      fs.mkdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new StateError(dir, error);
    }
    // Checked level by level: a link made in the way between two mkdirs is refused, never entered.
    const stat = refuseLink(dir, 'write');
    if (!stat?.isDirectory()) throw new StateError(dir, new Error('it is not a folder: move it away'));
  }
  return stateDirs(place).at(-1)!;
}

/**
 * Opens the state folder for a run: creates it when missing (with its `.gitignore`) and refuses a symbolic link in the
 * place of any name reclazz-build keeps there, before anything is read or sent.
 * @returns the folder's path.
 * @throws StateError naming the link (or the folder when it cannot be created).
 */
export function openStateFolder(checkout: string): string {
  const dir = createStateFolder(checkout);
  ignoreItself(dir);
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
