/**
 * One agent's state (folder.ts says where): `owner.json` and `classes.idx`. A corrupt index is
 * ignored with a warning, never trusted; a corrupt owner file is moved aside, never replaced.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AgentLocation, projectDirOf } from '../agent/discover.js';
import * as z from 'zod/mini';
import { isToken } from '../agent/limits.js';
import { type ClassIndex, emptyIndex } from '../classes/columns.js';
import { moveCorruptAside, readStateFile, refuseUnwritable, removeStateFile, StateError, withStateFile, writeStateFile } from './files.js';
import { decodeIndex, encodeIndex } from './index-file.js';
import {
  agentStatePlace,
  checkoutRoot,
  createStateFolder,
  existingStateFolder,
  INDEX_FILE,
  LEGACY_CLASS_STATE_FILE,
  OWNER_FILE,
  stateFolderPath,
  type StatePlace,
} from './folder.js';
export { StateError } from './files.js';

const ownerStateSchema = z.object({
  owner: z.string().check(z.refine(isToken, 'not a valid owner token')),
  sessionId: z.string(),
  port: z.number().check(z.int()),
  updatedAt: z.string(),
  /** This owner may hold the build hold: from just before `started` until `ok` is acknowledged. Absent (unknown) in earlier versions. */
  held: z.optional(z.boolean()),
  /** DOCTOR's `pid` of the agent's JVM. Absent in files of earlier versions. */
  pid: z.optional(z.string()),
  /** The port file the agent was found by (absolute); absent for `--port` and in files of earlier versions. */
  portFile: z.optional(z.string()),
});

/** The owner token used against one agent session. */
export type OwnerState = z.infer<typeof ownerStateSchema>;

/**
 * What {@link readOwnerState} found. With `recoveredFrom` the file was corrupt and moved there;
 * `owner` is the token still readable in it (a hold left behind may be its); `sessionId`, `port`
 * and `updatedAt` as far as still readable, other fields '' or 0.
 */
export type SavedOwnerState = OwnerState & { recoveredFrom?: string };

/** An owner file is a line of JSON; anything larger than this is corrupt, in bytes. */
const OWNER_MAX_BYTES = 64 * 1024;

/**
 * Reads the owner token from `owner.json` of `place`; a corrupt file is moved aside to
 * `owner.json.corrupt-<UTC time>` (named through `warn`), and a token still readable is returned.
 * @returns the state, or undefined when there is none (or a corrupt one without a readable token).
 * @throws StateError when the file cannot be read, is no regular file or a symbolic link, or a corrupt
 *   one cannot be moved aside: it may name the owner of a hold left behind, so it is never replaced.
 */
export function readOwnerState(place: StatePlace, warn: (message: string) => void): SavedOwnerState | undefined {
  const dir = existingStateFolder(place);
  if (dir === undefined) return undefined;
  const file = path.join(dir, OWNER_FILE);
  let read;
  try {
    read = readStateFile(file, OWNER_MAX_BYTES);
  } catch (error) {
    throw error instanceof StateError ? error : new StateError(file, error, 'read');
  }
  if (read === undefined) return undefined;
  const text = read.bytes.toString('utf8');
  if (read.whole) {
    const parsed = parseJson(text, ownerStateSchema);
    if (parsed !== undefined) return parsed;
  }
  const aside = moveCorruptAside(file);
  const recovered = recoverOwner(text);
  warn(
    `${file} is corrupt; ignoring it: moved to ${aside}` +
      (recovered === undefined ? ' (no owner token could be read from it)' : ` (owner token ${recovered.owner} could still be read from it)`),
  );
  return recovered === undefined ? undefined : { ...recovered, recoveredFrom: aside };
}

/** What can still be read of a damaged owner file: the token (whole, between its quotes) and the session, if any. */
function recoverOwner(text: string): OwnerState | undefined {
  let fields: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null) fields = parsed as Record<string, unknown>;
  } catch {
    // Cut short or damaged: pick the fields out of the text. A token has no characters JSON escapes.
    const owner = /"owner"\s*:\s*"([A-Za-z0-9_-]{1,64})"/.exec(text)?.[1];
    const sessionId = /"sessionId"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(text)?.[1];
    fields = { owner, sessionId: sessionId === undefined ? undefined : parseJson(sessionId, z.string()) };
  }
  const { owner, sessionId, port, updatedAt } = fields;
  if (typeof owner !== 'string' || !isToken(owner)) return undefined;
  return {
    owner,
    sessionId: typeof sessionId === 'string' ? sessionId : '',
    port: Number.isInteger(port) ? (port as number) : 0,
    updatedAt: typeof updatedAt === 'string' ? updatedAt : '',
  };
}

/**
 * Saves the owner token for this agent session, whole (see {@link writeStateFile}); only the
 * fields of {@link OwnerState} are written.
 * @throws StateError when it cannot be written.
 */
export function writeOwnerState(place: StatePlace, state: OwnerState): void {
  const { owner, sessionId, port, updatedAt, held, pid, portFile } = state;
  // A token that holds nothing only spares a new one, and a crash of the machine ends the agent's hold too: no fsync for it.
  const survives = held === false ? 'process' : 'crash';
  writeStateFile(path.join(createStateFolder(place), OWNER_FILE), `${JSON.stringify({ owner, sessionId, port, updatedAt, held, pid, portFile })}\n`, survives);
}

