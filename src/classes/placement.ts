/**
 * The disk facts of the pre-start kind of evidence (evidence.ts): whether a class file has been
 * at its path, as the JVM resolves it, since before the JVM started, and whether an earlier entry
 * of the JVM's class path holds the class. Read from the disk; the answers are plain facts.
 *
 * Measured on ext4 (Linux 6.18, both /tmp and /work here): renaming a folder, file or symbolic
 * link moves that inode's ctime, never its mtime, whether within one folder or across folders,
 * and moves the mtime and ctime of every folder it left or joined; a new link (`ln -sfn`) is a
 * new inode; `link()` moves the file's ctime. Adding or removing an entry moves the folder's
 * mtime and ctime together and nothing above it; writing into a file moves no folder. So a node
 * is at its path since a time when its own ctime is earlier (it was not renamed or linked since)
 * or its folder's ctime is earlier (no entry of that folder changed since), and its folder is.
 * A log file the app creates in the checkout root (or the agent's `.reclazz/` in the app's folder)
 * moves only that folder's times: it is taken as placed, and its children stand by their own
 * ctime. A folder whose own entries and whose folder's entries both changed since cannot be told
 * from one renamed into place and written into: not placed, so its files are asked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { cutOf, type EarlierEntries, type SightFacts, type StartCut } from './evidence.js';
import { fileURLToPath } from 'node:url';
import { readJar, type JarListing } from './jar.js';
import { isInside, realOf } from '../util/fs.js';

/** Where a Spring Boot fat jar keeps the app's own classes: its launcher loads them from there. */
const FAT_JAR_CLASSES = 'BOOT-INF/classes/';

/** Symbolic links followed in one path before it counts as a loop. */
const MAX_LINKS = 40;

/** Where a JVM loads classes from, seen from here. */
export interface JvmPaths {
  /** The checkout root: folders above it are not looked at (the root itself is taken as placed). */
  top: string;
  /**
   * The JVM's working directory (local): the folder of its process's working directory now, as
   * `findAppStart` confirmed, so the folder it started in. Taken as placed, like `top`.
   */
  workingDirectory?: string | undefined;
  /** Its class path entries in order (absolute, local; `real` with links resolved now); empty when not known. */
  classPath: readonly { local: string; real: string }[];
  /** Whether its agent watches class file `file` (coverage.ts): true, false (not its folder, or its name excluded), null (unknown). */
  watched: (file: string) => boolean | null;
}

/** A node's placement: whether it is at its path since the cut, its ctime, and its path with links resolved. */
interface Node {
  placed: boolean;
  ctimeMs: number;
  real: string;
}

/**
 * Placement facts against one JVM start. A path is walked from the innermost of the JVM's working
 * directory and the checkout root that holds it (folders above are not looked at), else from the
 * file system's root. Answers are kept for the life of the object: make one per run.
 */
export class Placement {
  private readonly nodes = new Map<string, Node>();
  private readonly jars = new Map<string, JarListing | undefined>();
  /** The class path as the JVM opens it, read as far as asked ({@link openedAt}). */
  private readonly opened: { local: string; real: string }[] = [];
  /** The entries not opened yet, the next one last. */
  private readonly unopened: string[];
  /** The real paths of the entries opened. */
  private readonly seen = new Set<string>();
  private readonly cutMs: number;
  /** The folders taken as placed, innermost first: the JVM's working directory, the checkout root. */
  private readonly tops: string[];

  /** `start`: the JVM's start; undefined when not known (nothing is placed since then, but where a class loads from is). */
  constructor(
    private readonly start: StartCut | undefined,
    private readonly paths: JvmPaths,
  ) {
    this.cutMs = start === undefined ? Number.NEGATIVE_INFINITY : cutOf(start);
    const tops = [paths.top, ...(paths.workingDirectory === undefined || paths.workingDirectory === '' ? [] : [paths.workingDirectory])];
    this.tops = tops.map((dir) => path.resolve(dir)).sort((a, b) => b.length - a.length);
    this.unopened = paths.classPath.map((entry) => entry.local).reverse();
  }

  /**
   * The rule's pre-start facts (evidence.ts) of class file `file` (absolute) in class output
   * directory `dir`, whose symbolic link's own ctime is `linkCtimeMs` (its ctime when it is none):
   * the class path entry that is `dir`, the file's path through that entry (as the JVM resolved it
   * at its start) placed since the start, and what the entries before it hold.
   */
  sight(file: string, dir: string, linkCtimeMs: number): SightFacts {
    const index = this.entryOf(dir);
    const relative = path.relative(dir, file);
    const onClassPath = index >= 0;
    const through = onClassPath ? path.join(this.openedAt(index)!.local, relative) : file;
    const earlier = onClassPath ? this.earlier(index, relative, true) : 'unknown';
    const classPathKnown = this.paths.classPath.length > 0;
    const elsewhere = !onClassPath && classPathKnown && this.paths.watched(file) === false;
    return { start: this.start, linkCtimeMs, placed: this.placed(through), onClassPath, earlier, elsewhere, classPathKnown };
  }

