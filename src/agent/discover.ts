/**
 * Finding the agent's port (protocol.md "Finding the agent"), in this order:
 * `--port`, `--port-file`, `RECLAZZ_PORT`, `RECLAZZ_PORT_FILE`, then `.reclazz/agent.port` or
 * `.idea/reclazz/agent.port` in the folder and each parent, then exactly one such file a few
 * levels down (the Gradle and Maven attach plugins write it into the subproject the app runs from).
 */
import fs from 'node:fs';
import path from 'node:path';

/** Where a port file may sit, relative to a project folder, in the agent client's order. */
export const PORT_FILE_LOCATIONS = [path.join('.reclazz', 'agent.port'), path.join('.idea', 'reclazz', 'agent.port')] as const;

/** Folders never searched downward for a port file. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'build', 'target', '.gradle', '.mvn']);

/** How many folder levels below the working directory the downward search looks. */
export const DOWNWARD_DEPTH = 4;

/** Inputs to {@link discoverAgent}. */
export interface DiscoverOptions {
  /** Explicit port (`--port`), 1..65535. */
  port?: number;
  /** Explicit port file (`--port-file`), relative to `cwd` or absolute. */
  portFile?: string;
  /** Folder to search from (absolute). */
  cwd: string;
  /** Environment to read `RECLAZZ_PORT` and `RECLAZZ_PORT_FILE` from. */
  env: NodeJS.ProcessEnv;
}

/** A port and how it was found. */
export interface AgentLocation {
  port: number;
  /** Human words for where the port came from: `--port`, `RECLAZZ_PORT`, or the port file's path. */
  source: string;
  /** The port file read, when one was. */
  portFile?: string;
  /**
   * The project folder the port file belongs to (the folder holding `.reclazz/` or `.idea/`),
   * else `cwd`. Run state and the lock live in its `.reclazz/`.
   */
  projectDir: string;
}

/** Why discovery failed. */
export type DiscoveryFailure = 'not-found' | 'ambiguous' | 'bad-port' | 'bad-port-file';

/** No usable port. The message names the input and the next step. */
export class DiscoveryError extends Error {
  override readonly name = 'DiscoveryError';
  constructor(
    readonly kind: DiscoveryFailure,
    message: string,
    /** The port files involved (for `ambiguous`, every candidate). */
    readonly paths: string[] = [],
  ) {
    super(message);
  }
}

/**
 * Finds the agent's port without connecting.
 * @throws DiscoveryError for a missing, ambiguous or invalid port or port file.
 */
export function discoverAgent(options: DiscoverOptions): AgentLocation {
  const { cwd, env } = options;
  if (options.port !== undefined) return { port: options.port, source: '--port', projectDir: cwd };
  if (options.portFile !== undefined) return fromPortFile(path.resolve(cwd, options.portFile), '--port-file');
  const envPort = env.RECLAZZ_PORT;
  if (envPort !== undefined && envPort !== '') {
    return {
      port: parsePort(envPort, 'RECLAZZ_PORT', 'set RECLAZZ_PORT to the agent port (1-65535) or unset it'),
      source: 'RECLAZZ_PORT',
      projectDir: cwd,
    };
  }
  const envFile = env.RECLAZZ_PORT_FILE;
  if (envFile !== undefined && envFile !== '') return fromPortFile(path.resolve(cwd, envFile), 'RECLAZZ_PORT_FILE');

  for (let dir = cwd; ; dir = path.dirname(dir)) {
    for (const relative of PORT_FILE_LOCATIONS) {
      const candidate = path.join(dir, relative);
      if (fs.existsSync(candidate)) return fromPortFile(candidate, undefined);
    }
    if (path.dirname(dir) === dir) break;
  }

  const below = findBelow(cwd);
  if (below.length === 1) return fromPortFile(below[0]!, undefined);
  if (below.length > 1) {
    throw new DiscoveryError(
      'ambiguous',
      `found ${below.length} agent port files below ${cwd}:\n${below.map((p) => `  ${p}`).join('\n')}\n` +
        'Pick one with --port-file <path>, or run from the subproject the app runs in.',
      below,
    );
  }
  throw new DiscoveryError(
    'not-found',
    `no running agent found: no .reclazz/agent.port or .idea/reclazz/agent.port in ${cwd}, its parents, ` +
      `or up to ${DOWNWARD_DEPTH} levels below.\n` +
      'Start the app with the reclazz agent, or point at it with --port <n> or --port-file <path> ' +
      '(or run the build without a hold: --allow-no-agent).',
  );
}

