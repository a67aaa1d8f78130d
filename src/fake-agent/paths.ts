/**
 * Paths as the agent reports them. An agent in a container sees its bind mounts under other
 * names (`/app/target/classes` for a local `/home/me/shop/target/classes`): the fake reports
 * local paths through a map from agent paths to local paths, the same `<agent>=<local>` pairs
 * reclazz-build's `--path-map` takes.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

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
