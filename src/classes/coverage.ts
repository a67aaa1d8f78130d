/**
 * What the agent watches, seen from here through `--path-map` (protocol.md "DOCTOR", "How the
 * running agent differs": an unwatched directory never reloads; "What the agent's source shows").
 * Known from its JVM's options (agent/jvm-options.ts), else DOCTOR's whole sample, else a
 * truncated one by its order: the agent lists its first 8 registrations in String order
 * (watcher/FileWatcher.java doctorEvidence), so an unlisted folder (at most 256 characters)
 * sorting before the last one listed is not registered.
 */
import path from 'node:path';
import type { DirCoverage, DoctorObserved } from '../outcome/facts.js';
import { classFolders } from './scan.js';
import type { JvmPaths } from './placement.js';
import { type AgentWatch, excludedName, type JvmOnly } from '../agent/jvm-options.js';
import { type PathMapEntry, toAgent, toLocal } from '../agent/path-map.js';
import { isDir, isInside, realOf } from '../util/fs.js';

/** One directory the agent reports watching, as it is here. */
export interface WatchedHere {
  /** As DOCTOR reported it. */
  reported: string;
  /** Translated by the path map (absolute, local). */
  local: string;
  /** Not a directory here, a directory without class files, or one holding class files. */
  here: 'missing' | 'empty' | 'classes';
  /** `local` with symbolic links resolved (the JVM may name `/private/tmp` what is `/tmp` here). */
  real: string;
}

/** The agent's watched directories and working directory, seen from here. */
export interface AgentView {
  /** What it is known to watch: its class output directories (`complete`), or the registrations DOCTOR listed. */
  watched: WatchedHere[];
  /** `watched` is all it watches: from its options, or a whole DOCTOR sample (not truncated, as many listed as counted). */
  complete: boolean;
  /** Where `watched` comes from: the JVM's options, DOCTOR's whole sample, a truncated one, or nothing yet. */
  from: 'options' | 'doctor' | 'sample' | 'none';
  /** The truncated sample as the agent listed it (sorted), for its order; empty otherwise. */
  sample: readonly string[];
  /** The agent's `excludePatterns=` (from its options): class file names it never reloads. */
  excludePatterns: readonly string[];
  /** `autoCompile=true` in its options: it watches sources, not class output directories, so nothing here is decided. */
  autoCompile: boolean;
  /** Its watcher's `debounceMs` from its options, in ms; undefined when its options are not known. */
  debounceMs: number | undefined;
  /** DOCTOR's `unwatchableDirectoryCount`: registrations the OS refused, so folders it does not watch. */
  refused: number;
  /** Its JVM's class path entries in order (local; `real` with links resolved), watched or not; empty when not known. */
  classPath: readonly { local: string; real: string }[];
  /** DOCTOR's `workingDirectory`, translated by the path map. */
  workingDirectory: string;
  /** The `--path-map` the view was read with. */
  map: readonly PathMapEntry[];
}

/** How many folders {@link holdsClassFiles} looks into before it says no. */
const CLASS_SEARCH_FOLDERS = 2000;
/** DOCTOR leaves paths longer than this (characters) out of its sample. */
const SAMPLE_PATH_CHARS = 256;

/** The DOCTOR fields a view reads. */
export type DoctorView = Pick<
  DoctorObserved,
  | 'watchedDirectories'
  | 'watchedDirectoryCount'
  | 'watchSampleTruncated'
  | 'workingDirectory'
  | 'watcherState'
  | 'unwatchableDirectoryCount'
>;

/**
 * The agent's view from what its JVM's options say (`jvm`, agent/jvm-options.ts, when they
 * could be read; its class path alone when only the JVM's own options could) or else its DOCTOR
 * evidence, with `map` (agent path -> local path). Reads the file system.
 */