/**
 * Reads the class index (see {@link ClassIndex}) from `classes.idx` in the state folder of `place` (layout: index-file.ts).
 * @returns the index, or an empty one (no record: everything is hashed again, and checked) when
 *   it is missing, of another version, or corrupt or unreadable (reported through `warn`).
 * @throws StateError when the state folder or the index is a symbolic link.
 */
export function readClassIndex(place: StatePlace, warn: (message: string) => void): ClassIndex {
  const dir = existingStateFolder(place);
  if (dir === undefined) return emptyIndex();
  const file = path.join(dir, INDEX_FILE);
  let index: ReturnType<typeof decodeIndex>;
  try {
    index = withStateFile(file, decodeIndex) ?? emptyIndex();
  } catch (error) {
    if (error instanceof StateError) throw error;
    warn(`cannot read ${file} (${(error as Error).message}); ignoring it`);
    return emptyIndex();
  }
  if (index === 'other-version') return emptyIndex();
  if (index !== 'corrupt') return index;
  warn(`${file} is corrupt; ignoring it (class files are hashed again and checked, and it is rewritten)`);
  return emptyIndex();
}

/**
 * Saves the class index whole (see {@link writeStateFile}), then removes the JSON class state
 * of earlier versions; the layout is in index-file.ts.
 * @throws StateError when it cannot be written (the previous index is then kept as it was).
 */
export function writeClassIndex(place: StatePlace, index: ClassIndex): void {
  const dir = createStateFolder(place);
  writeStateFile(path.join(dir, INDEX_FILE), encodeIndex(index));
  removeStateFile(path.join(dir, LEGACY_CLASS_STATE_FILE));
}

/**
 * Checks, before a run takes the hold, that it will be able to save the class index: a run that
 * finds out only after `started` ends holding output nothing was built into.
 * @throws StateError when a symbolic link or something other than a regular file is at `classes.idx`.
 */
export function checkClassIndexWritable(place: StatePlace): void {
  const dir = existingStateFolder(place);
  if (dir !== undefined) refuseUnwritable(path.join(dir, INDEX_FILE));
}

/** `text` parsed as JSON and checked by `schema`, or undefined. */
function parseJson<T>(text: string, schema: z.ZodMiniType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An agent this checkout used, as owner.json records it. A test JVM's agent overwrites the app's port
 * file and deletes it when the tests end (agent StatusServer.start) while the app's agent keeps
 * listening: this record still finds it, used only when DOCTOR shows the recorded agent session.
 */
export interface RememberedAgent {
  /** Its port, and the port file it was found by (source: that file's path). */
  location: AgentLocation;
  /** DOCTOR's `sessionId` when it was used (never ''). */
  sessionId: string;
  /** DOCTOR's `pid` when it was used. */
  pid: string;
}

/**
 * The agent recorded in owner.json at `place`, when the record names its port file, pid and session
 * (not earlier versions' or `--port` runs'), and that port file's state folder from `cwd` is `place`.
 * @param warn reports a corrupt owner.json (moved aside, as any read of it does).
 * @returns undefined when there is no such record, or it cannot be read (a build reading it later says why).
 */
function rememberedAt(place: StatePlace, cwd: string, warn: (message: string) => void): RememberedAgent | undefined {
  const saved = readIfCan(place, warn);
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
  return placesOf(checkoutRoot(cwd, [])).flatMap((place) => rememberedAt(place, cwd, warn) ?? []);
}

/** The state folders of `checkout`: its own `.reclazz/` and each `.reclazz/agents/<agent>/`, in name order. */
function placesOf(checkout: string): StatePlace[] {
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
  return [checkout, ...agents.map((agent) => ({ checkout, agent }))];
}

/**
 * Another folder of this checkout that keeps the record of the agent in session `agent.sessionId`
 * on `agent.port`, when `place` (the folder of the form this run used, folder.ts) has none or one
 * released: one agent may be reached by its port file and by its port number (`--port`), and the
 * record of a hold left through one is the other's too. A held record first, else (with none at
 * `place`) the last written. A record of another agent session (another app on that port, a
 * restarted one) is never taken; another folder's owner.json that cannot be read is passed over.
 * @param own what `place` holds for this agent session: none, released, or held (then undefined is returned).
 */
export function otherRecordPlace(
  place: StatePlace,
  agent: { port: number; sessionId: string },
  own: 'none' | 'released' | 'held',
  warn: (message: string) => void,
): StatePlace | undefined {
  if (own === 'held') return undefined;
  const here = stateFolderPath(place);
  const checkout = typeof place === 'string' ? place : place.checkout;
  const found = placesOf(checkout)
    .filter((other) => stateFolderPath(other) !== here)
    .flatMap((at) => {
      const saved = readIfCan(at, warn);
      const ours = saved !== undefined && saved.recoveredFrom === undefined && saved.sessionId === agent.sessionId && saved.port === agent.port;
      return ours ? [{ at, held: saved.held === true, updatedAt: saved.updatedAt }] : [];
    });
  const chosen = found.find((f) => f.held) ?? (own === 'none' ? [...found].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0] : undefined);
  const at = chosen?.at;
  if (at === undefined || typeof at === 'string') return at;
  const port = /^port-(\d+)$/.exec(at.agent)?.[1];
  return port === undefined ? at : { ...at, port: Number(port) };
}

/** owner.json of `place`, or undefined when it cannot be read (it is not this run's to fix). */
function readIfCan(place: StatePlace, warn: (message: string) => void): SavedOwnerState | undefined {
  try {
    return readOwnerState(place, warn);
  } catch (error) {
    if (error instanceof StateError) return undefined;
    throw error;
  }
}
