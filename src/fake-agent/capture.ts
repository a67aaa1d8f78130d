/**
 * What the agent's watcher sees: class files under the watched directories and their SHA-256
 * (protocol.md, "VERIFY": hashes are of the class file bytes).
 * Synchronous on purpose: small reads are fastest synchronously, and a capture is one atomic
 * step in the fake's timeline.
 */
import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** One class file found by a scan. */
export interface ClassFile {
  /** Absolute path of the .class file. */
  path: string;
  /** Binary name from the path relative to its watched dir: `a/b/C$D.class` -> `a.b.C$D`. */
  className: string;
  /** SHA-256 of the file bytes, 64 lower-case hex digits. */
  sha256: string;
}

/** Binary class name of `file` relative to the watched directory `root`, or null for non-class files and module-info/package-info. */
export function binaryName(root: string, file: string): string | null {
  if (!file.endsWith('.class')) return null;
  const name = relative(root, file).slice(0, -'.class'.length).split(sep).join('.');
  const simple = name.slice(name.lastIndexOf('.') + 1);
  if (simple === 'module-info' || simple === 'package-info') return null;
  return name;
}

/** SHA-256 of `bytes` as 64 lower-case hex digits. */
export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** True when `dir` exists and is a directory. */
export function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** A file's hash, reused by {@link scanClassFiles} while size, mtime, ctime and inode stay the same. */
export interface CachedHash {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  sha256: string;
}

/**
 * Every class file under the (absolute) watched directories, hashed; missing directories are
 * skipped, other read errors throw (a failed capture). With `cache`, a file whose stamp is
 * unchanged keeps its hash (a write moves ctime). `onRead` sees the bytes actually read; names
 * `skip` accepts (`excludePatterns`) are left out unread.
 */
export function scanClassFiles(
  dirs: readonly string[],
  cache?: Map<string, CachedHash>,
  onRead?: (file: ClassFile, bytes: Buffer) => void,
  skip?: (fileName: string) => boolean,
): ClassFile[] {
  const found: ClassFile[] = [];
  for (const root of dirs) {
    if (!isDirectory(root)) continue;
    const stack = [root];
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          stack.push(path);
        } else if (entry.isFile() || isLinkToFile(entry, path)) {
          const className = binaryName(root, path);
          if (className === null || skip?.(entry.name) === true) continue;
          const read = (): string => {
            const bytes = readFileSync(path);
            const sha256 = sha256Hex(bytes);
            onRead?.({ path, className, sha256 }, bytes);
            return sha256;
          };
          found.push({ path, className, sha256: cache ? cachedHash(path, cache, read) : read() });
        }
      }
    }
  }
  if (cache && cache.size > found.length) {
    const seen = new Set(found.map((file) => file.path));
    for (const path of cache.keys()) if (!seen.has(path)) cache.delete(path);
  }
  return found;
}

/**
 * A symbolic link to a class file counts as that file: the agent's watcher takes events and
 * directory walks by entry name and reads the bytes through the link (FileWatcher.java:
 * `Files.walkFileTree` visits links as files, `Files.readAllBytes` follows them).
 */
function isLinkToFile(entry: Dirent, path: string): boolean {
  try {
    return entry.isSymbolicLink() && statSync(path).isFile();
  } catch {
    return false;
  }
}

function cachedHash(path: string, cache: Map<string, CachedHash>, readAndHash: () => string): string {
  const stat: Stats = statSync(path);
  const known = cache.get(path);
  if (known && known.size === stat.size && known.mtimeMs === stat.mtimeMs && known.ctimeMs === stat.ctimeMs && known.ino === stat.ino) {
    return known.sha256;
  }
  const sha256 = readAndHash();
  cache.set(path, { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, sha256 });
  return sha256;
}

/**
 * Just enough of the class file format (JVMS §4.1, §4.4) to read a class's superclass and
 * interfaces: a JVM cannot redefine a class with another superclass, so the agent reports such
 * a change as needing a restart (protocol.md, "VERIFY": a superclass change is `unverified`).
 */

/** Superclass and interfaces of one class, binary names with dots. */
export interface Hierarchy {
  /** `''` for java.lang.Object and module-info. */
  superclass: string;
  interfaces: string[];
}

