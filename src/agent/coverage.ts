/**
 * Whether the agent watches the project's class output directories (protocol.md "How the
 * running agent differs": a change in a directory it does not watch never reloads).
 */
import path from 'node:path';
import type { DirCoverage } from '../outcome/facts.js';

/**
 * Whether the agent watches each of `dirs`: a watched directory equals it, contains it, or lies
 * inside it. Unknown (null) when not found but the agent's sample is incomplete.
 */
export function watchCoverage(dirs: readonly string[], watchedDirectories: readonly string[], sampleIncomplete: boolean): DirCoverage[] {
  const watched = watchedDirectories.map((d) => path.resolve(d));
  return dirs.map((dir) => {
    const found = watched.some((w) => dir === w || dir.startsWith(w + path.sep) || w.startsWith(dir + path.sep));
    return { dir, watched: found ? true : sampleIncomplete ? null : false };
  });
}
