/**
 * The port file (protocol.md, "Finding the agent") and the app folder it implies.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Write `port` as decimal text without newline, whole: temp file in the same dir, then rename. */
export function writePortFile(path: string, port: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, String(port));
  renameSync(temp, path);
}

/** Delete the port file if it still names our port (another agent may have replaced it). */
export function removePortFile(path: string, port: number): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(port)) unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/**
 * The app folder a port file implies: the agent writes `<app dir>/.reclazz/agent.port` when no
 * `portFile=` is given, and the IDE `<project>/.idea/reclazz/agent.port`. Undefined otherwise.
 */
export function appDirOfPortFile(path: string): string | undefined {
  const dir = dirname(path);
  if (basename(dir) === '.reclazz') return dirname(dir);
  if (basename(dir) === 'reclazz' && basename(dirname(dir)) === '.idea') return dirname(dirname(dir));
  return undefined;
}