/** Constant pool tags and the bytes each entry takes after its tag (JVMS §4.4). */
const ENTRY_BYTES: Record<number, number> = { 3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2 };
const UTF8 = 1;
const CLASS = 7;

/** The hierarchy declared by class file `bytes`, or null when they are not a class file. */
export function readHierarchy(bytes: Buffer): Hierarchy | null {
  try {
    if (bytes.length < 10 || bytes.readUInt32BE(0) !== 0xcafebabe) return null;
    const count = bytes.readUInt16BE(8);
    // Where each Utf8 entry starts, and which Utf8 entry each Class entry names; names are
    // decoded only for the few classes asked for.
    const utf8At = new Int32Array(count).fill(-1);
    const classNameIndex = new Int32Array(count).fill(-1);
    let at = 10;
    for (let index = 1; index < count; index++) {
      const tag = bytes[at++];
      if (tag === UTF8) {
        utf8At[index] = at;
        at += 2 + bytes.readUInt16BE(at);
        continue;
      }
      const size = ENTRY_BYTES[tag];
      if (size === undefined) return null;
      if (tag === CLASS) classNameIndex[index] = bytes.readUInt16BE(at);
      at += size;
      if (tag === 5 || tag === 6) index++; // long and double take two slots
    }
    const name = (classIndex: number): string => {
      const start = utf8At[classNameIndex[classIndex] ?? -1] ?? -1;
      if (start < 0) throw new Error('bad class reference');
      return bytes.toString('utf8', start + 2, start + 2 + bytes.readUInt16BE(start)).replace(/\//g, '.');
    };
    const superIndex = bytes.readUInt16BE(at + 4);
    const interfaceCount = bytes.readUInt16BE(at + 6);
    const interfaces: string[] = [];
    for (let i = 0; i < interfaceCount; i++) interfaces.push(name(bytes.readUInt16BE(at + 8 + 2 * i)));
    return { superclass: superIndex === 0 ? '' : name(superIndex), interfaces };
  } catch {
    return null;
  }
}

/**
 * The superclass change from `before` to `after` (binary names), or undefined when it is the
 * same. The agent cannot apply a superclass change without a restart (agent
 * reload/StructuralReloader.java); interfaces and members it reloads.
 */
export function superclassChange(before: Hierarchy, after: Hierarchy): { from: string; to: string } | undefined {
  return before.superclass === after.superclass ? undefined : { from: before.superclass || 'java.lang.Object', to: after.superclass || 'java.lang.Object' };
}

/**
 * The agent's own file watcher (protocol.md, "Without a hold the agent reloads on its own"):
 * changes in a watched directory that no build hold covers are captured after a debounce,
 * with no BUILD signal at all. Polls, so that it behaves the same on every platform.
 */

/** What the watcher needs from the agent. Durations in ms. */
export interface WatcherHooks {
  /** Quiet time after the last seen change before the capture (the agent's default: 500). */
  debounceMs: number;
  /** How often the watched directories are looked at. */
  pollMs: number;
  /** Class files whose bytes differ from those last admitted; throws on read errors. */
  changedFiles(): ClassFile[];
  /** True while a capture may run on its own: wired, no hold, not paused, none scheduled. */
  mayCapture(): boolean;
  /** Run a capture now. */
  capture(): void;
}

/** A running watcher; stop() ends its polling. */
export interface Watcher {
  stop(): void;
}

/** Start polling; the timer never keeps the process alive. */
export function startWatcher(hooks: WatcherHooks): Watcher {
  let seen = '';
  let quietSinceMs = 0;
  const poll = (): void => {
    let changed: ClassFile[];
    try {
      changed = hooks.changedFiles();
    } catch {
      return; // a file vanished mid-scan: look again next time
    }
    const now = Date.now();
    const signature = changed.map((file) => `${file.path}\0${file.sha256}`).sort().join('\n');
    if (signature !== seen) {
      seen = signature;
      quietSinceMs = now;
      return;
    }
    if (changed.length > 0 && now - quietSinceMs >= hooks.debounceMs && hooks.mayCapture()) {
      hooks.capture();
      seen = '';
    }
  };
  const timer = setInterval(poll, hooks.pollMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
