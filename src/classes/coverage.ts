/**
 * What the agent watches, seen from here (protocol.md "DOCTOR" and "How the running agent
 * differs": a change in a directory it does not watch never reloads): its watched directories
 * translated by `--path-map`, whether each exists here and holds class files, whether the
 * project's class output directories are among them, and whether the agent is this project's.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DoctorObserved } from '../outcome/doctor.js';
import type { DirCoverage } from '../outcome/facts.js';
import { classFolders } from './scan.js';
import { isInside } from './dirs.js';
import { toLocal, type PathMapEntry } from '../agent/path-map.js';

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
  watched: WatchedHere[];
  /**
   * The sample is the whole truth: the watcher is `watching`, it lists at least one directory,
   * `watchSampleTruncated` is false and as many are listed as counted. An agent still starting, or
   * one listing none, says nothing about what it will watch.
   */
  complete: boolean;
  /** DOCTOR's `workingDirectory`, translated by the path map. */
  workingDirectory: string;
}

/** How many folders {@link holdsClassFiles} looks into before it says no. */
const CLASS_SEARCH_FOLDERS = 2000;

/** The agent's view from its DOCTOR evidence, with `map` (agent path -> local path). Reads the file system. */
export function agentView(
  doctor: Pick<
    DoctorObserved,
    'watchedDirectories' | 'watchedDirectoryCount' | 'watchSampleTruncated' | 'workingDirectory' | 'watcherState'
  >,
  map: readonly PathMapEntry[],
): AgentView {
  const watched = doctor.watchedDirectories.map((reported): WatchedHere => {
    const local = path.resolve(toLocal(map, reported));
    return { reported, local, real: realOf(local), here: !isDir(local) ? 'missing' : holdsClassFiles(local) ? 'classes' : 'empty' };
  });
  const listed = doctor.watchedDirectories.length;
  const complete =
    doctor.watcherState === 'watching' && listed > 0 && !doctor.watchSampleTruncated && listed >= doctor.watchedDirectoryCount;
  const workingDirectory = doctor.workingDirectory === '' ? '' : path.resolve(toLocal(map, doctor.workingDirectory));
  return { watched, complete, workingDirectory };
}

/**
 * Whether the agent watches each of `dirs`: a watched directory (local) equals it, contains it,
 * or lies inside it. Unknown (null) when not found but the agent's sample is incomplete.
 */
export function watchCoverage(
  dirs: readonly string[],
  view: { watched: readonly (Pick<WatchedHere, 'local'> & Partial<Pick<WatchedHere, 'real'>>)[]; complete: boolean },
): DirCoverage[] {
  return dirs.map((dir) => {
    const real = realOf(dir);
    const found = view.watched.some((w) => overlaps(dir, w.local) || overlaps(real, w.real ?? w.local));
    return { dir, watched: found ? true : view.complete ? false : null };
  });
}

/**
 * Class output directories the agent watches that reclazz-build did not find by itself: with a
 * complete sample, the watched directories here that hold class files and neither contain nor
 * lie inside one of `known` (a known one names classes from its own root), nor hold one of the
 * project folders `roots` (`/` or a home folder is no class output directory, and scanning it
 * would read the whole disk). Sorted.
 */
export function agentClassDirs(view: AgentView, known: readonly string[], roots: readonly string[]): string[] {
  if (!view.complete) return [];
  const taken = (local: string) => !known.some((k) => overlaps(k, local)) && !roots.some((root) => isInside(root, local));
  const dirs = view.watched.filter((w) => w.here === 'classes' && taken(w.local)).map((w) => w.local);
  return [...new Set(dirs)].sort();
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
 * another app's agent now uses): its sample is complete, it watches none of this project's
 * directories, and its working directory is outside every one of `roots`.
 */
export function isForeignAgent(view: AgentView, roots: readonly string[], classDirs: readonly string[]): boolean {
  if (!view.complete || view.workingDirectory === '') return false;
  if (view.watched.some((w) => isProjectDir(w.local, roots, classDirs))) return false;
  return !roots.some((root) => isInside(view.workingDirectory, root));
}

/** True when one of the two directories is the other or lies inside it. */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(b + path.sep) || b.startsWith(a + path.sep);
}

/** `dir` with symbolic links resolved; as it is when it does not exist. */
function realOf(dir: string): string {
  try {
    return fs.realpathSync.native(dir);
  } catch {
    return dir;
  }
}

function isDir(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
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