  /**
   * Whether `target` (absolute) has been at its path since the cut: every folder and link on the
   * way from the top, links followed, was not renamed since and sits in a folder that was not
   * changed since, one or the other. For a file this says nothing of its bytes (its ctime does).
   */
  placed(target: string): boolean {
    return this.node(path.resolve(target), 0).placed;
  }

  /**
   * Where the JVM loads class file `file` of class output directory `dir` from when it first loads
   * the class (it has not yet): whether `dir` is a class path entry, and what the entries before it
   * hold now (a class not loaded is looked for then, not at the start).
   */
  loadsFrom(file: string, dir: string): Pick<SightFacts, 'onClassPath' | 'earlier' | 'classPathKnown'> {
    const index = this.entryOf(dir);
    const classPathKnown = this.paths.classPath.length > 0;
    if (index < 0) return { onClassPath: false, earlier: 'unknown', classPathKnown };
    return { onClassPath: true, earlier: this.earlier(index, path.relative(dir, file), false), classPathKnown };
  }

  /**
   * The jar on the JVM's class path it loads class file `file` of class output directory `dir`
   * from instead of that file, or undefined when none is known to: a jar before `dir` on the class
   * path holding the class (the rule {@link loadsFrom} reads), or, with `dir` not on it, any jar
   * holding it, at its name or as a Spring Boot fat jar's `BOOT-INF/classes/` (`java -jar app.jar`).
   */
  jarInstead(file: string, dir: string): string | undefined {
    const index = this.entryOf(dir);
    const relative = path.relative(dir, file);
    const named = relative.split(path.sep).join('/');
    const isJar = (entry: string) => statOf(entry)?.isFile() === true;
    const entries = this.openedUpTo(index);
    if (index >= 0) return entries.find((entry) => isJar(entry) && this.entrySays(entry, relative, false) === 'held');
    return entries.find((entry) => {
      const names = isJar(entry) ? this.listing(entry)?.names : undefined;
      return names !== undefined && (names.has(named) || names.has(`${FAT_JAR_CLASSES}${named}`));
    });
  }

  /**
   * Whether the JVM loaded the class of class file `file` (in class output directory `dir`) from
   * `dir` at its start: `dir` is an entry of its class path, at its place since the start as the
   * JVM resolved it then, and no earlier entry held the class then or has since. Undefined when
   * the start or the class path is not known.
   */
  loadedFrom(file: string, dir: string): boolean | undefined {
    if (this.start === undefined || this.paths.classPath.length === 0) return undefined;
    const index = this.entryOf(dir);
    if (index < 0) return false;
    return this.placed(this.openedAt(index)!.local) && this.earlier(index, path.relative(dir, file), true) === 'none';
  }

  /**
   * The index of class output directory `dir` among the class path's entries as the JVM opens
   * them ({@link openedAt}; links resolved), or -1.
   */
  private entryOf(dir: string): number {
    const real = realOf(dir);
    for (let index = 0; ; index++) {
      const entry = this.openedAt(index);
      if (entry === undefined) return -1;
      if (entry.local === dir || entry.real === real) return index;
    }
  }

  /** The entries as the JVM opens them (absolute) before `index`, or all of them when it is -1. */
  private openedUpTo(index: number): string[] {
    const entries: string[] = [];
    for (let at = 0; index < 0 || at < index; at++) {
      const entry = this.openedAt(at);
      if (entry === undefined) break;
      entries.push(entry.local);
    }
    return entries;
  }

  /**
   * The `index`th entry of the class path as the JVM's class loader opens it
   * (jdk.internal.loader.URLClassPath): the entries given, each jar's manifest `Class-Path`
   * right after it (URLs relative to the jar's folder, or `file:` ones; others are not opened),
   * an entry met before (links resolved) opened once. Undefined past the end. Read as far as asked.
   */
  private openedAt(index: number): { local: string; real: string } | undefined {
    while (this.opened.length <= index) {
      const local = this.unopened.pop();
      if (local === undefined) return undefined;
      const real = realOf(local);
      if (this.seen.has(real)) continue;
      this.seen.add(real);
      this.opened.push({ local, real });
      const listed = statOf(local)?.isFile() === true ? (this.listing(local)?.classPath ?? []) : [];
      const next = listed.flatMap((url) => localOfUrl(url, path.dirname(local)) ?? []);
      this.unopened.push(...next.reverse());
    }
    return this.opened[index];
  }