export function agentView(doctor: DoctorView, map: readonly PathMapEntry[], jvm?: AgentWatch | JvmOnly): AgentView {
  const watch = jvm !== undefined && 'roots' in jvm ? jvm : undefined;
  const workingDirectory = doctor.workingDirectory === '' ? '' : path.resolve(toLocal(map, doctor.workingDirectory));
  const classPath = (jvm?.classPath ?? [])
    .map((entry) => path.resolve(toLocal(map, entry)))
    .map((local) => ({ local, real: realOf(local) }));
  const base = {
    workingDirectory,
    map,
    excludePatterns: watch?.excludePatterns ?? [],
    autoCompile: watch?.autoCompile === true,
    debounceMs: watch?.debounceMs,
    refused: doctor.unwatchableDirectoryCount,
    classPath,
  };
  const here = (reported: string) => watchedHere(reported, map);
  // With autoCompile the agent watches its sources: neither its options nor DOCTOR's folders say what reloads from here.
  if (base.autoCompile) return { ...base, watched: [], complete: false, from: 'none', sample: [] };
  if (watch !== undefined) return { ...base, watched: watch.roots.map(here), complete: true, from: 'options', sample: [] };
  const listed = doctor.watchedDirectories;
  if (listed.length === 0) return { ...base, watched: [], complete: false, from: 'none', sample: [] };
  // A watcher not (yet) watching lists nothing; one that lists folders anyway says only that much.
  if (doctor.watcherState !== 'watching') return { ...base, watched: listed.map(here), complete: false, from: 'sample', sample: [] };
  if (!doctor.watchSampleTruncated && listed.length >= doctor.watchedDirectoryCount) {
    return { ...base, watched: rootsOf(listed).map(here), complete: true, from: 'doctor', sample: [] };
  }
  return { ...base, watched: listed.map(here), complete: false, from: 'sample', sample: listed };
}

function watchedHere(reported: string, map: readonly PathMapEntry[]): WatchedHere {
  const local = path.resolve(toLocal(map, reported));
  return { reported, local, real: realOf(local), here: !isDir(local) ? 'missing' : holdsClassFiles(local) ? 'classes' : 'empty' };
}

/**
 * The watched roots of a whole set of registrations: those whose parent is not registered, but
 * for the `src/main/resources` the agent derives from a `target/classes` or `build/classes/...`
 * root of the same project (platform/SpringBootContext.java autoDetectResourceDirs).
 */
function rootsOf(registered: readonly string[]): string[] {
  const all = new Set(registered);
  const roots = registered.filter((dir) => !all.has(parentOf(dir)));
  const projects = new Set(roots.flatMap((root) => projectOfClasses(root) ?? []));
  return roots.filter((root) => {
    const slashed = root.replace(/\\/g, '/');
    return !(slashed.endsWith('/src/main/resources') && projects.has(slashed.slice(0, -'/src/main/resources'.length)));
  });
}

/** The project folder of a Maven or Gradle class output directory (`/`-separated), as the agent derives it. */
function projectOfClasses(root: string): string | undefined {
  const slashed = root.replace(/\\/g, '/');
  if (slashed.endsWith('/target/classes')) return slashed.slice(0, -'/target/classes'.length);
  const at = slashed.indexOf('/build/classes/');
  return at < 0 ? undefined : slashed.slice(0, at);
}

/**
 * Whether the agent watches each of `dirs` (class output directories): one of what it watches
 * (local) is it, contains it or lies inside it (true); not, and that is the whole list, or by
 * the sample's order none of its folders is registered (false); else unknown (null).
 */
export function watchCoverage(dirs: readonly string[], view: AgentView): DirCoverage[] {
  return dirs.map((dir) => ({ dir, watched: folderWatched(view, dir, overlaps) }));
}

/**
 * True when the agent's app loads classes from the class output directory `dir`: it is one of
 * the directories on its JVM's class path (as it is, or with symbolic links resolved). A folder
 * around or inside one is not: its classes would have other binary names.
 * @internal for its tests (the rest of the code asks {@link runsFrom})
 */
