/**
 * Which folders `reclazz-build watch` watches: the source folders of the project, of its Maven or
 * Gradle modules and of SAP Commerce custom extensions, plus `--watch` entries. Read-only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isDir, startsWithDir } from '../util/fs.js';

/** How many folder levels below the project are searched for modules, by default. */
const MODULE_DEPTH = 4;

/** Folders never searched for modules: tools' own folders and build output. */
const SKIPPED = new Set(['node_modules', 'target', 'build', 'out', 'bin', 'src']);

const BUILD_FILES = ['pom.xml', 'build.gradle', 'build.gradle.kts'];
const MODULE_SOURCES = ['src/main/java', 'src/main/kotlin', 'src/main/resources'];
/** Where Maven, Gradle, IntelliJ and Eclipse put a module's output. */
const MODULE_OUTPUTS = ['target', 'build', '.gradle', 'out', 'bin'];
const EXTENSION_FILE = 'extensioninfo.xml';
const EXTENSION_SOURCES = ['src', 'web/src', 'resources'];
/** Where SAP Commerce's build puts an extension's classes and generated sources. */
const EXTENSION_OUTPUTS = ['classes', 'gensrc', 'eclipsebin', 'web/webroot/WEB-INF/classes'];
/** A platform home (the `hybris` folder) holds the custom extensions here. */
const CUSTOM_TREE = path.join('bin', 'custom');

/** What to look for. */
export interface SourceSearch {
  /** The project's folder; relative to the current folder unless absolute. */
  projectDir: string;
  /** The user's `--watch` entries (folders or files), relative to `projectDir` unless absolute. */
  extra?: readonly string[];
  /** How many folder levels below the project (and below a `bin/custom` folder) to search (default {@link MODULE_DEPTH}). */
  maxDepth?: number;
}

/** Where to watch. All paths are absolute. */
export interface WatchSources {
  /** Existing folders and files to watch, sorted; none lies inside another. */
  roots: string[];
  /** `--watch` entries that do not exist, to warn about. Conventional folders that do not exist are simply not roots. */
  missing: string[];
  /** The project and the module and extension folders found, sorted. */
  modules: string[];
  /** The modules' and extensions' build output folders (existing or not), for the watcher to leave out under a broad `--watch`. */
  outputDirs: string[];
}

/** A `--watch` entry or project folder that cannot be used; the message names it and the fix. */
export class WatchPathError extends Error {
  override name = 'WatchPathError';
}

/**
 * Finds the folders to watch for a project.
 * @throws WatchPathError when `projectDir` is not a folder, or a `--watch` entry is empty or holds a NUL character.
 */
export function findWatchSources(search: SourceSearch): WatchSources {
  const projectDir = path.resolve(search.projectDir);
  if (!isDir(projectDir)) {
    throw new WatchPathError(
      `the project folder ${projectDir} does not exist or is not a folder: run the watch from the project, or name it`,
    );
  }
  const maxDepth = search.maxDepth ?? MODULE_DEPTH;
  const modules = new Set<string>([projectDir]);
  const extensions = new Set<string>();
  walk(projectDir, 0, maxDepth, modules, extensions);

  const candidates: string[] = [];
  const outputDirs: string[] = [];
  for (const module of modules) {
    candidates.push(...MODULE_SOURCES.map((sub) => path.join(module, sub)));
    outputDirs.push(...MODULE_OUTPUTS.map((sub) => path.join(module, sub)));
  }
  for (const extension of extensions) {
    candidates.push(...EXTENSION_SOURCES.map((sub) => path.join(extension, sub)));
    outputDirs.push(...EXTENSION_OUTPUTS.map((sub) => path.join(extension, sub)));
  }
  const found = candidates.filter(isDir);

  const missing: string[] = [];
  for (const entry of search.extra ?? []) {
    const resolved = resolveEntry(projectDir, entry);
    if (fs.existsSync(resolved)) found.push(resolved);
    else missing.push(resolved);
  }
  return {
    roots: outermost(found),
    missing: [...new Set(missing)].sort(),
    modules: [...new Set([...modules, ...extensions])].sort(),
    outputDirs: [...new Set(outputDirs)].sort(),
  };
}

function resolveEntry(projectDir: string, entry: string): string {
  if (entry.trim() === '') {
    throw new WatchPathError('a --watch entry is empty: give a folder or file, relative to the project');
  }
  if (entry.includes('\0')) {
    throw new WatchPathError(`the --watch entry ${JSON.stringify(entry)} holds a NUL character: give a plain path`);
  }
  return path.resolve(projectDir, entry);
}

/**
 * Collects module folders (with a build file) and SAP Commerce extensions (with an
 * extensioninfo.xml) below `dir`, down to `maxDepth` levels. Hidden folders, build output and
 * `src` are not entered; symbolic links are not followed (a link loop cannot trap the walk).
 */
function walk(dir: string, depth: number, maxDepth: number, modules: Set<string>, extensions: Set<string>): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable: nothing to watch there
  }
  const files = new Set(entries.filter((entry) => entry.isFile()).map((entry) => entry.name));
  if (BUILD_FILES.some((name) => files.has(name))) modules.add(dir);
  if (files.has(EXTENSION_FILE)) {
    extensions.add(dir);
    return; // extensions do not nest
  }
  const custom = path.join(dir, CUSTOM_TREE);
  if (isDir(custom)) {
    // A platform home (often without the platform itself in the repository): only its custom
    // extensions are the project's; its data, logs and SAP's own extensions can be large.
    walk(custom, 0, maxDepth, modules, extensions);
    return;
  }
  if (depth >= maxDepth) return;
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue;
    walk(path.join(dir, entry.name), depth + 1, maxDepth, modules, extensions);
  }
}

/** `paths` sorted, without repeats and without any path inside another. */
function outermost(paths: string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  const kept: string[] = [];
  for (const candidate of sorted) {
    if (!kept.some((outer) => startsWithDir(candidate, outer))) kept.push(candidate);
  }
  return kept;
}
