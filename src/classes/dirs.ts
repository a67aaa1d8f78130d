/**
 * Default class output directories: Maven's `target/classes` and Gradle's
 * `build/classes/<lang>/main` in the project folder and its modules (a few levels down).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolKind } from '../outcome/facts.js';

/** How many folder levels below the project the module search looks. */
const MODULE_DEPTH = 4;

const SKIP = new Set(['node_modules', '.git', '.gradle', '.mvn', '.idea', '.reclazz', 'src', 'build', 'target', 'out', 'bin']);

/**
 * Lists the class output directories that exist now under `projectDir` for `kind`
 * (`mvn`: target/classes; `gradle`: build/classes/<lang>/main; `command`: both), sorted.
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
    if (depth >= MODULE_DEPTH) return;
    for (const child of listDirs(dir)) {
      if (!SKIP.has(child) && !child.startsWith('.')) visit(path.join(dir, child), depth + 1);
    }
  };
  visit(projectDir, 0);
  return found.sort();
}

function addIfDir(list: string[], dir: string): void {
  if (isDir(dir)) list.push(dir);
}

function isDir(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function listDirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** True when `dir` is `root` or lies below it. */
export function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
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