export function onClassPath(view: AgentView, dir: string): boolean {
  const real = realOf(dir);
  return view.classPath.some((entry) => entry.local === dir || entry.real === real);
}

/**
 * True when the app of `view` runs the class output directory `dir`: its agent watches it or may
 * (what it watches is not all known), or it is on its JVM's class path. When the class path cannot
 * be read here, that is what its agent watches alone.
 */
export function runsFrom(view: AgentView, dir: string): boolean {
  return watchCoverage([dir], view)[0]!.watched !== false || onClassPath(view, dir);
}

/**
 * Where the JVM of `view` loads classes from (placement.ts): its class path, its working
 * directory and the checkout root `top`, and what its agent watches.
 */
export function jvmPathsOf(view: AgentView, top: string): JvmPaths {
  const watched = (file: string) => {
    const state = classWatched(view, file);
    return state === null || typeof state === 'boolean' ? state : false;
  };
  return { top, workingDirectory: view.workingDirectory, classPath: view.classPath, watched };
}

/**
 * Whether the agent reloads the class file `file` (local, absolute) by what is known of it:
 * `excluded` by one of its `excludePatterns` (named), or its folder watched (true), not (false),
 * or unknown (null), as {@link watchCoverage} decides for a folder, except that only what
 * contains the folder counts.
 */
export function classWatched(view: AgentView, file: string): boolean | null | { excludedBy: string } {
  if (view.autoCompile) return null;
  const pattern = excludedName(view.excludePatterns)(path.basename(file));
  if (pattern !== undefined) return { excludedBy: pattern };
  return folderWatched(view, path.dirname(file), (folder, watched) => isWithin(folder, watched));
}

function folderWatched(view: AgentView, dir: string, covers: (dir: string, watched: string) => boolean): boolean | null {
  if (view.autoCompile) return null;
  const real = realOf(dir);
  if (view.watched.some((w) => covers(dir, w.local) || covers(real, w.real))) return true;
  if (view.complete) return false;
  return view.sample.length > 0 && unregistered(view, dir) && (real === dir || unregistered(view, real)) ? false : null;
}

/**
 * True when, by the sample's order, neither `dir` nor any folder above it is registered: each
 * sorts at or before the last listed and is not listed (a registered root would be, and so
 * would its subfolders). False when one is listed or sorts after the last (unknown).
 */
function unregistered(view: AgentView, dir: string): boolean {
  const last = view.sample[view.sample.length - 1]!;
  const listed = new Set(view.sample);
  for (let folder = toAgent(view.map, dir); ; folder = parentOf(folder)) {
    // String order, as Java's String.compareTo: UTF-16 code units.
    if (folder.length > SAMPLE_PATH_CHARS || folder > last || listed.has(folder)) return false;
    if (parentOf(folder) === folder) return true;
  }
}

/** The parent of an agent path, `/`- or `\`-separated; the root is its own parent. */
function parentOf(agentPath: string): string {
  const cut = Math.max(agentPath.lastIndexOf('/'), agentPath.lastIndexOf('\\'));
  if (cut < 0) return agentPath;
  if (cut === 0) return agentPath.slice(0, 1);
  const parent = agentPath.slice(0, cut);
  return /^[A-Za-z]:$/.test(parent) ? `${parent}\\` : parent;
}

/**
 * Class output directories the agent watches that reclazz-build did not find: with a complete
 * sample, watched directories holding class files, neither nesting with one of `known` nor holding
 * a project folder of `roots` (`/` or a home folder would mean scanning the disk). Sorted.
 * @internal for its tests (the rest of the code asks {@link appClassDirs})
 */
export function agentClassDirs(view: AgentView, known: readonly string[], roots: readonly string[]): string[] {
  if (!view.complete) return [];
  const dirs = view.watched.filter((w) => w.here === 'classes' && taken(w.local, known, roots)).map((w) => w.local);
  return [...new Set(dirs)].sort();
}

