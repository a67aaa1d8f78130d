/** The class files a scan sets against the class index, by what each needs (see evidence.ts), as a run reports them. */
import { isVerifiableClassName } from '../agent/protocol.js';
import type { ClassChange } from '../outcome/facts.js';
import { binaryClassName } from './names.js';

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
