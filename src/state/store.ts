/**
 * reclazz-build's own state in the project's `.reclazz/` folder (beside the agent's port file):
 * the owner token used against an agent session, and the class files' stamps and hashes. Files are written whole (temp file and
 * rename); a corrupt or unreadable one is ignored with a warning, never trusted.
 */
import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { isToken } from '../agent/protocol.js';
import type { Snapshot } from '../classes/snapshot.js';

/** The state folder of a project. */
export function stateDir(projectDir: string): string {
  return path.join(projectDir, '.reclazz');
}

const ownerStateSchema = z.object({
  owner: z.string().refine(isToken, 'not a valid owner token'),
  sessionId: z.string(),
  port: z.number().int(),
  updatedAt: z.string(),
});

/** The owner token used against one agent session. */
export type OwnerState = z.infer<typeof ownerStateSchema>;

const OWNER_FILE = 'owner.json';
const CLASS_STATE_FILE = 'classes.json';

/**
 * Reads the saved owner token. Returns undefined when there is none; a corrupt file is
 * reported through `warn` and ignored.
 */
export function readOwnerState(projectDir: string, warn: (message: string) => void): OwnerState | undefined {
  return readJson(path.join(stateDir(projectDir), OWNER_FILE), ownerStateSchema, warn);
}

/** Saves the owner token for this agent session, whole (temp file and rename). */
export function writeOwnerState(projectDir: string, state: OwnerState): void {
  writeJson(path.join(stateDir(projectDir), OWNER_FILE), state);
}

const classStateSchema = z.object({
  version: z.literal(2),
  sessionId: z.string().nullable(),
  held: z.boolean(),
  files: z.array(z.tuple([z.string(), z.string(), z.number(), z.number(), z.number(), z.number(), z.string()])),
});

/**
 * The class files as of the end of the last run: their stamps and hashes (so unchanged files
 * are not re-hashed) and, when that run left the hold behind (`held`), the baseline the agent
 * still has live: the next run of the same agent session compares against it, because files a
 * failed build rewrote or deleted have not been reloaded.
 */
export interface ClassState {
  sessionId: string | null;
  held: boolean;
  files: Snapshot;
}

/** Reads the class state of the last run; empty when missing or corrupt (then everything is hashed). */
export function readClassState(projectDir: string, warn: (message: string) => void): ClassState {
  const parsed = readJson(path.join(stateDir(projectDir), CLASS_STATE_FILE), classStateSchema, warn);
  const files: Snapshot = new Map();
  for (const [file, dir, size, mtimeMs, ctimeMs, ino, sha256] of parsed?.files ?? []) files.set(file, { dir, size, mtimeMs, ctimeMs, ino, sha256 });
  return { sessionId: parsed?.sessionId ?? null, held: parsed?.held ?? false, files };
}

/** Saves the class state whole (per file: path, class output directory, size, mtimeMs, ctimeMs, inode, sha256). */
export function writeClassState(projectDir: string, state: ClassState): void {
  const files = [...state.files].map(([file, e]) => [file, e.dir, e.size, e.mtimeMs, e.ctimeMs, e.ino, e.sha256]);
  writeJson(path.join(stateDir(projectDir), CLASS_STATE_FILE), { version: 2, sessionId: state.sessionId, held: state.held, files });
}

function readJson<T>(file: string, schema: z.ZodType<T>, warn: (message: string) => void): T | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warn(`cannot read ${file} (${(error as Error).message}); ignoring it`);
    return undefined;
  }
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through to the warning
  }
  warn(`${file} is corrupt; ignoring it (it is rewritten at the end of this run)`);
  return undefined;
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic.sync(file, `${JSON.stringify(value)}\n`);
}
