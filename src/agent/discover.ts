/**
 * Finding the agent's port (protocol.md "Finding the agent"): `--port`, `--port-file`,
 * `RECLAZZ_PORT`, `RECLAZZ_PORT_FILE`, a port file in the folder or a parent, then every one a few
 * levels down (the attach plugins write it into the subproject the app runs from).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { OutcomeOf, PortFault } from '../outcome/outcome.js';
import { checkoutOf } from '../util/fs.js';

/** Where a port file may sit, relative to a project folder, in the agent client's order. */
const PORT_FILE_LOCATIONS = [path.join('.reclazz', 'agent.port'), path.join('.idea', 'reclazz', 'agent.port')] as const;

/** Folders never searched downward for a port file. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'build', 'target', '.gradle', '.mvn']);

/** How many folder levels below the working directory the downward search looks. */
const DOWNWARD_DEPTH = 4;

/** Inputs to {@link discoverAgent}. */
export interface DiscoverOptions {
  /** Explicit port (`--port`), 1..65535. */
  port?: number;
  /** Explicit port file (`--port-file`), relative to `cwd` or absolute. */
  portFile?: string;
  /** Explicit port files (`--port-file` given more than once), relative to `cwd` or absolute; `portFile` joins them. */
  portFiles?: string[];
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

/** Why no usable port was found: the refusal itself (`offerNoAgent` false; a build sets it). */
type DiscoveryRefusal = OutcomeOf<'no-agent' | 'ambiguous-agent' | 'bad-port-file'>;

/** What discovery found: a location, or why there is none. */
export type Discovery = { kind: 'found'; location: AgentLocation } | { kind: 'refused'; outcome: DiscoveryRefusal };

/** Every agent found: one location, or several (each port file below the folder, sorted by path). */
export type Discoveries = { kind: 'found'; locations: AgentLocation[] } | { kind: 'refused'; outcome: DiscoveryRefusal };

/**
 * Finds the agent's port without connecting, for a command that talks to one agent: several
 * port files below the folder are `ambiguous-agent`. Never throws for the file system.
 */
export function discoverAgent(options: DiscoverOptions): Discovery {
  const found = discoverAgents(options);
  if (found.kind === 'refused') return found;
  const [only, ...more] = found.locations;
  if (more.length === 0) return { kind: 'found', location: only! };
  const named = options.portFile !== undefined || (options.portFiles ?? []).length > 0;
  const portFiles = found.locations.map((l) => l.portFile!);
  return { kind: 'refused', outcome: { reason: 'ambiguous-agent', cwd: options.cwd, portFiles, ...(named ? { named } : {}) } };
}

/**
 * Finds every agent a build holds, without connecting: the explicit ones (`--port`, each
 * `--port-file`, the environment), else the first port file in the folder or a parent, else
 * every port file below it (sorted by path, so that two runs take their holds in one order). A
 * folder in no checkout (no `.git` at or above it) finds none in another checkout below it (a
 * folder with its own `.git`): those are refused as `ambiguous-agent`, named, for `--port-file`.
 * Never throws for the file system.
 */
export function discoverAgents(options: DiscoverOptions): Discoveries {
  const { cwd, env } = options;
  if (options.port !== undefined) return all([{ port: options.port, source: '--port', projectDir: cwd }]);
  const named = [...(options.portFile === undefined ? [] : [options.portFile]), ...(options.portFiles ?? [])];
  // Sorted like those found below: two runs naming the same agents take their holds in one order.
  if (named.length > 0) return fromPortFiles([...new Set(named.map((f) => path.resolve(cwd, f)))].sort(), '--port-file');
  const envPort = env.RECLAZZ_PORT;
  if (envPort !== undefined && envPort !== '') {
    const port = parsePort(envPort);
    return typeof port === 'number'
      ? all([{ port, source: 'RECLAZZ_PORT', projectDir: cwd }])
      : badPort({ input: 'RECLAZZ_PORT', problem: port, text: envPort });
  }
  const envFile = env.RECLAZZ_PORT_FILE;
  if (envFile !== undefined && envFile !== '') return fromPortFiles([path.resolve(cwd, envFile)], 'RECLAZZ_PORT_FILE');

  for (let dir = cwd; ; dir = path.dirname(dir)) {
    for (const relative of PORT_FILE_LOCATIONS) {
      const candidate = path.join(dir, relative);
      if (fs.existsSync(candidate)) return fromPortFiles([candidate], undefined);
    }
    if (path.dirname(dir) === dir) break;
  }

  const below = findBelow(cwd);
  // A run holds only its own checkout's agents: from a folder in none, another checkout's are not its own.
  const others = checkoutOf(cwd) === undefined ? below.filter((file) => checkoutOf(projectDirOf(file)) !== undefined) : [];
  if (others.length > 0) return { kind: 'refused', outcome: { reason: 'ambiguous-agent', cwd, portFiles: others, otherCheckouts: true } };
  if (below.length > 0) return fromPortFiles(below, undefined);
  return { kind: 'refused', outcome: { reason: 'no-agent', cwd, depth: DOWNWARD_DEPTH, offerNoAgent: false } };
}

/** Every port file in `cwd`, a parent or a few levels below, sorted: a refusal names them for `--port-file`. */
export function portFilesAround(cwd: string): string[] {
  const found = new Set<string>();
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    for (const relative of PORT_FILE_LOCATIONS) if (fs.existsSync(path.join(dir, relative))) found.add(path.join(dir, relative));
    if (path.dirname(dir) === dir) break;
  }
  for (const file of findBelow(cwd)) found.add(file);
  return [...found].sort();
}

