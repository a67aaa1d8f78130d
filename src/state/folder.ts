/**
 * The state folder `.reclazz/` of a project and the names reclazz-build keeps in it. The folder
 * and every one of these names must be the real thing, never a symbolic link: a link (a checkout
 * that ships `.reclazz` pointing elsewhere) would send writes and deletes out of the project.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isInterruptedWrite, lstatOrNone, readStateFile, refuseLink, removeStateFile, StateError, writeStateFile } from './files.js';
import { createHash } from 'node:crypto';
import { checkoutOf, isInside } from '../util/fs.js';

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
/** The output of the last `--restart-command`, and of the app it started for as long as that app writes there. */
export const RESTART_LOG = 'restart.log';

/** Everything reclazz-build itself keeps in the state folder (the agent's port file is not ours). */
const OWN_NAMES = [OWNER_FILE, INDEX_FILE, LEGACY_CLASS_STATE_FILE, LOCK_DIR, LOCK_HOLDER_FILE, RESTART_LOG] as const;
/** The files replaced whole by temp file and rename, whose temp files a killed run may leave. */
const WRITTEN_NAMES = [OWNER_FILE, INDEX_FILE, LOCK_HOLDER_FILE] as const;

/** The folder of per-agent state inside the checkout's state folder. */
const AGENTS_DIR = 'agents';

/**
 * Where one agent's state lives (see state/folder.ts): a checkout root, whose `.reclazz/` holds
 * the run lock and the state of the agent whose port file is the root's own; or one agent's
 * folder `<checkout>/.reclazz/agents/<agent>/`.
 */
export type StatePlace = string | { checkout: string; agent: string; port?: number };

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

/** Writes `.gitignore` into the checkout's `.reclazz/` when it has none (exclusive create). Best effort. */
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
 * Removes the temp files interrupted writes left in `dir` (regular files only). Call it holding
 * the run lock, so no live write's temp file is taken.
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

/**
 * Where a build keeps its state (docs/state.md): the run lock at the checkout root's `.reclazz/`,
 * so every run in one checkout is serialised, and each agent's state below it, by port file.
 */

/** The state files of one agent, moved from where earlier versions kept them. */
const AGENT_FILES = [OWNER_FILE, INDEX_FILE] as const;

/**
 * The checkout root of a run started in `cwd`: the nearest folder at or above it holding `.git`
 * (folder or worktree file); else the folder holding all agents' homes (or `.git` above it): an
 * agent's home is the checkout its project folder is in, else `cwd` for one below it, else its
 * project folder; else `cwd` (a port file elsewhere, or agents sharing only `/`).
 * @param agents the agents found: the port file read (absolute) and its project folder.
 */
export function checkoutRoot(cwd: string, agents: ReadonlyArray<{ portFile?: string; projectDir: string }>): string {
  const git = checkoutOf(cwd);
  if (git !== undefined) return git;
  const homes = agents
    .filter((a) => a.portFile !== undefined && a.projectDir !== path.dirname(a.portFile))
    .map((a) => checkoutOf(a.projectDir) ?? (isInside(a.projectDir, cwd) ? cwd : a.projectDir));
  if (homes.length === 0) return cwd;
  let root = homes[0]!;
  for (const home of homes) while (!isInside(home, root)) root = path.dirname(root);
  if (path.dirname(root) === root) return cwd;
  return checkoutOf(root) ?? root;
}

/**
 * The state folder of an agent in `checkout`: the checkout root's own `.reclazz/` for the agent
 * whose port file is `<checkout>/.reclazz/agent.port`; `<checkout>/.reclazz/agents/port-<port>/`
 * for a port given as a number (`port` set), since any agent may be on that port, the root's own
 * or another checkout's, and each keeps its own owner token; else
 * `<checkout>/.reclazz/agents/<folder>-<12 hex>/`, named by the agent's project folder and the
 * SHA-256 of its port file's absolute path.
 */
export function agentStatePlace(checkout: string, agent: { port: number; portFile?: string; projectDir: string }): StatePlace {
  const { portFile, port } = agent;
  if (portFile === undefined) return { checkout, agent: `port-${port}`, port };
  if (portFile === path.join(checkout, '.reclazz', 'agent.port')) return checkout;
  const folder = path.basename(agent.projectDir).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'agent';
  const hash = createHash('sha256').update(portFile).digest('hex').slice(0, 12);
  return { checkout, agent: `${folder}-${hash}` };
}

/**
 * Moves an agent's state from where earlier versions kept it (`.reclazz/` beside its port file)
 * into `place`: only when `place` has none, and removed only once written whole. Hold the run lock.
 * Never from another checkout (a folder with its own `.git`, a submodule's too): its `.reclazz/` is
 * the state of the runs there, never touched from here.
 * @param oldProjectDir the folder whose `.reclazz/` held the agent's state before.
 * @returns the files moved, from and to.
 * @throws StateError when a file cannot be read, written or removed, or a link is in the way:
 *   an owner token may name a hold left behind, so it is never dropped.
 */
export function moveEarlierState(oldProjectDir: string, place: StatePlace): Array<{ from: string; to: string }> {
  const port = typeof place === 'string' ? undefined : place.port;
  // A port given as a number kept its state in the checkout's own `.reclazz/` before, beside the root agent's.
  const olds = typeof place === 'string' || port === undefined ? [oldProjectDir] : [...new Set([place.checkout, oldProjectDir])];
  return olds.flatMap((old) => moveFrom(old, place, port));
}

/** {@link moveEarlierState} from one folder; for a port given as a number, only a record of that port found by none of the port files. */
function moveFrom(oldProjectDir: string, place: StatePlace, port: number | undefined): Array<{ from: string; to: string }> {
  if (path.resolve(stateFolderPath(oldProjectDir)) === path.resolve(stateFolderPath(place))) return [];
  const home = checkoutOf(oldProjectDir);
  if (home !== undefined && home !== checkoutOf(typeof place === 'string' ? place : place.checkout)) return [];
  const from = existingStateFolder(oldProjectDir);
  if (from === undefined) return [];
  if (port !== undefined && !recordsPort(readWhole(path.join(from, OWNER_FILE)), port)) return [];
  const moved: Array<{ from: string; to: string }> = [];
  for (const name of AGENT_FILES) {
    const old = path.join(from, name);
    const bytes = readWhole(old);
    if (bytes === undefined) continue;
    const dir = createStateFolder(place);
    const target = path.join(dir, name);
    if (refuseLink(target, 'write') !== undefined) continue;
    writeStateFile(target, bytes);
    removeStateFile(old);
    moved.push({ from: old, to: target });
  }
  return moved;
}

function readWhole(file: string): Buffer | undefined {
  try {
    return readStateFile(file)?.bytes;
  } catch (error) {
    throw error instanceof StateError ? error : new StateError(file, error, 'read');
  }
}

/** True when owner.json's `bytes` record the agent on `port` given as a number (no port file): that agent's state. */
function recordsPort(bytes: Buffer | undefined, port: number): boolean {
  try {
    const saved = bytes === undefined ? undefined : (JSON.parse(bytes.toString('utf8')) as { port?: unknown; portFile?: unknown });
    return saved?.port === port && saved.portFile === undefined;
  } catch {
    // Not readable as a record: whose it is cannot be told, so it stays where it is.
    return false;
  }
}
