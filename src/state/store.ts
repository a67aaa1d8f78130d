/**
 * reclazz-build's own state of one agent, in its state folder under the checkout root's
 * `.reclazz/` (state/place.ts says where): the owner token used against an agent session
 * (`owner.json`) and the class index
 * (`classes.idx`: the class files' stamps and hashes). Files are written whole and checked (see
 * {@link writeStateFile}) and never through a symbolic link. A corrupt index is ignored with a
 * warning, never trusted; a corrupt owner file is moved aside, never replaced or deleted.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import * as z from 'zod/mini';
import { isToken } from '../agent/limits.js';
import { isEvidence } from '../classes/evidence.js';
import { emptyIndex, HISTORY_MAX, SHA_BYTES, STAMP_FIELDS, type ClassIndex } from '../classes/columns.js';
import { moveCorruptAside, readStateFile, removeStateFile, StateError, writeStateFile } from './files.js';
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
});

/** The owner token used against one agent session. */
export type OwnerState = z.infer<typeof ownerStateSchema>;

/**
 * What {@link readOwnerState} found. With `recoveredFrom`, the file was corrupt and has been
 * moved there, and `owner` is the token still readable in it: a hold left behind may be this
 * token's, so try it before making a new one. Then `sessionId` is the one still readable, or ''
 * (no agent session matches it), `port` 0 and `updatedAt` '' when not readable.
 */
export type SavedOwnerState = OwnerState & { recoveredFrom?: string };

/** An owner file is a line of JSON; anything larger than this is corrupt, in bytes. */
const OWNER_MAX_BYTES = 64 * 1024;

/**
 * Reads the saved owner token from `owner.json` in the state folder of `place`. A corrupt one is never replaced or
 * deleted: it is moved aside to `owner.json.corrupt-<UTC time>`, a warning through `warn` names
 * where, and an owner token still readable in it is returned with `recoveredFrom` (see
 * {@link SavedOwnerState}).
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
  const { owner, sessionId, port, updatedAt, held } = state;
  writeStateFile(path.join(createStateFolder(place), OWNER_FILE), `${JSON.stringify({ owner, sessionId, port, updatedAt, held })}\n`);
}

const INDEX_MAGIC = Buffer.from('RCLZIDX3', 'latin1');
/** The magic without its version digit: an index of another version is "no record", rebuilt without a warning. */
const INDEX_FAMILY = INDEX_MAGIC.subarray(0, INDEX_MAGIC.length - 1);
/** magic, then u32 LE: row count, header bytes, path bytes, history bytes. */
const INDEX_PREFIX_BYTES = INDEX_MAGIC.length + 16;
/** Per row: directory number, stamp, SHA-256, evidence, tombstone flag. */
const ROW_BYTES = 4 + 8 * STAMP_FIELDS + SHA_BYTES + 1 + 1;

const indexHeaderSchema = z.object({
  sessionId: z.nullable(z.string()),
  dirs: z.array(z.string()),
});

/**
 * Reads the class index (see {@link ClassIndex}) from `classes.idx` in the state folder of `place`. Layout, little-endian:
 * `RCLZIDX3`, u32 row count, u32 header bytes, u32 path bytes, u32 history bytes; the header
 * (JSON: sessionId, dirs); the paths (UTF-8, each followed by NUL); per row a u32 directory
 * number; per row 4 float64 (size in bytes, mtimeMs, ctimeMs, inode); per row 32 bytes of
 * SHA-256; per row one evidence byte (classes/evidence.ts); per row one byte, 1 for a tombstone;
 * the history: per path that has one, u32 row, u8 count, that many 32-byte hashes; then the
 * SHA-256 of everything before it.
 * @returns the index, or an empty one (no record: everything is hashed again, and checked) when
 *   it is missing, of another version, or corrupt or unreadable (reported through `warn`).
 * @throws StateError when the state folder or the index is a symbolic link.
 */
export function readClassIndex(place: StatePlace, warn: (message: string) => void): ClassIndex {
  const dir = existingStateFolder(place);
  if (dir === undefined) return emptyIndex();
  const file = path.join(dir, INDEX_FILE);
  let bytes: Buffer;
  try {
    const read = readStateFile(file);
    if (read === undefined) return emptyIndex();
    bytes = read.bytes;
  } catch (error) {
    if (error instanceof StateError) throw error;
    warn(`cannot read ${file} (${(error as Error).message}); ignoring it`);
    return emptyIndex();
  }
  const otherVersion = bytes.subarray(0, INDEX_FAMILY.length).equals(INDEX_FAMILY) && !bytes.subarray(0, INDEX_MAGIC.length).equals(INDEX_MAGIC);
  if (otherVersion) return emptyIndex();
  const index = decodeIndex(bytes);
  if (index === undefined) warn(`${file} is corrupt; ignoring it (class files are hashed again and checked, and it is rewritten)`);
  return index ?? emptyIndex();
}

/**
 * Saves the class index whole (see {@link writeStateFile}), then removes the JSON class state
 * of earlier versions; see {@link readClassIndex} for the layout.
 * @throws StateError when it cannot be written (the previous index is then kept as it was).
 */
