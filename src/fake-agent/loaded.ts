/**
 * What the stand-in JVM runs: the classes it loaded at its start from its class path, each with
 * the bytes it runs now, and where a class it has not loaded would be loaded from. The agent's
 * reloads ask it which classes are loaded (agent ClassReloader.reloadBatch and
 * ReclazzAgent.alreadyLoaded: a class is found by name, wherever the JVM loaded it from), and tell
 * it each redefinition that completed; nothing else changes what a loaded class runs.
 *
 * The class path is opened at the start as the JDK's application class loader opens it
 * (jdk.internal.loader.URLClassPath): each entry is made canonical then (links resolved), a folder
 * there then is looked in at each later load (FileLoader), a jar is read when opened and kept open
 * (JarLoader: a jar replaced on disk later is not seen; its manifest's Class-Path is opened after
 * it), and an entry missing then is never looked at again. `java -jar` makes the jar the whole
 * class path; Spring Boot's executable jar adds its launcher's class loader (see `launched`). A real app loads a class on first use; the stand-in loads every class on its class
 * path at its start (first entry wins), which is what a client must assume of a running app.
 */
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Hierarchy, readHierarchy, sha256Hex } from './capture.js';
import { jarEntries, jarFileEntries, manifestClassPath, manifestValue } from './jar.js';
import { isBinaryClassName } from './wire.js';

/**
 * One class path entry as the JVM opened it at its start: a folder, or a jar's entries below
 * `prefix` (`''`: all of them), by name below it (`file` is the jar, `<jar>!/<entry>` for a nested one).
 */
type Entry = { kind: 'folder'; dir: string } | { kind: 'jar'; file: string; prefix: string; classes: ReadonlyMap<string, Buffer> };

/** A class the JVM has loaded, and what it runs now. */
interface LoadedClass {
  /** SHA-256 of the bytes it runs; undefined when they are of no one file (a redefinition in part, or of one of several files). */
  sha256: string | undefined;
  /** The class file (or `<jar>!/<entry>`) those bytes came from. */
  source: string;
  hierarchy: Hierarchy | null;
}

/**
 * What the JVM runs of one class: the bytes it loaded and runs (`loaded`), else the bytes it
 * would load on first use (undefined: no class path entry holds the class). `source` is the file
 * they come from (`<jar>!/<entry>` for a jar's).
 */
export interface ClassTruth {
  loaded: boolean;
  sha256: string | undefined;
  source?: string | undefined;
}

/** The classes of one JVM, from its start to its end. */
export class LoadedClasses {
  private entries: Entry[] = [];
  private readonly classes = new Map<string, LoadedClass>();
  private loadedAt = Number.NaN;

  /**
   * The JVM starts with class path `classPath` (absolute local paths, in order; `<dir>/*` is the
   * jars in `<dir>`; with `java -jar <runJar>`, that jar alone): its entries are opened and every
   * class on them is loaded, the first entry holding a class giving its bytes. What an earlier JVM
   * loaded is forgotten.
   */
  start(classPath: readonly string[], runJar?: string): void {
    this.loadedAt = Date.now();
    this.classes.clear();
    const opened = new Set<string>();
    this.entries = classPath.flatMap(expand).flatMap((entry) => open(entry, opened));
    if (runJar !== undefined) this.entries.push(...launched(runJar));
    for (const entry of this.entries) {
      for (const [name, { bytes, source }] of classesOf(entry)) {
        if (!this.classes.has(name)) this.classes.set(name, { sha256: sha256Hex(bytes), source, hierarchy: readHierarchy(bytes) });
      }
    }
  }

  /** When the JVM loaded its classes at its last start, epoch ms (NaN before its first). */
  get loadedAtMs(): number {
    return this.loadedAt;
  }

  /** True when the JVM has loaded `className` (a binary name). */
  isLoaded(className: string): boolean {
    return this.classes.has(className);
  }

  /** The superclass and interfaces of the class as the JVM loaded it (null: not a class file, or not loaded). */
  hierarchyOf(className: string): Hierarchy | null {
    return this.classes.get(className)?.hierarchy ?? null;
  }

  /**
   * A redefinition of loaded class `className` completed with bytes `sha256` read from `source`
   * (undefined: applied in part, or from one of several files, so of no one file).
   */
  redefine(className: string, sha256: string | undefined, source: string): void {
    const loaded = this.classes.get(className);
    if (loaded !== undefined) this.classes.set(className, { ...loaded, sha256, source });
  }

  /** `className` is loaded now (a new bean the agent registered) with the bytes at `source`. */
  define(className: string, sha256: string, source: string, hierarchy: Hierarchy | null): void {
    if (!this.classes.has(className)) this.classes.set(className, { sha256, source, hierarchy });
  }

  /** What the JVM runs of `className`, or would load on first use (see {@link ClassTruth}). */
  truth(className: string): ClassTruth {
    const loaded = this.classes.get(className);
    if (loaded !== undefined) return { loaded: true, sha256: loaded.sha256, source: loaded.source };
    const entryName = `${className.split('.').join('/')}.class`;
    for (const entry of this.entries) {
      if (entry.kind === 'jar') {
        const bytes = entry.classes.get(entryName);
        if (bytes !== undefined) return { loaded: false, sha256: sha256Hex(bytes), source: `${entry.file}!/${entry.prefix}${entryName}` };
        continue;
      }
      const file = join(entry.dir, ...entryName.split('/'));
      const bytes = readFile(file);
      if (bytes !== undefined) return { loaded: false, sha256: sha256Hex(bytes), source: file };
    }
    return { loaded: false, sha256: undefined };
  }
}

