/**
 * What the agent's watcher sees: class files under the watched directories and their SHA-256
 * (protocol.md, "VERIFY": hashes are of the class file bytes).
 * Synchronous on purpose: small reads are fastest synchronously, and a capture is one atomic
 * step in the fake's timeline.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, type Dirent, type Stats } from 'node:fs';
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
 * Every class file under the (absolute) watched directories, recursively, hashed.
 * Missing directories are skipped; any other read error throws (a failed capture).
 * With `cache`, a file whose size, mtime, ctime and inode are unchanged since it was last
 * hashed keeps its hash (any write moves ctime, so new bytes are still seen); the cache is
 * updated in place and forgets files that are gone. `onRead` sees the bytes of every file
 * this scan actually read (all of them without a cache). A file whose name `skip` accepts is
 * left out unread (the agent's `excludePatterns`).
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
