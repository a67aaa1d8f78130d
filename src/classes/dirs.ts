/**
 * Default class output directories: Maven's `target/classes` and Gradle's
 * `build/classes/<lang>/main` in the project folder and its modules (a few levels down), and
 * in an SAP Commerce tree the folders its ant build writes (protocol.md "How the running agent
 * differs": what the agent watches there).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolKind } from '../outcome/facts.js';
import { isDir, isInside, listDirs, realOf } from '../util/fs.js';

/** How many folder levels below the project the module search looks. */
const MODULE_DEPTH = 4;

const SKIP = new Set(['node_modules', '.git', '.gradle', '.mvn', '.idea', '.reclazz', 'src', 'build', 'target', 'out', 'bin']);

/** How many folder levels below `bin/custom` SAP Commerce extensions are looked for (they may sit in group folders). */
const EXTENSION_DEPTH = 3;

/**
 * Lists the class output directories that exist now under `projectDir` for `kind`
 * (`mvn`: target/classes; `gradle`: build/classes/<lang>/main; `command`: both), sorted.
 * A folder holding `bin/platform` is an SAP Commerce home, whatever the kind: see {@link hybrisClassDirs}.
 * Call it again after the build: a clean build creates them.
 */
export function findClassDirs(projectDir: string, kind: ToolKind): string[] {
  const found: string[] = [];
  const maven = kind !== 'gradle';
  const gradle = kind !== 'mvn';
  const visit = (dir: string, depth: number): void => {
    if (maven) addIfDir(found, path.join(dir, 'target', 'classes'));
    if (gradle) {
      const classes = path.join(dir, 'build', 'classes');
      for (const lang of listDirs(classes)) addIfDir(found, path.join(classes, lang, 'main'));
    }
    found.push(...hybrisClassDirs(dir));
    if (depth >= MODULE_DEPTH) return;
    for (const child of listDirs(dir)) {
      if (!SKIP.has(child) && !child.startsWith('.')) visit(path.join(dir, child), depth + 1);
    }
  };
  visit(projectDir, 0);
  return found.sort();
}

/**
 * The class output directories of an SAP Commerce home `hybris` (the folder holding
 * `bin/platform`; none when it is not one): `bin/platform/bootstrap/modelclasses`, and per
 * custom extension below `bin/custom` (a folder with `extensioninfo.xml`) its `classes` and
 * `web/webroot/WEB-INF/classes`, those that exist.
 */
function hybrisClassDirs(hybris: string): string[] {
  const platform = path.join(hybris, 'bin', 'platform');
  if (!isDir(platform)) return [];
  const found: string[] = [];
  addIfDir(found, path.join(platform, 'bootstrap', 'modelclasses'));
  const visit = (dir: string, depth: number): void => {
    for (const child of listDirs(dir)) {
      const ext = path.join(dir, child);
      if (fs.existsSync(path.join(ext, 'extensioninfo.xml'))) {
        addIfDir(found, path.join(ext, 'classes'));
        addIfDir(found, path.join(ext, 'web', 'webroot', 'WEB-INF', 'classes'));
      } else if (depth < EXTENSION_DEPTH && !child.startsWith('.')) visit(ext, depth + 1);
    }
  };
  visit(path.join(hybris, 'bin', 'custom'), 1);
  return found;
}

function addIfDir(list: string[], dir: string): void {
  if (isDir(dir)) list.push(dir);
}

/**
 * Where class output directories are looked for: the project folder (the one holding the port
 * file's `.reclazz/`) when the run is inside it (from `src/main/java/...`, or SAP Commerce's
 * `bin/platform`), else the folder the run is in (a reactor root above the app's module).
 */
export function classSearchRoot(cwd: string, projectDir: string): string {
  return isInside(cwd, projectDir) ? projectDir : cwd;
}

/**
 * `dirs` with one folder reached by two paths (a module's class output directory linked to another's)
 * kept once, by its first path: scanned twice, each class would be listed and asked twice, and
 * taken for a copy of itself in another directory.
 */
export function distinctDirs(dirs: readonly string[]): string[] {
  const seen = new Set<string>();
  return dirs.filter((dir) => {
    const real = realOf(dir);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

/** A class output directory left out because another one covers it, and why. */
export type DroppedDir = { dir: string } & ({ kind: 'given-around-found'; inner: string } | { kind: 'nested'; outer: string });

/**
 * `dirs` with no directory inside another (class names would differ by where a scan starts).
 * Of two nested ones, a `--classes-dir` that holds a discovered class output directory
 * (`--classes-dir target` around target/classes) is the one dropped; otherwise the inner one.
 * @returns the directories kept, and the ones dropped with why.
 */
export function outermost(dirs: readonly string[], given: readonly string[]): { kept: string[]; dropped: DroppedDir[] } {
  const dropped = new Map<string, DroppedDir>();
  for (const inner of dirs) {
    for (const outer of dirs) {
      if (outer === inner || !isInside(inner, outer)) continue;
      if (given.includes(outer) && !given.includes(inner)) dropped.set(outer, { dir: outer, kind: 'given-around-found', inner });
      else dropped.set(inner, { dir: inner, kind: 'nested', outer });
    }
  }
  return { kept: dirs.filter((d) => !dropped.has(d)), dropped: [...dropped.values()] };
}
