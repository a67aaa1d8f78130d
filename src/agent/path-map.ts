/**
 * `--path-map <agent path>=<local path>`: an app in a container reports its bind mounts under
 * the container's names (`/app/target/classes` for a local `/home/me/shop/target/classes`). The
 * map turns the paths DOCTOR reports (watched directories, working directory) into local ones,
 * and local ones back into the agent's words for advice (its `watchDirs=` option).
 */
import path from 'node:path';

/** One `<agent path>=<local path>` pair: both absolute, without a trailing separator. */
export interface PathMapEntry {
  agent: string;
  local: string;
}

/** A `--path-map` value (or config entry) that is not `<absolute agent path>=<local path>`. */
export class PathMapError extends Error {
  override readonly name = 'PathMapError';
}

/**
 * Parses `<agent path>=<local path>`; the local path resolves against `base` (absolute).
 * The agent path is a POSIX or Windows absolute path (the app may run on another system).
 * @throws PathMapError naming the value and the expected shape.
 */
export function parsePathMap(value: string, base: string): PathMapEntry {
  const at = value.indexOf('=');
  const agent = at < 0 ? '' : trimEnd(value.slice(0, at));
  const local = at < 0 ? '' : value.slice(at + 1);
  if (agent === '' || local === '' || !isAbsoluteAnywhere(agent)) {
    throw new PathMapError(
      `--path-map ${JSON.stringify(value)}: expected <agent path>=<local path> with an absolute agent path, e.g. /app=${path.join(base, 'app')}`,
    );
  }
  return { agent, local: path.resolve(base, local) };
}

/** The local path of what the agent reports as `agentPath`: the longest matching agent prefix replaced; unmapped paths as they are. */
export function toLocal(map: readonly PathMapEntry[], agentPath: string): string {
  const entry = longest(
    map,
    (e) => under(agentPath, e.agent, '/'),
    (e) => e.agent.length,
  );
  if (entry === undefined) return agentPath;
  const rest = agentPath.slice(entry.agent.length).replace(/^[/\\]+/, '');
  return rest === '' ? entry.local : path.join(entry.local, ...rest.split(/[/\\]/));
}

/** How the agent names the local path `localPath` (for its own options); unmapped paths as they are. */
export function toAgent(map: readonly PathMapEntry[], localPath: string): string {
  const entry = longest(
    map,
    (e) => under(localPath, e.local, path.sep),
    (e) => e.local.length,
  );
  if (entry === undefined) return localPath;
  const rest = path.relative(entry.local, localPath);
  if (rest === '') return entry.agent;
  const separator = entry.agent.includes('\\') ? '\\' : '/';
  return `${entry.agent}${entry.agent.endsWith(separator) ? '' : separator}${rest.split(path.sep).join(separator)}`;
}

function longest(map: readonly PathMapEntry[], matches: (e: PathMapEntry) => boolean, size: (e: PathMapEntry) => number) {
  let best: PathMapEntry | undefined;
  for (const entry of map) if (matches(entry) && (best === undefined || size(entry) > size(best))) best = entry;
  return best;
}

/** True when `p` is `prefix` or lies below it, by whole segments. */
function under(p: string, prefix: string, separator: string): boolean {
  if (p === prefix) return true;
  const root = prefix.endsWith('/') || prefix.endsWith('\\') ? prefix : prefix + separator;
  return p.startsWith(root) || (separator === '/' && p.startsWith(prefix + '\\'));
}

function isAbsoluteAnywhere(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[/\\]/.test(p) || p.startsWith('\\\\');
}

/** Without trailing separators, but `/` stays `/`. */
function trimEnd(p: string): string {
  const trimmed = p.replace(/[/\\]+$/, '');
  return trimmed === '' ? p.slice(0, 1) : /^[A-Za-z]:$/.test(trimmed) ? `${trimmed}\\` : trimmed;
}
