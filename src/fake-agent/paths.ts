/**
 * Paths as the agent reports them. An agent in a container sees its bind mounts under other
 * names (`/app/target/classes` for a local `/home/me/shop/target/classes`): the fake reports
 * local paths through a map from agent paths to local paths, the same `<agent>=<local>` pairs
 * reclazz-build's `--path-map` takes.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { isDirectory } from './capture.js';
import { tmpdir } from 'node:os';

/** Local path -> reported path. */
export type PathReporter = (localPath: string) => string;

/**
 * A reporter for `map` (agent path -> local path; local paths resolve against process.cwd()).
 * The longest local prefix that contains the path (whole segments) is replaced by its agent
 * path, joined with `/`; paths under no entry are reported as they are.
 * Throws when an agent path is not absolute.
 */
export function pathReporter(map: Record<string, string> | undefined): PathReporter {
  const entries = Object.entries(map ?? {}).map(([agentPath, localPath]) => {
    if (!agentPath.startsWith('/') && !isAbsolute(agentPath)) {
      throw new Error(`pathMap: the agent path "${agentPath}" must be absolute (e.g. /app)`);
    }
    return { agentPath: agentPath.replace(/\/+$/, '') || '/', localPath: resolve(localPath) };
  });
  entries.sort((a, b) => b.localPath.length - a.localPath.length);
  return (localPath) => {
    for (const entry of entries) {
      const rest = relative(entry.localPath, localPath);
      if (rest === '') return entry.agentPath;
      if (rest === '..' || rest.startsWith(`..${sep}`) || isAbsolute(rest)) continue;
      const tail = rest.split(sep).join('/');
      return entry.agentPath === '/' ? `/${tail}` : `${entry.agentPath}/${tail}`;
    }
    return localPath;
  };
}

/**
 * The inverse of {@link pathReporter}: an agent path under the longest agent path of `map` that
 * contains it (whole segments) is put under its local path; any other path is taken as local.
 */
export function pathLocaliser(map: Record<string, string> | undefined): (agentPath: string) => string {
  const entries = Object.entries(map ?? {})
    .map(([agentPath, localPath]) => ({ agentPath: agentPath.replace(/\/+$/, '') || '/', localPath: resolve(localPath) }))
    .sort((a, b) => b.agentPath.length - a.agentPath.length);
  return (agentPath) => {
    for (const entry of entries) {
      if (agentPath === entry.agentPath) return entry.localPath;
      const prefix = entry.agentPath === '/' ? '/' : `${entry.agentPath}/`;
      if (agentPath.startsWith(prefix)) return join(entry.localPath, ...agentPath.slice(prefix.length).split('/'));
    }
    return agentPath;
  };
}

/**
 * The port file (protocol.md, "Finding the agent") and the app folder it implies.
 */

/**
 * Write `port` as decimal text without newline, whole: temp file in the same dir, then rename, as
 * the agent does (agent/StatusServer.java start(), util/AtomicWrite), so no reader sees it half written.
 */
export function writePortFile(path: string, port: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, String(port));
  renameSync(temp, path);
}

/**
 * Delete the port file whatever port it names, as the agent's `StatusServer.stop()` does
 * (agent/src/main/java/com/onurkat/reclazz/agent/StatusServer.java, `Files.deleteIfExists`): a JVM
 * that stops after another one wrote its port there deletes that one's file (protocol.md, "The
 * port file is anyone's to delete").
 */
export function removePortFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

/**
 * The app folder a port file implies: the agent writes `<app dir>/.reclazz/agent.port` when no
 * `portFile=` is given, and the IDE `<project>/.idea/reclazz/agent.port`. Undefined otherwise.
 */
export function appDirOfPortFile(path: string): string | undefined {
  const dir = dirname(path);
  if (basename(dir) === '.reclazz') return dirname(dir);
  if (basename(dir) === 'reclazz' && basename(dirname(dir)) === '.idea') return dirname(dirname(dir));
  return undefined;
}