/** A `<dir>/*` entry is the jars in `<dir>` (the launcher expands it), in name order here. */
function expand(entry: string): string[] {
  if (basename(entry) !== '*') return [entry];
  try {
    return readdirSync(dirname(entry))
      .filter((name) => /\.jar$/i.test(name))
      .sort()
      .map((name) => join(dirname(entry), name));
  } catch {
    return [];
  }
}

/**
 * An entry as the class loader opens it at the start, or none when nothing is there then or it
 * was opened before (`opened`, canonical paths). A jar's manifest `Class-Path` entries come right
 * after it (URLClassPath pushes a jar's class path before the entries not opened yet).
 */
function open(entry: string, opened: Set<string>): Entry[] {
  try {
    const canonical = realpathSync.native(entry);
    if (opened.has(canonical)) return [];
    opened.add(canonical);
    const stat = statSync(canonical);
    if (stat.isDirectory()) return [{ kind: 'folder', dir: canonical }];
    if (!stat.isFile()) return [];
    const entries = jarFileEntries(canonical);
    const listed = manifestClassPath(entries).flatMap((url) => localOf(url, dirname(canonical)));
    return [{ kind: 'jar', file: entry, prefix: '', classes: entries }, ...listed.flatMap((path) => open(path, opened))];
  } catch {
    // missing at the start: never looked at again
  }
  return [];
}

/** A manifest `Class-Path` URL as a local path: relative ones against the jar's folder; none for another scheme. */
function localOf(url: string, base: string): string[] {
  try {
    if (/^file:/i.test(url)) return [fileURLToPath(url)];
    if (/^[a-z][a-z0-9+.-]+:/i.test(url)) return [];
    return [resolve(base, decodeURIComponent(url))];
  } catch {
    return [];
  }
}

/**
 * What `java -jar <jar>` loads besides the JDK's class path when the jar is Spring Boot's
 * executable jar (its Main-Class Spring Boot's launcher, `org.springframework.boot.loader`
 * `ExecutableArchiveLauncher`): a class loader under the application's one (which it asks first)
 * over `BOOT-INF/classes/`, then the jars in `BOOT-INF/lib/` in `BOOT-INF/classpath.idx` order.
 */
function launched(jar: string): Entry[] {
  const entries = jarFileEntries(jar);
  const main = manifestValue(entries.get('META-INF/MANIFEST.MF')?.toString('utf8'), 'Main-Class');
  if (main?.startsWith('org.springframework.boot.loader.') !== true) return [];
  const prefix = 'BOOT-INF/classes/';
  const classes = new Map([...entries].filter(([name]) => name.startsWith(prefix)).map(([name, bytes]) => [name.slice(prefix.length), bytes]));
  const index = entries.get('BOOT-INF/classpath.idx')?.toString('utf8') ?? '';
  const listed = [...index.matchAll(/^- "(.+)"$/gm)].map((match) => match[1]!);
  const libs = [...entries.keys()].filter((name) => /^BOOT-INF\/lib\/[^/]+\.jar$/.test(name));
  const order = (name: string): number => (listed.includes(name) ? listed.indexOf(name) : listed.length);
  const nested = libs.sort((a, b) => order(a) - order(b)).map((name): Entry => ({ kind: 'jar', file: `${jar}!/${name}`, prefix: '', classes: jarEntries(entries.get(name)!) }));
  return [{ kind: 'jar', file: jar, prefix, classes }, ...nested];
}

/** The binary name of class file `path` (relative), as a class loader takes it: Java identifiers, any script (no `META-INF/...`, no `module-info`). */
function nameOf(path: string): string | undefined {
  if (!path.endsWith('.class')) return undefined;
  const name = path.slice(0, -'.class'.length).split(/[/\\]/).join('.');
  return isBinaryClassName(name) ? name : undefined;
}

/** Every class an entry holds now, by binary name, with its bytes and where they are. */
function classesOf(entry: Entry): Map<string, { bytes: Buffer; source: string }> {
  const found = new Map<string, { bytes: Buffer; source: string }>();
  if (entry.kind === 'jar') {
    for (const [entryName, bytes] of entry.classes) {
      const name = nameOf(entryName);
      if (name !== undefined) found.set(name, { bytes, source: `${entry.file}!/${entry.prefix}${entryName}` });
    }
    return found;
  }
  // A class loader opens `<dir>/com/acme/Shape.class` by its path: links on the way are followed.
  const seen = new Set<string>();
  const walk = (dir: string): void => {
    let real: string;
    try {
      real = realpathSync.native(dir);
    } catch {
      return;
    }
    if (seen.has(real)) return;
    seen.add(real);
    let items: Dirent[];
    try {
      items = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const item of items) {
      const path = join(dir, item.name);
      const stat = statOf(path);
      if (stat?.isDirectory()) walk(path);
      else if (stat?.isFile()) {
        const name = nameOf(relative(entry.dir, path).split(sep).join('/'));
        const bytes = name === undefined ? undefined : readFile(path);
        if (name !== undefined && bytes !== undefined) found.set(name, { bytes, source: path });
      }
    }
  };
  walk(entry.dir);
  return found;
}

function statOf(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function readFile(path: string): Buffer | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path) : undefined;
  } catch {
    return undefined;
  }
}