  /**
   * What the class path entries the JVM opens before the `index`th ({@link openedAt}) say of the class
   * file `relative` (`com/acme/Shape.class`): none holds it (`none`; with `sinceStart`, none has
   * since the cut), one holds it now (`held`), or that cannot be told (`unknown`: an entry changed
   * since the cut, a jar or its manifest that cannot be read, a wildcard).
   */
  private earlier(index: number, relative: string, sinceStart: boolean): EarlierEntries {
    let result: EarlierEntries = 'none';
    for (const entry of this.openedUpTo(Math.max(index, 0))) {
      const said = this.entrySays(entry, relative, sinceStart);
      if (said === 'held') return 'held';
      if (said === 'unknown') result = 'unknown';
    }
    return result;
  }

  private entrySays(entry: string, relative: string, sinceStart: boolean): EarlierEntries {
    if (path.basename(entry) === '*') return 'unknown';
    const own = lstatOf(entry);
    const stat = own === undefined ? undefined : statOf(entry);
    // A link to nothing may come to point at a class.
    if (own !== undefined && stat === undefined) return 'unknown';
    if (stat?.isDirectory()) {
      const file = path.join(entry, relative);
      if (statOf(file) !== undefined) return 'held';
      return !sinceStart || this.absentSince(file) ? 'none' : 'unknown';
    }
    if (stat?.isFile()) {
      // What its manifest lists is opened after it ({@link openedAt}); one that cannot be read may list anything.
      const listing = this.listing(entry);
      if (listing?.classPath === undefined) return 'unknown';
      if (listing.names.has(relative.split(path.sep).join('/'))) return 'held';
      return !sinceStart || (stat.ctimeMs < this.cutMs && this.placed(entry)) ? 'none' : 'unknown';
    }
    return stat === undefined && (!sinceStart || this.absentSince(entry)) ? 'none' : 'unknown';
  }

  /** The jar `entry`'s listing, read once per object. */
  private listing(entry: string): JarListing | undefined {
    if (!this.jars.has(entry)) this.jars.set(entry, readJar(entry));
    return this.jars.get(entry);
  }

  /** Whether nothing has been at `file` since the cut: its nearest existing folder is placed and unchanged since. */
  private absentSince(file: string): boolean {
    for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
      const stat = statOf(dir);
      if (stat !== undefined) return stat.isDirectory() && stat.ctimeMs < this.cutMs && this.placed(dir);
      if (path.dirname(dir) === dir) return false;
    }
  }

  private node(target: string, links: number): Node {
    const known = this.nodes.get(target);
    if (known !== undefined) return known;
    const found = this.walk(target, links);
    this.nodes.set(target, found);
    return found;
  }

  private walk(target: string, links: number): Node {
    const top = this.tops.find((dir) => isInside(target, dir)) ?? path.parse(target).root;
    if (target === top) {
      const stat = statOf(top);
      return stat === undefined ? NOT_PLACED : { placed: true, ctimeMs: stat.ctimeMs, real: realOf(top) };
    }
    const parent = this.node(path.dirname(target), links);
    if (!parent.placed) return NOT_PLACED;
    const here = path.join(parent.real, path.basename(target));
    const own = lstatOf(here);
    if (own === undefined || !(own.ctimeMs < this.cutMs || parent.ctimeMs < this.cutMs)) return NOT_PLACED;
    if (!own.isSymbolicLink()) return { placed: true, ctimeMs: own.ctimeMs, real: here };
    if (links >= MAX_LINKS) return NOT_PLACED;
    try {
      return this.node(path.resolve(parent.real, fs.readlinkSync(here)), links + 1);
    } catch {
      return NOT_PLACED;
    }
  }
}

/**
 * A manifest `Class-Path` URL as a local path (URLClassPath.JarLoader.parseClassPath): a relative
 * one against the jar's folder `base`, a `file:` one as it names; undefined for another scheme
 * (not opened) or one that cannot be read.
 */
function localOfUrl(url: string, base: string): string | undefined {
  try {
    if (/^file:/i.test(url)) return fileURLToPath(url);
    if (/^[a-z][a-z0-9+.-]+:/i.test(url)) return undefined;
    return path.resolve(base, decodeURIComponent(url));
  } catch {
    return undefined;
  }
}

const NOT_PLACED: Node = { placed: false, ctimeMs: Number.POSITIVE_INFINITY, real: '' };

function lstatOf(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}
