/**
 * One agent's state (folder.ts says where): `owner.json` and `classes.idx`. A corrupt index is
 * ignored with a warning, never trusted; a corrupt owner file is moved aside, never replaced.
 */
import path from 'node:path';
import * as z from 'zod/mini';
import { isToken } from '../agent/limits.js';
import { type ClassIndex, emptyIndex } from '../classes/columns.js';
import { moveCorruptAside, readStateFile, removeStateFile, StateError, withStateFile, writeStateFile } from './files.js';
import { decodeIndex, encodeIndex } from './index-file.js';
import { createStateFolder, existingStateFolder, INDEX_FILE, LEGACY_CLASS_STATE_FILE, OWNER_FILE, type StatePlace } from './folder.js';
export { StateError } from './files.js';

const ownerStateSchema = z.object({
  owner: z.string().check(z.refine(isToken, 'not a valid owner token')),
  sessionId: z.string(),
  port: z.number().check(z.int()),
  updatedAt: z.string(),
  /**
   * Whether this owner may hold the agent's build hold: true from just before `started` is
   * sent until an `ok` is acknowledged. Absent in files of earlier versions (then unknown).
   */
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
 * `owner` is the token still readable in it (a hold left behind may be its), other fields '' or 0.
 */
export type SavedOwnerState = OwnerState & { recoveredFrom?: string };

/** An owner file is a line of JSON; anything larger than this is corrupt, in bytes. */
const OWNER_MAX_BYTES = 64 * 1024;

/**
 * Reads the owner token from `owner.json` of `place`. A corrupt file is moved aside to
 * `owner.json.corrupt-<UTC time>` (named through `warn`), and a token still readable is returned.
 * @returns the state, or undefined when there is none (or a corrupt one without a readable token).
 * @throws StateError when the file exists but cannot be read, is not a regular file or is a
 *   symbolic link, or when a corrupt one cannot be moved aside: it may name the owner of a hold
 *   left behind, so it must not be replaced by a new token.
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

/** `text` parsed as JSON and checked by `schema`, or undefined. */
function parseJson<T>(text: string, schema: z.ZodMiniType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