/**
 * Reads and validates a port file (protocol.md "Finding the agent"): a regular file whose
 * trimmed content (a trailing CRLF included) is a decimal integer 1..65535.
 * @param file absolute path of the port file.
 * @returns the port.
 * @throws DiscoveryError kind bad-port-file, one distinct message per fault, each naming the
 *   path and the next step: missing, cannot be looked at (stat error), a directory, not a
 *   regular file, unreadable (read error), empty, not a number, outside 1..65535.
 */
export function readPortFile(file: string): number {
  const fail = (message: string): never => {
    throw new DiscoveryError('bad-port-file', message, [file]);
  };
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') {
      fail(
        `port file ${file} does not exist: the agent is not running, or writes its port file elsewhere. Start the app with the agent, check the path, or pass --port <n>.`,
      );
    }
    fail(`cannot look at port file ${file} (${code}): check the permissions of the folders on its path, or pass --port <n>.`);
  }
  if (stat!.isDirectory()) {
    fail(
      `port file ${file} is a directory, not a file: pass the agent.port file itself with --port-file <path>, or remove the directory so the agent can write its port file there.`,
    );
  }
  if (!stat!.isFile()) {
    fail(
      `port file ${file} is not a regular file (a device, pipe or socket): point --port-file at the agent.port file the agent writes, or pass --port <n>.`,
    );
  }
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    fail(
      `cannot read port file ${file} (${errorCode(error)}): check its permissions (the agent writes it as the user running the app), or pass --port <n>.`,
    );
  }
  return parsePort(
    text.trim(),
    `port file ${file}`,
    'the agent writes it whole at start-up, so it was left by something else or damaged; delete it and restart the app, or pass --port <n>',
    'bad-port-file',
    [file],
  );
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

/**
 * Parses a decimal port 1..65535 (already trimmed).
 * @param what names the input in the message (`port file <path>`, `RECLAZZ_PORT`).
 * @param fix the next step, appended to the message.
 * @throws DiscoveryError of `kind`, one message each for empty, not a number, and outside 1..65535.
 */
export function parsePort(text: string, what: string, fix: string, kind: DiscoveryFailure = 'bad-port', paths: string[] = []): number {
  if (text === '') throw new DiscoveryError(kind, `${what} is empty: ${fix}.`, paths);
  if (!/^\d+$/.test(text))
    throw new DiscoveryError(kind, `${what} does not hold a port number (${JSON.stringify(text.slice(0, 40))}): ${fix}.`, paths);
  const port = Number(text);
  if (port < 1 || port > 65535) throw new DiscoveryError(kind, `${what} holds ${text}, outside 1-65535: ${fix}.`, paths);
  return port;
}

function fromPortFile(file: string, source: string | undefined): AgentLocation {
  const port = readPortFile(file);
  return {
    port,
    source: source === undefined ? file : `${source} ${file}`,
    portFile: file,
    projectDir: projectDirOf(file),
  };
}

/** The folder holding `.reclazz/agent.port` or `.idea/reclazz/agent.port`; for any other file, its own folder. */
function projectDirOf(file: string): string {
  const dir = path.dirname(file);
  if (path.basename(dir) === '.reclazz') return path.dirname(dir);
  if (path.basename(dir) === 'reclazz' && path.basename(path.dirname(dir)) === '.idea') return path.dirname(path.dirname(dir));
  return dir;
}

function findBelow(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || SKIP_DIRS.has(entry.name)) continue;
      const child = path.join(dir, entry.name);
      if (entry.name === '.reclazz' || entry.name === '.idea') continue;
      for (const relative of PORT_FILE_LOCATIONS) {
        const candidate = path.join(child, relative);
        if (fs.existsSync(candidate)) {
          found.push(candidate);
          break;
        }
      }
      if (depth < DOWNWARD_DEPTH) walk(child, depth + 1);
    }
  };
  walk(root, 1);
  return found.sort();
}
