/**
 * Two class files with one binary name in different class output directories (a stale
 * `target/classes` beside `build/classes/java/main`): when one capture holds both, the agent
 * marks every class of that batch `unverified` (protocol.md "Batch-wide verdicts").
 */
import type { ClassIndex } from './columns.js';
import { binaryClassName } from './names.js';

/** A binary name found in more than one class output directory, with every path holding it. */
export interface SameName {
  className: string;
  paths: string[];
}

/**
 * The binary names of `index` present (not removed) in more than one of its directories, in
 * index order. Costs one pass over the rows, and nothing with a single directory.
 */
export function sameBinaryNames(index: ClassIndex): SameName[] {
  if (index.dirs.length < 2) return [];
  const byName = new Map<string, string[]>();
  index.paths.forEach((file, row) => {
    if (index.gone[row] === 1) return;
    const name = binaryClassName(index.dirs[index.dirOf[row]!]!, file);
    const paths = byName.get(name);
    if (paths === undefined) byName.set(name, [file]);
    else paths.push(file);
  });
  return [...byName].filter(([, paths]) => paths.length > 1).map(([className, paths]) => ({ className, paths }));
}