/**
 * The directories the agent's watcher registers (agent FileWatcher.registerDirectories,
 * doctorEvidence; platform/SpringBootContext): each directory under a watched root, and the
 * resource folder derived from a class output directory. Links are not followed (`Files.walkFileTree`).
 */

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

/**
 * The class output directories the agent watches when its `watchDirs` names none (agent
 * platform/SpringBootContext.java autoDetectOutputDirs): the class path's directories ending in
 * `/target/classes` or `/target/test-classes` or holding `/build/classes/`, else the app folder's
 * `target/classes` and `build/classes/java/main`; only those that are directories now.
 */
export function defaultOutputDirs(classPath: readonly string[] | undefined, appDir: string): string[] {
  const onPath = (classPath ?? [])
    .map((entry) => resolve(appDir, entry))
    .filter((dir) => {
      const slashed = dir.split(sep).join('/');
      return isDirectory(dir) && (slashed.endsWith('/target/classes') || slashed.endsWith('/target/test-classes') || slashed.includes('/build/classes/'));
    });
  if (onPath.length > 0) return onPath;
  return [join(appDir, 'target', 'classes'), join(appDir, 'build', 'classes', 'java', 'main')].filter(isDirectory);
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

/**
 * The agent's options on the stand-in JVM's command line, and `excludePatterns` (agent
 * config/AgentConfig.java: `key=value` joined by `,`, lists split on `;`; globs with `*` and `?`
 * over the whole file name, case-sensitive).
 */

/** Where the stand-in says the agent's jar is: a plausible path; nothing reads it. */
export function agentJarPath(version: string | null): string {
  return join(tmpdir(), 'reclazz', `reclazz-agent-${version ?? '1.0.0'}.jar`);
}

/** What the fake's own settings make of the agent's argument string. */
export interface ArgumentFacts {
  /** The watched directories as the agent would be given them (its own paths). */
  watchDirs: readonly string[];
  excludePatterns: readonly string[];
  /** The watcher's start delay, in ms (shown as whole seconds, `startupDelaySec`). */
  watcherStartMs: number;
  /** The watcher's debounce, in ms (`debounceMs`, shown when not the agent's default 500). */
  debounceMs?: number;
  /** `autoCompile=true` (shown last). */
  autoCompile?: boolean;
}

/**
 * The agent's argument string for these settings, in the Maven plugin's order: `watchDirs`
 * first, then the others; empty (a bare `-javaagent:<jar>`) when there is nothing to say.
 */
export function agentArguments(facts: ArgumentFacts): string {
  const pairs: string[] = [];
  if (facts.watchDirs.length > 0) pairs.push(`watchDirs=${facts.watchDirs.join(';')}`);
  if (facts.excludePatterns.length > 0) pairs.push(`excludePatterns=${facts.excludePatterns.join(';')}`);
  if (Number.isFinite(facts.watcherStartMs) && facts.watcherStartMs > 0) {
    pairs.push(`startupDelaySec=${Math.ceil(facts.watcherStartMs / 1000)}`);
  }
  if (facts.debounceMs !== undefined && facts.debounceMs !== 500) pairs.push(`debounceMs=${facts.debounceMs}`);
  if (facts.autoCompile === true) pairs.push('autoCompile=true');
  return pairs.join(',');
}

/** A matcher of file names for `patterns` (agent AgentConfig.globToRegex and isExcluded). */
export function excludedBy(patterns: readonly string[]): (fileName: string) => boolean {
  const compiled = patterns
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== '')
    .map((pattern) => new RegExp(`^${[...pattern].map(globChar).join('')}$`));
  return (fileName) => compiled.some((regex) => regex.test(fileName));
}

function globChar(c: string): string {
  if (c === '*') return '.*';
  if (c === '?') return '.';
  return /[.\\[\](){}+^$|]/.test(c) ? `\\${c}` : c;
}
