/**
 * Where a build keeps its state (docs/state.md): the run lock in `.reclazz/`
 * at the checkout root, so that every run in one checkout is serialised whatever port file it
 * uses, and each agent's owner token and class index under that same folder, keyed by the
 * agent's port file. The agent's own port file stays where the agent writes it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../util/fs.js';
import { readStateFile, refuseLink, removeStateFile, StateError, writeStateFile } from './files.js';
import { createStateFolder, existingStateFolder, INDEX_FILE, OWNER_FILE, stateFolderPath, type StatePlace } from './folder.js';

/** The state files of one agent, moved from where earlier versions kept them. */
const AGENT_FILES = [OWNER_FILE, INDEX_FILE] as const;

/**
 * The checkout root of a run started in `cwd`: the nearest folder at or above it holding `.git`
 * (a folder, or the file of a linked worktree). Else the outermost folder holding the agents'
 * port files: `cwd` for those below it, the project folder of one above it or elsewhere (the
 * folder a `.reclazz/` or `.idea/reclazz/` port file belongs to; several: the folder holding
 * them all), or the nearest folder above that holding `.git`. A port file that is not in such a
 * place (`--port-file /tmp/x/agent.port`), or agents with nothing in common but the file
 * system's root, give `cwd`.
 * @param agents the agents found: the port file read (absolute) and its project folder.
 */
export function checkoutRoot(cwd: string, agents: ReadonlyArray<{ portFile?: string; projectDir: string }>): string {
  const git = gitAbove(cwd);
  if (git !== undefined) return git;
  const homes = agents
    .filter((a) => a.portFile !== undefined && a.projectDir !== path.dirname(a.portFile))
    .map((a) => (isInside(a.projectDir, cwd) ? cwd : a.projectDir));
  if (homes.length === 0) return cwd;
  let root = homes[0]!;
  for (const home of homes) while (!isInside(home, root)) root = path.dirname(root);
  if (path.dirname(root) === root) return cwd;
  return gitAbove(root) ?? root;
}

function gitAbove(start: string): string | undefined {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
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
  if (path.resolve(stateFolderPath(oldProjectDir)) === path.resolve(stateFolderPath(place))) return [];
  const from = existingStateFolder(oldProjectDir);
  if (from === undefined) return [];
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
