/**
 * What nothing else decides of what the agent watches, asked of the agent: `DIAGNOSE <class>`
 * says whether any of its watched class output directories holds a compiled file for the name
 * (protocol.md "What the agent's source shows": DIAGNOSE; agent ReloadDiagnostics). One class per
 * folder is asked, and its answer stands for the folder: the agent finds a file at the path its
 * binary name gives under a watched directory, so its folder is watched, or it finds none there.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentConnection } from '../agent/connection.js';
import { toLocal, type PathMapEntry } from '../agent/path-map.js';
import { askDiagnose } from '../agent/requests.js';
import type { ClassChange } from '../outcome/facts.js';

/** At most this many folders are asked about in one build: each is one DIAGNOSE, which walks the agent's folders. */
const MAX_FOLDERS = 16;

/** What DIAGNOSE said of the folders asked about: watched (the agent found our file there) or not (it found no file of that name). */
export type FolderAnswers = ReadonlyMap<string, boolean>;

/**
 * Asks DIAGNOSE for one class of each folder of `undecided` (at most {@link MAX_FOLDERS}),
 * those with the most classes first. A folder whose class the agent found at our path is
 * watched; one for which it found no file of that name is not; any other answer (another
 * file of that name, no answer) leaves the folder unknown. `timeoutMs` bounds the round trip.
 */
export async function diagnoseFolders(
  connection: AgentConnection,
  undecided: readonly ClassChange[],
  agent: { map: readonly PathMapEntry[]; workingDirectory: string },
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<FolderAnswers> {
  const byFolder = new Map<string, ClassChange[]>();
  for (const change of undecided) {
    const folder = path.dirname(change.path);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), change]);
  }
  const asked = [...byFolder.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, MAX_FOLDERS)
    .map(([folder, changes]) => ({ folder, change: changes[0]! }));
  const answers = new Map<string, boolean>();
  if (asked.length === 0) return answers;
  const files = await askDiagnose(
    connection,
    asked.map((a) => a.change.className),
    timeoutMs,
    signal,
  );
  for (const { folder, change } of asked) {
    const found = files?.get(change.className)?.files;
    if (found === undefined) continue;
    // A relative watched directory names its files relative to the agent's working directory.
    const local = (file: string) => path.resolve(agent.workingDirectory, toLocal(agent.map, file));
    if (found.length === 0) answers.set(folder, false);
    else if (found.some((file) => sameFile(local(file), change.path))) answers.set(folder, true);
  }
  return answers;
}

function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}
