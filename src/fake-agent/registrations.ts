/**
 * The directories the agent's watcher registers, as DOCTOR counts and samples them
 * (agent FileWatcher.registerDirectories and doctorEvidence; platform/SpringBootContext for the
 * resource folders): every directory under each watched root, each one its own registration,
 * and the resource folder the agent derives from a Maven or Gradle class output directory, with
 * its subfolders. Symbolic links are not followed, as `Files.walkFileTree` does not by default.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { isDirectory } from './capture.js';

/**
 * `<project>/src/main/resources` for a class output directory `.../target/classes` or
 * `.../build/classes/...` (agent SpringBootContext.autoDetectResourceDirs), when it exists.
 */
function resourceDirOf(root: string): string | undefined {
  const slashed = root.split(sep).join('/');
  let project: string | undefined;
  if (slashed.endsWith('/target/classes')) project = dirname(dirname(root));
  else if (slashed.includes('/build/classes/')) {
    for (let dir = root; dirname(dir) !== dir; dir = dirname(dir)) {
      if (dir.endsWith(`${sep}build`)) {
        project = dirname(dir);
        break;
      }
    }
  }
  const resources = project === undefined ? undefined : join(project, 'src', 'main', 'resources');
  return resources !== undefined && isDirectory(resources) ? resources : undefined;
}

/** Every directory under each of `roots` that exists now, the roots included, and their resource folders' trees; unsorted, deduplicated. */
export function registeredDirectories(roots: readonly string[]): string[] {
  const found = new Set<string>();
  const walk = (start: string): void => {
    if (!isDirectory(start)) return;
    const stack = [start];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      if (found.has(dir)) continue;
      found.add(dir);
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue; // vanished or unreadable meanwhile: its registration is gone with it
      }
      for (const entry of entries) if (entry.isDirectory()) stack.push(join(dir, entry.name));
    }
  };
  for (const root of roots) {
    walk(root);
    const resources = resourceDirOf(root);
    if (resources !== undefined) walk(resources);
  }
  return [...found];
}
