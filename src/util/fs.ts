/** Small file-system and path questions several rooms ask. */
import fs from 'node:fs';
import path from 'node:path';

/** True when `dir` is a directory (links followed); false when it is anything else, missing or unreadable. */
export function isDir(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** The names of the folders directly in `dir` (links not followed); none when it cannot be read. */
export function listDirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** True when `dir` is `root` or lies below it (either may be relative or unnormalised: `path.relative` decides). */
export function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * True when the text of `candidate` is `dir` or starts with `dir` and a separator: a test on
 * paths already absolute and normalised (as `path.resolve` gives them), cheap enough for every
 * file-system event, where {@link isInside} resolves both.
 */
export function startsWithDir(candidate: string, dir: string): boolean {
  return candidate === dir || candidate.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

/**
 * The checkout `dir` is in: the nearest folder at or above it holding `.git` (a folder, or the file
 * of a linked worktree or a submodule), or undefined when none does.
 */
export function checkoutOf(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/** `file` with symbolic links resolved; as given (made absolute) when it cannot be resolved (missing, unreadable). */
export function realOf(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}