/** A port file holds at most this many bytes (a port and some whitespace); a larger one is not the agent's. */
const PORT_FILE_MAX_BYTES = 64;

// O_NONBLOCK: a FIFO put in the file's place after the stat must not block the open (0 where the platform lacks it).
const PORT_FILE_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/**
 * Reads a port file (protocol.md "Finding the agent"): a regular file whose trimmed content is a
 * decimal 1..65535. At most {@link PORT_FILE_MAX_BYTES} + 1 bytes are read; a FIFO never blocks.
 * @param file absolute path of the port file.
 * @returns the port, or what is wrong with the file.
 */
export function readPortFile(file: string): number | PortFault {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    const code = errorCode(error);
    return code === 'ENOENT' ? { input: 'file', file, problem: 'missing' } : { input: 'file', file, problem: 'cannot-stat', code };
  }
  if (stat.isDirectory()) return { input: 'file', file, problem: 'directory' };
  if (!stat.isFile()) return { input: 'file', file, problem: 'not-regular' };
  let bytes: Buffer | 'not-regular';
  try {
    bytes = readBounded(file, PORT_FILE_MAX_BYTES + 1);
  } catch (error) {
    return { input: 'file', file, problem: 'unreadable', code: errorCode(error) };
  }
  if (bytes === 'not-regular') return { input: 'file', file, problem: 'not-regular' };
  if (bytes.length > PORT_FILE_MAX_BYTES) return { input: 'file', file, problem: 'too-large', limit: PORT_FILE_MAX_BYTES };
  const text = bytes.toString('utf8').trim();
  const port = parsePort(text);
  return typeof port === 'number' ? port : { input: 'file', file, problem: port, text };
}

/** At most `limit` bytes from the start of `file`, or 'not-regular' when what was opened is not a regular file (swapped since the stat). */
function readBounded(file: string, limit: number): Buffer | 'not-regular' {
  const fd = fs.openSync(file, PORT_FILE_FLAGS);
  try {
    if (!fs.fstatSync(fd).isFile()) return 'not-regular';
    const bytes = Buffer.alloc(limit);
    let got = 0;
    for (let n = -1; n !== 0 && got < limit; got += n) n = fs.readSync(fd, bytes, got, limit - got, got);
    return bytes.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

/** Parses a decimal port 1..65535 (already trimmed), or says why it is not one. */
function parsePort(text: string): number | 'empty' | 'not-a-number' | 'out-of-range' {
  if (text === '') return 'empty';
  if (!/^\d+$/.test(text)) return 'not-a-number';
  const port = Number(text);
  return port < 1 || port > 65535 ? 'out-of-range' : port;
}

function all(locations: AgentLocation[]): Discoveries {
  return { kind: 'found', locations };
}

function badPort(fault: PortFault): Discoveries {
  return { kind: 'refused', outcome: { reason: 'bad-port-file', fault } };
}

/** The location of each port file (absolute), or the refusal of the first one that is not valid. */
function fromPortFiles(files: string[], source: string | undefined): Discoveries {
  const locations: AgentLocation[] = [];
  for (const file of files) {
    const port = readPortFile(file);
    if (typeof port !== 'number') return badPort(port);
    locations.push({ port, source: source === undefined ? file : `${source} ${file}`, portFile: file, projectDir: projectDirOf(file) });
  }
  return all(locations);
}

/** The folder holding `.reclazz/agent.port` or `.idea/reclazz/agent.port`; for any other file, its own folder. */
export function projectDirOf(file: string): string {
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