/**
 * Class output directories on the JVM's class path that reclazz-build did not find, holding class
 * files: its folders inside one of `roots` (the project folders, the checkout), watched or not
 * (IntelliJ's `out/production/<module>`, any layout), so a change there is seen even where nothing
 * reloads it; and those outside that its agent may watch (not known not to), since the agent
 * reloads a class from any watched copy of it, so the evidence rule must see such a copy move
 * (copies.ts; with all it watches known, {@link agentClassDirs} has them already). As
 * {@link agentClassDirs}, none nesting with one of `known` or holding a folder of `roots` (a
 * class path's `.` would hold every other one). In class path order.
 * @internal for its tests (the rest of the code asks {@link appClassDirs})
 */
export function classPathDirs(view: AgentView, known: readonly string[], roots: readonly string[]): string[] {
  const ours = (local: string) => roots.some((root) => isInside(local, root)) || folderWatched(view, local, overlaps) !== false;
  return view.classPath
    .filter(({ local }) => ours(local) && taken(local, known, roots) && isDir(local) && holdsClassFiles(local))
    .map(({ local }) => local);
}

/**
 * The class output directories the app names besides `known` (each found once): those its agent
 * watches ({@link agentClassDirs}), then those on its JVM's class path ({@link classPathDirs}).
 */
export function appClassDirs(
  view: AgentView,
  known: readonly string[],
  roots: readonly string[],
): { fromAgent: string[]; fromClassPath: string[] } {
  const fromAgent = agentClassDirs(view, known, roots);
  return { fromAgent, fromClassPath: classPathDirs(view, [...known, ...fromAgent], roots) };
}

/** True when `dir` neither nests with one of `known` nor holds a folder of `roots`. */
function taken(dir: string, known: readonly string[], roots: readonly string[]): boolean {
  return !known.some((k) => overlaps(k, dir)) && !roots.some((root) => isInside(root, dir));
}

/** The agent's watched directories that are not here (translated by the path map), for `--verbose`. */
export function missingWatchedDirs(view: AgentView): string[] {
  return view.watched.filter((w) => w.here === 'missing').map((w) => w.local);
}

/**
 * True when a watched directory is this project's: inside one of `roots` (the project folders),
 * or it is, holds or lies inside one of the project's class output directories `classDirs`.
 */
export function isProjectDir(dir: string, roots: readonly string[], classDirs: readonly string[]): boolean {
  return roots.some((root) => isInside(dir, root)) || classDirs.some((c) => overlaps(c, dir));
}

/**
 * True when the agent is, by its own evidence, another app's (a stale port file whose port
 * another app's agent now uses): all it watches is known and is something, none of it is this
 * project's, and its working directory is outside every one of `roots`.
 */
export function isForeignAgent(view: AgentView, roots: readonly string[], classDirs: readonly string[]): boolean {
  // An agent that watches nothing (its watchDirs all missing) says nothing of whose it is.
  if (!view.complete || view.watched.length === 0 || view.workingDirectory === '') return false;
  if (view.watched.some((w) => isProjectDir(w.local, roots, classDirs))) return false;
  return !roots.some((root) => isInside(view.workingDirectory, root));
}

/** True when one of the two directories is the other or lies inside it. */
function overlaps(a: string, b: string): boolean {
  return isWithin(a, b) || isWithin(b, a);
}

/** True when `inner` is `outer` or lies inside it. */
function isWithin(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep);
}

/** True when a `.class` file lies somewhere below `dir` (at most {@link CLASS_SEARCH_FOLDERS} folders looked at). */
function holdsClassFiles(dir: string): boolean {
  let folders = 0;
  for (const { names } of classFolders(dir)) {
    if (names.length > 0) return true;
    if (++folders >= CLASS_SEARCH_FOLDERS) return false;
  }
  return false;
}