export function writeClassIndex(place: StatePlace, index: ClassIndex): void {
  const dir = createStateFolder(place);
  writeStateFile(path.join(dir, INDEX_FILE), encodeIndex(index));
  removeStateFile(path.join(dir, LEGACY_CLASS_STATE_FILE));
}

/** Encodes into one buffer of the exact size (at 50,000 files, copies of ~8 MB were the run's peak memory). */
function encodeIndex(index: ClassIndex): Buffer {
  const count = index.paths.length;
  const header = JSON.stringify({ sessionId: index.sessionId, dirs: index.dirs });
  const headerBytes = Buffer.byteLength(header, 'utf8');
  let pathBytes = 0;
  for (const file of index.paths) pathBytes += Buffer.byteLength(file, 'utf8') + 1;
  const histories: Array<[number, string[]]> = [];
  let historyBytes = 0;
  index.paths.forEach((file, row) => {
    const hashes = index.history.get(file);
    if (hashes === undefined || hashes.length === 0) return;
    histories.push([row, hashes]);
    historyBytes += 5 + SHA_BYTES * hashes.length;
  });
  const bodyBytes = INDEX_PREFIX_BYTES + headerBytes + pathBytes + count * ROW_BYTES + historyBytes;
  const out = Buffer.alloc(bodyBytes + 32);
  INDEX_MAGIC.copy(out);
  out.writeUInt32LE(count, 8);
  out.writeUInt32LE(headerBytes, 12);
  out.writeUInt32LE(pathBytes, 16);
  out.writeUInt32LE(historyBytes, 20);
  let at = INDEX_PREFIX_BYTES + out.write(header, INDEX_PREFIX_BYTES, 'utf8');
  for (const file of index.paths) {
    at += out.write(file, at, 'utf8');
    out[at++] = 0;
  }
  for (const column of [bytesOf(index.dirOf), bytesOf(index.stamps), index.shas, bytesOf(index.evidence), bytesOf(index.gone)]) at += column.copy(out, at);
  for (const [row, hashes] of histories) {
    at = out.writeUInt32LE(row, at);
    out[at++] = hashes.length;
    for (const hash of hashes) at += out.write(hash, at, 'hex');
  }
  createHash('sha256').update(out.subarray(0, bodyBytes)).digest().copy(out, bodyBytes);
  return out;
}

function decodeIndex(bytes: Buffer): ClassIndex | undefined {
  if (bytes.length < INDEX_PREFIX_BYTES + 32 || !bytes.subarray(0, INDEX_MAGIC.length).equals(INDEX_MAGIC)) return undefined;
  const count = bytes.readUInt32LE(8);
  const headerBytes = bytes.readUInt32LE(12);
  const pathBytes = bytes.readUInt32LE(16);
  const historyBytes = bytes.readUInt32LE(20);
  const bodyBytes = INDEX_PREFIX_BYTES + headerBytes + pathBytes + count * ROW_BYTES + historyBytes;
  if (bytes.length !== bodyBytes + 32) return undefined;
  const body = bytes.subarray(0, bodyBytes);
  if (!createHash('sha256').update(body).digest().equals(bytes.subarray(bodyBytes))) return undefined;
  let at = INDEX_PREFIX_BYTES;
  const take = (n: number) => bytes.subarray(at, (at += n));
  let header: z.infer<typeof indexHeaderSchema>;
  try {
    const parsed = indexHeaderSchema.safeParse(JSON.parse(take(headerBytes).toString('utf8')));
    if (!parsed.success) return undefined;
    header = parsed.data;
  } catch {
    return undefined;
  }
  const pathText = take(pathBytes).toString('utf8');
  const paths = count === 0 ? [] : pathText.slice(0, -1).split('\0');
  if (paths.length !== count || (count > 0 && !pathText.endsWith('\0'))) return undefined;
  // Copied into fresh arrays: a typed-array view needs an aligned offset.
  const dirOf = new Uint32Array(count);
  bytesOf(dirOf).set(take(4 * count));
  if (dirOf.some((d) => d >= header.dirs.length)) return undefined;
  const stamps = new Float64Array(count * STAMP_FIELDS);
  bytesOf(stamps).set(take(8 * STAMP_FIELDS * count));
  const shas = Buffer.from(take(SHA_BYTES * count));
  const evidence = Uint8Array.from(take(count));
  if (!evidence.every(isEvidence)) return undefined;
  const gone = Uint8Array.from(take(count));
  if (gone.some((flag) => flag > 1)) return undefined;
  const history = new Map<string, string[]>();
  const end = at + historyBytes;
  while (at < end) {
    if (end - at < 5) return undefined;
    const row = bytes.readUInt32LE(at);
    const n = bytes[at + 4]!;
    at += 5;
    if (row >= count || n === 0 || n > HISTORY_MAX || end - at < n * SHA_BYTES || history.has(paths[row]!)) return undefined;
    history.set(
      paths[row]!,
      Array.from({ length: n }, () => take(SHA_BYTES).toString('hex')),
    );
  }
  return { sessionId: header.sessionId, dirs: header.dirs, paths, dirOf, stamps, shas, evidence, gone, history };
}

/** The bytes of a typed array (a view, not a copy). Typed arrays are little-endian on every platform Node runs on here. */
function bytesOf(array: Uint32Array | Float64Array | Uint8Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
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
