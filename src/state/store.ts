/**
 * reclazz-build's own state in the project's `.reclazz/` folder (beside the agent's port file):
 * the owner token of a hold a run may have left behind, and the hash index that lets change
 * detection skip re-hashing unchanged class files. Files are written whole (temp file and
 * rename); a corrupt or unreadable one is ignored with a warning, never trusted.
 */
import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { isToken } from '../agent/protocol.js';
import type { HashIndex } from '../classes/snapshot.js';

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
const INDEX_FILE = 'class-index.json';

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

const indexSchema = z.object({
  version: z.literal(1),
  files: z.array(z.tuple([z.string(), z.number(), z.number(), z.number(), z.number(), z.string()])),
});

/** Reads the hash index of the last run; empty when missing or corrupt (then everything is hashed). */
export function readHashIndex(projectDir: string, warn: (message: string) => void): HashIndex {
  const parsed = readJson(path.join(stateDir(projectDir), INDEX_FILE), indexSchema, warn);
  const index: HashIndex = new Map();
  for (const [file, size, mtimeMs, ctimeMs, ino, sha256] of parsed?.files ?? []) index.set(file, { size, mtimeMs, ctimeMs, ino, sha256 });
  return index;
}

/** Saves the hash index (absolute path, size, mtimeMs, ctimeMs, inode, sha256 per class file). */
export function writeHashIndex(projectDir: string, index: HashIndex): void {
  const files = [...index].map(([file, e]) => [file, e.size, e.mtimeMs, e.ctimeMs, e.ino, e.sha256]);
  writeJson(path.join(stateDir(projectDir), INDEX_FILE), { version: 1, files });
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
