/**
 * The lines of `DIAGNOSE <class>` (protocol.md, "SCAN, PENDING, HEALTH, DIAGNOSE"), in the
 * agent's order and words (agent ReloadDiagnostics.explain): whether a compiled file for the
 * name lies under a watched directory (a direct path under each, else a search by file name),
 * whether the application loaded the class, and the last reload attempt of it.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Receipt } from './ledger.js';
import type { PathReporter } from './paths.js';

/** Depth and count bounds of the search by file name under one watched directory (Files.walk(dir, 12), limit 4). */
const WALK_DEPTH = 12;
const WALK_LIMIT = 4;
/** The search stops after a watched directory once more than this many files were found. */
const FOUND_LIMIT = 8;
/** At most this many watched directories are named when none holds the class. */
const NAMED_DIRS = 3;

/** What the diagnosis looks at. Times in epoch ms. */
export interface DiagnoseFacts {
  /** The watched class output directories (local, absolute). */
  roots: readonly string[];
  reportPath: PathReporter;
  /** When the application's JVM started. */
  jvmStartMs: number;
  /** True when the application loaded `className`. */
  loaded: (className: string) => boolean;
  /** The latest reload receipt of `className`, if any. */
  receipt: (className: string) => Receipt | undefined;
  nowMs: number;
}

/** The diagnosis of `name` (a binary class name), one line per finding. */
export function diagnosisLines(name: string, facts: DiagnoseFacts): string[] {
  const lines = [`Reclazz diagnosis for ${name}`];
  const files = classFilesOf(name, facts.roots);
  if (files.length === 0) {
    lines.push('No compiled .class file for this name under any watched directory.');
    lines.push(
      'Either the build has not run, or this class is built somewhere Reclazz is not watching. Watched output directories: ' +
        namedDirs(facts.roots.map(facts.reportPath)),
    );
  }
  let newest: number | undefined;
  for (const file of files) {
    const modifiedMs = mtimeOf(file);
    let when = 'unknown';
    if (modifiedMs !== undefined) {
      newest = Math.max(newest ?? modifiedMs, modifiedMs);
      when = ago(modifiedMs, facts.nowMs) + (modifiedMs < facts.jvmStartMs ? ', which is before this JVM started' : '');
    }
    lines.push(`Compiled file: ${facts.reportPath(file)} (last built ${when})`);
  }
  if (files.length > 1) {
    lines.push(
      'More than one build output holds this class. The JVM uses whichever its classloader found first, so an edit to the other one changes nothing.',
    );
  }
  lines.push(
    facts.loaded(name)
      ? 'Loaded and prepared by the agent, so a reload of it would be applied.'
      : 'The JVM has not loaded this class yet, so there is nothing to reload. It will use the current code the first time it is used.',
  );
  if (files.length > 0) lines.push(lastAttempt(facts.receipt(name), newest, facts));
  return lines;
}

function lastAttempt(receipt: Receipt | undefined, newestMs: number | undefined, facts: DiagnoseFacts): string {
  if (receipt === undefined) {
    return newestMs !== undefined && newestMs < facts.jvmStartMs
      ? 'Reclazz has not attempted a reload of this class, and the compiled file has not been rebuilt since this JVM started. The build did not reach it.'
      : 'Reclazz has not attempted a reload of this class. The file was rebuilt, so its bytes came out identical to the ones already loaded and there was nothing to apply: a rebuild of unchanged source does that.';
  }
  const atMs = receipt.completedAt === '' ? facts.nowMs : Date.parse(receipt.completedAt);
  const detail = receipt.detail === '' ? '' : ` (${receipt.detail})`;
  const source = receipt.source === '' ? '' : `, from ${receipt.source}`;
  return `Last attempt ${ago(atMs, facts.nowMs)}: ${receipt.status === 'failed' ? 'failed' : 'reloaded'}${detail}${source}`;
}

/** Class files for `name` under `roots`: its direct path under each, else up to 4 files of its file name. */
function classFilesOf(name: string, roots: readonly string[]): string[] {
  const found: string[] = [];
  const fileName = `${name.slice(name.lastIndexOf('.') + 1)}.class`;
  for (const root of roots) {
    const direct = join(root, ...name.split('.')) + '.class';
    if (isFile(direct)) found.push(direct);
    else found.push(...byFileName(root, fileName));
    if (found.length > FOUND_LIMIT) break;
  }
  return found;
}

function byFileName(root: string, fileName: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // not an answer, just a gap
    }
    for (const entry of entries) {
      if (found.length >= WALK_LIMIT) return;
      const path = join(dir, entry.name);
      if (entry.isFile() && entry.name === fileName) found.push(path);
      else if (entry.isDirectory() && depth < WALK_DEPTH) walk(path, depth + 1);
    }
  };
  walk(root, 1);
  return found;
}

/** The first 3 directories, then `and others` (the agent says so once it has named 3). */
function namedDirs(dirs: readonly string[]): string {
  if (dirs.length === 0) return 'none';
  const named = dirs.slice(0, NAMED_DIRS).join(', ');
  return dirs.length >= NAMED_DIRS ? `${named} and others` : named;
}

function ago(thenMs: number, nowMs: number): string {
  const seconds = Math.floor((nowMs - thenMs) / 1000);
  if (nowMs < thenMs) return 'just now';
  if (seconds < 90) return `${seconds}s ago`;
  if (seconds < 5400) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)}h ago`;
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
