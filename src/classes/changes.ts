/** The class files a scan sets against the class index, by what each needs (see evidence.ts), as a run reports them. */
import { isVerifiableClassName } from '../agent/protocol.js';
import type { ClassChange } from '../outcome/facts.js';
import path from 'node:path';
import type { ClassIndex } from './columns.js';

/** The class files on disk set against the class index, by what each needs (see evidence.ts). */
export interface ChangeSet {
  /** Changed by this build and not backed by evidence: to be verified (polled under the deadline). */
  changed: ClassChange[];
  /** There before this build and not backed by evidence, or bytes known live whose file was rewritten: to be asked once. */
  checks: ClassChange[];
  /** New to the app: written by this build at a path that held no class in this agent session (history.ts). */
  added: ClassChange[];
  removed: ClassChange[];
  /** Class files found in the scanned directories. */
  total: number;
}

/** The change of `file` below the class output directory `dir`, with what the scan found of it. */
export function classChange(file: string, dir: string, facts: Omit<ClassChange, 'path' | 'className' | 'verifiable'>): ClassChange {
  const className = binaryClassName(dir, file);
  return { path: file, className, verifiable: isVerifiableClassName(className), ...facts };
}

/** Sorts each list of `changes` by class name (UTF-16 code units, as the report shows them). */
export function sortChanges(changes: ChangeSet): void {
  for (const list of [changes.changed, changes.checks, changes.added, changes.removed])
    list.sort((a, b) => (a.className < b.className ? -1 : a.className > b.className ? 1 : 0));
}

/** Binary class names from class file paths (JLS §13.1). */

/**
 * The binary class name of `file` below class output directory `dir`:
 * `dir/com/acme/Outer$Inner.class` -> `com.acme.Outer$Inner`.
 */
export function binaryClassName(dir: string, file: string): string {
  const relative = path.relative(dir, file).slice(0, -'.class'.length);
  return relative.split(path.sep).join('.');
}

/**
 * Two class files with one binary name in different class output directories (a stale
 * `target/classes` beside `build/classes/java/main`): when one capture holds both, the agent
 * marks every class of that batch `unverified` (protocol.md "Batch-wide verdicts").
 */

/** A binary name found in more than one class output directory, with every path holding it. */
export interface SameName {
  className: string;
  paths: string[];
}

/**
 * The binary names of `index` present (not removed) in more than one of the class output
 * directories `among` (those found now: a directory gone since the index was saved holds no
 * copy), in index order. Costs one pass over the rows, and nothing with a single directory.
 */
export function sameBinaryNames(index: ClassIndex, among: readonly string[]): SameName[] {
  const found = new Set(among.map((dir) => path.resolve(dir)));
  const current = index.dirs.map((dir) => found.has(dir));
  if (current.filter(Boolean).length < 2) return [];
  const byName = new Map<string, string[]>();
  index.paths.forEach((file, row) => {
    if (index.gone[row] === 1 || !current[index.dirOf[row]!]) return;
    const name = binaryClassName(index.dirs[index.dirOf[row]!]!, file);
    const paths = byName.get(name);
    if (paths === undefined) byName.set(name, [file]);
    else paths.push(file);
  });
  return [...byName].filter(([, paths]) => paths.length > 1).map(([className, paths]) => ({ className, paths }));
}
