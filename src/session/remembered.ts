/**
 * The agent this checkout last used, as its owner.json records it (hold/owner.ts: port, DOCTOR's
 * `pid`, agent session and the port file it was found by). A test JVM's agent overwrites the
 * app's port file and deletes it when the tests end (agent StatusServer.start), while the app's
 * agent keeps listening: then this record still finds it. Only an agent that answers DOCTOR with
 * the recorded session is used (session/open.ts): another session is another app run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AgentLocation, projectDirOf } from '../agent/discover.js';
import { StateError } from '../state/files.js';
import { agentStatePlace, checkoutRoot, stateFolderPath, type StatePlace } from '../state/folder.js';
import { readOwnerState } from '../state/store.js';
import type { AgentInfo, RunEvent } from '../outcome/facts.js';
import { type RememberedWhy, warningText } from '../report/step-words.js';

/** An agent this checkout used: where it was, and what it must answer to be used again. */
export interface RememberedAgent {
  /** Its port, and the port file it was found by (source: that file's path). */
  location: AgentLocation;
  /** DOCTOR's `sessionId` when it was used (never ''). */
  sessionId: string;
  /** DOCTOR's `pid` when it was used. */
  pid: string;
}

/** A remembered agent tried in place of what was found, `why`, and `instead`: what stands when it is not that agent any more. */
export interface RememberedFallback<R> extends RememberedAgent {
  instead: R;
  why: RememberedWhy;
}

/**
 * Whether the agent `fallback` remembers answered DOCTOR with the recorded session and pid; if
 * so, says why it is used and announces it (`announce`), which session/open.ts left until now.
 */
export function sameSession<R>(
  fallback: RememberedFallback<R>,
  checked: { agent: AgentInfo },
  emit: (event: RunEvent) => void,
  announce: boolean,
): boolean {
  const { agent } = checked;
  if (agent.sessionId !== fallback.sessionId || agent.pid !== fallback.pid) return false;
  const { location } = fallback;
  emit({
    type: 'warning',
    message: warningText.rememberedAgent(fallback.why, location.portFile ?? location.source, agent.port, agent.pid),
  });
  if (announce) emit({ type: 'agent', agent });
  return true;
}

/**
 * The agent recorded in owner.json at `place`, when the record names its port file, pid and
 * session (records of earlier versions and of `--port` runs do not), and that port file's state
 * folder, seen from `cwd`, is `place` (a checkout moved since names other paths).
 * @param warn reports a corrupt owner.json (moved aside, as any read of it does).
 * @returns undefined when there is no such record, or it cannot be read (a build reading it later says why).
 */
function rememberedAt(place: StatePlace, cwd: string, warn: (message: string) => void): RememberedAgent | undefined {
  let saved;
  try {
    saved = readOwnerState(place, warn);
  } catch (error) {
    if (error instanceof StateError) return undefined;
    throw error;
  }
  if (saved?.pid === undefined || saved.portFile === undefined || saved.sessionId === '' || saved.recoveredFrom !== undefined)
    return undefined;
  const { port, portFile, sessionId, pid } = saved;
  if (port < 1 || port > 65535 || !path.isAbsolute(portFile)) return undefined;
  const location = { port, source: portFile, portFile, projectDir: projectDirOf(portFile) };
  const here = agentStatePlace(checkoutRoot(cwd, [location]), location);
  return stateFolderPath(here) === stateFolderPath(place) ? { location, sessionId, pid } : undefined;
}

/**
 * The agent recorded at `place` that was found by `location`'s port file on another port: what
 * that port file named before a test JVM's agent wrote its own port into it.
 */
export function rememberedBehind(
  place: StatePlace,
  location: AgentLocation,
  cwd: string,
  warn: (message: string) => void,
): RememberedAgent | undefined {
  const remembered = rememberedAt(place, cwd, warn);
  const { port, portFile } = remembered?.location ?? {};
  return portFile === location.portFile && port !== location.port ? remembered : undefined;
}

/**
 * Every agent recorded in the state folders of the checkout of `cwd` (its own `.reclazz/` and
 * each `.reclazz/agents/<agent>/`), as {@link rememberedAt} reads them.
 */
export function rememberedInCheckout(cwd: string, warn: (message: string) => void): RememberedAgent[] {
  const checkout = checkoutRoot(cwd, []);
  let agents: string[] = [];
  try {
    agents = fs
      .readdirSync(path.join(checkout, '.reclazz', 'agents'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    // No agents folder: only the checkout's own record.
  }
  const places: StatePlace[] = [checkout, ...agents.map((agent) => ({ checkout, agent }))];
  return places.flatMap((place) => rememberedAt(place, cwd, warn) ?? []);
}
