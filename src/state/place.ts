/**
 * Where a build keeps its state (README "The `.reclazz/` folder"): the run lock in `.reclazz/`
 * at the checkout root, so that every run in one checkout is serialised whatever port file it
 * uses, and each agent's owner token and class index under that same folder, keyed by the
 * agent's port file. The agent's own port file stays where the agent writes it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../classes/dirs.js';
import { readStateFile, refuseLink, removeStateFile, StateError, writeStateFile } from './files.js';
import { createStateFolder, existingStateFolder, INDEX_FILE, OWNER_FILE, type StatePlace } from './folder.js';

/** The state files of one agent, moved from where earlier versions kept them. */
const AGENT_FILES = [OWNER_FILE, INDEX_FILE] as const;

/**
 * The checkout root of a run started in `cwd`: the nearest folder at or above it holding `.git`
 * (a folder, or the file of a linked worktree); else the outermost folder holding the port
 * files found: `cwd` for those below it, or the project folder of one found above it.
 * @param projectDirs the project folders of the agents found (absolute).
 */
export function checkoutRoot(cwd: string, projectDirs: readonly string[]): string {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) break;
  }
  let root = cwd;
  // A port file found above cwd: its project folder holds cwd. One outside (--port-file /tmp/x/agent.port) adds nothing.
  for (const dir of projectDirs) if (isInside(root, dir)) root = dir;
  return root;
}

/**
 * The state folder of an agent in `checkout`: the checkout root's own `.reclazz/` for the
 * agent whose port file is `<checkout>/.reclazz/agent.port`, or whose port was given as a
 * number; else `<checkout>/.reclazz/agents/<folder>-<12 hex>/`, named by the agent's project
 * folder and the SHA-256 of its port file's absolute path.
 */
export function agentStatePlace(checkout: string, agent: { portFile?: string; projectDir: string }): StatePlace {
  const { portFile } = agent;
  if (portFile === undefined || portFile === path.join(checkout, '.reclazz', 'agent.port')) return checkout;
  const folder = path.basename(agent.projectDir).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'agent';
  const hash = createHash('sha256').update(portFile).digest('hex').slice(0, 12);
  return { checkout, agent: `${folder}-${hash}` };
}

/**
 * Moves an agent's state from where earlier versions kept it (`.reclazz/` of the folder holding
 * its port file: a module's, or `/tmp/x/` for `--port-file /tmp/x/agent.port`) into `place`,
 * once: a file is moved only when `place` has none (else the old one is left as it was), and
 * removed from the old folder only after it was written whole. Call it holding the run lock.
 * @param oldProjectDir the folder whose `.reclazz/` held the agent's state before.
 * @returns the files moved, from and to.
 * @throws StateError when a file cannot be read, written or removed, or a link is in the way:
 *   an owner token may name a hold left behind, so it is never dropped.
 */
export function moveEarlierState(oldProjectDir: string, place: StatePlace): Array<{ from: string; to: string }> {
  const from = existingStateFolder(oldProjectDir);
  if (from === undefined) return [];
  const moved: Array<{ from: string; to: string }> = [];
  for (const name of AGENT_FILES) {
    const old = path.join(from, name);
    const bytes = readWhole(old);
    if (bytes === undefined) continue;
    const dir = createStateFolder(place);
    if (path.resolve(dir) === path.resolve(from)) return [];
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
