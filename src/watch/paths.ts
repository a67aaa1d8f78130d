/** Path rules shared by the watch modules. */
import path from 'node:path';

/** True when `candidate` is `dir` itself or below it (both absolute, as `path.resolve` gives them). */
export function isInside(candidate: string, dir: string): boolean {
  return candidate === dir || candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}
