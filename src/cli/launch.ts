/**
 * Start-up of the `reclazz-build` command (`bin/reclazz-build.cjs`): runs the CLI bundle
 * (`dist/cli.cjs`) with V8's code cache, kept in the user's cache folder.
 *
 * Why: after Node's own start-up, a run is mostly compiling and starting the bundle's
 * JavaScript. V8 compiles most functions only when first called, so a cache taken right after
 * compiling (what Node 20's loaders and require hooks can do) misses them; this one is taken
 * when the process exits, after a whole run, and makes the next run skip compiling nearly
 * everything it calls (bench/README.md, "History", has what it saves).
 *
 * The cache is code V8 will run, so it is only read from a folder only this user can write
 * to, and V8 is only given data that passes our own check first: V8 release builds do not
 * checksum the data (one changed byte crashed the process or ran wrong code) and compare only
 * the source's length (a bundle rebuilt in place to the same length ran the old code). The
 * file is a header (magic, SHA-256 of the bundle's identity, SHA-256 of the payload) and V8's
 * data. The identity is the bundle file's device, inode, size, mtime and ctime in ns, read
 * before and after reading it: any write to the file moves its ctime, which no one can set
 * back, and a stat costs next to nothing where hashing the whole bundle took time at every start;
 * V8 itself still refuses data from another V8 version or other flags. Anything unexpected
 * (no cache folder, data that fails a check, a failed write) just means compiling as usual
 * and a new cache at exit. `RECLAZZ_CODE_CACHE_DIR` names the folder; `RECLAZZ_CODE_CACHE=0`
 * turns the cache off.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire, wrap } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

/** Start of a cache file: format marker, then SHA-256 of the bundle's identity and of the payload. */
const MAGIC = Buffer.from('RCLZV8C\x02', 'latin1');
const HEADER_LENGTH = MAGIC.length + 32 + 32;
/** Other installs' cache files are deleted when untouched this long; our temp files after a day. */
const STALE_CACHE_MS = 30 * 24 * 3600 * 1000;
const STALE_TEMP_MS = 24 * 3600 * 1000;

/** Where the code cache lives, and which folders may be made for it. */
export interface CodeCacheLocation {
  /** The folder of the cache files. */
  dir: string;
  /**
   * The folders a save may create, outermost first, ending with `dir`; each only inside one that
   * exists (`mkdir` without `recursive`), so a missing home or parent folder means no cache.
   */
  create: readonly string[];
}

/**
 * The folder for the code cache: `RECLAZZ_CODE_CACHE_DIR` when it is absolute (a relative one
 * turns the cache off rather than make folders in whatever the working folder is), else
 * `reclazz-build` in `XDG_CACHE_HOME` (when absolute) or `~/.cache` (`%LOCALAPPDATA%` on
 * Windows); undefined when the cache is off (`RECLAZZ_CODE_CACHE=0`) or there is no such folder
 * to use. Only the `reclazz-build` folder (the named one) and `.cache` in the home folder may be
 * created, never their parents.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): CodeCacheLocation | undefined {
  if (env.RECLAZZ_CODE_CACHE === '0') return undefined;
  const p = platform === 'win32' ? path.win32 : path.posix;
  const named = env.RECLAZZ_CODE_CACHE_DIR;
  if (named) return p.isAbsolute(named) ? { dir: p.normalize(named), create: [p.normalize(named)] } : undefined;
  const base = platform === 'win32' ? env.LOCALAPPDATA : env.XDG_CACHE_HOME;
  if (base && p.isAbsolute(base)) return { dir: p.join(base, 'reclazz-build'), create: [p.join(base, 'reclazz-build')] };
  if (platform === 'win32' || home === '' || !p.isAbsolute(home)) return undefined;
  return { dir: p.join(home, '.cache', 'reclazz-build'), create: [p.join(home, '.cache'), p.join(home, '.cache', 'reclazz-build')] };
}

/**
 * Runs the CommonJS bundle `file` as the program, compiled with the code cache when there is
 * one that passes the checks; when there is none (or it failed a check, or V8 rejected it) and
 * the run does real work, saves a new one as the process exits, replacing the old one and
 * pruning stale ones. Never throws for the cache.
 * @param words the command line after the program name: `--version`/`--help` runs (which
 *   call little of the CLI) never write the cache.
 */
export function launch(file: string, words: readonly string[]): void {
  const { bytes, identity } = readBundle(file);
  const location = codeCacheDir(process.env, process.platform, os.homedir());
  let cache: { file: string; sourceHash: Buffer } | undefined;
  let cachedData: Buffer | undefined;
  // No identity (the bundle changed while it was read): no cache is read or saved.
  if (location !== undefined && identity !== undefined) {
    // The wrapper counts too: it is part of the code V8 compiles.
    cache = {
      file: path.join(location.dir, cacheName(file)),
      sourceHash: createHash('sha256').update(wrap('')).update(identity).digest(),
    };
    cachedData = verifiedPayload(readOwn(cache.file), cache.sourceHash);
  }
  const script = new vm.Script(wrap(bytes.toString('utf8')), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  if (
    location !== undefined &&
    cache !== undefined &&
    (cachedData === undefined || script.cachedDataRejected === true) &&
    !isLightRun(words)
  ) {
    const { file: cacheFile, sourceHash } = cache;
    process.once('exit', () => save(location, cacheFile, sourceHash, script));
  }
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, path.dirname(file));
}

/**
 * The bundle's bytes and its identity (device, inode, size, mtime and ctime in ns); no identity
 * (so no cache) when the file changed while it was read.
 */
function readBundle(file: string): { bytes: Buffer; identity: string | undefined } {
  const fd = fs.openSync(file, 'r');
  try {
    const id = (stat: fs.BigIntStats) => `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    const before = id(fs.fstatSync(fd, { bigint: true }));
    const bytes = fs.readFileSync(fd);
    return { bytes, identity: id(fs.fstatSync(fd, { bigint: true })) === before ? before : undefined };
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether the command line only asks for `--version` or `--help` (before any `--`). */
export function isLightRun(words: readonly string[]): boolean {
  const own = words.includes('--') ? words.slice(0, words.indexOf('--')) : words;
  return own.some((w) => w === '-V' || w === '--version' || w === '-h' || w === '--help');
}

/**
 * `cli-<bundle path hash>-<V8 version>.v8cache`: one per installed copy of the CLI and Node
 * version (neither evicts the other), overwritten when it is rebuilt or upgraded (the header
 * says which bundle it is for).
 */
function cacheName(file: string): string {
  return `${cachePrefix(file)}-${process.versions.v8}.v8cache`;
}

/** `cli-` and an FNV-1a hash of the bundle's path. */
function cachePrefix(file: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < file.length; i += 1) hash = Math.imul(hash ^ file.charCodeAt(i), 0x01000193);
  return `cli-${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** The payload of a cache file made for this bundle whose bytes are as written (SHA-256); else undefined. */
function verifiedPayload(data: Buffer | undefined, sourceHash: Buffer): Buffer | undefined {
  if (data === undefined || data.length <= HEADER_LENGTH) return undefined;
  if (!data.subarray(0, MAGIC.length).equals(MAGIC) || !data.subarray(MAGIC.length, MAGIC.length + 32).equals(sourceHash)) return undefined;
  const payload = data.subarray(HEADER_LENGTH);
  return createHash('sha256')
    .update(payload)
    .digest()
    .equals(data.subarray(MAGIC.length + 32, HEADER_LENGTH))
    ? payload
    : undefined;
}

/** The file's bytes when it and its folder belong to this user and no one else can write them (POSIX); else undefined. */
function readOwn(file: string): Buffer | undefined {
  try {
    if (!privateToUs(path.dirname(file)) || !privateToUs(file)) return undefined;
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

function privateToUs(target: string): boolean {
  if (process.platform === 'win32' || process.getuid === undefined) return true;
  const stat = fs.statSync(target);
  return stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
}

/**
 * Writes the cache whole (temp file and rename, so a concurrent run reads the old one or the new
 * one), then prunes the folder (see {@link prune}). Plain fs calls, not write-file-atomic: this
 * runs at every start-up and must not load more code.
 */
function save(location: CodeCacheLocation, cacheFile: string, sourceHash: Buffer, script: vm.Script): void {
  try {
    for (const folder of location.create) {
      try {
        fs.mkdirSync(folder, { mode: 0o700 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    if (!privateToUs(location.dir)) return;
    const payload = script.createCachedData();
    const header = Buffer.concat([MAGIC, sourceHash, createHash('sha256').update(payload).digest()]);
    const temp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(temp, Buffer.concat([header, payload]), { mode: 0o600 });
    fs.renameSync(temp, cacheFile);
    prune(location.dir, path.basename(cacheFile));
  } catch {
    // The cache is only a speed-up.
  }
}

/**
 * Deletes, among our files in `dir` other than `keep`: any `cli-*.v8cache` neither read nor
 * written for 30 days (other installs or Node versions, long gone; read time counts where the
 * file system keeps it), and `cli-*.v8cache.<pid>.tmp` left for a day by a run that died while
 * saving.
 * Other names are left alone (the folder may be one `RECLAZZ_CODE_CACHE_DIR` shares).
 */
function prune(dir: string, keep: string): void {
  const now = Date.now();
  for (const name of fs.readdirSync(dir)) {
    if (name === keep || !name.startsWith('cli-')) continue;
    const isCache = name.endsWith('.v8cache');
    if (!isCache && !/\.v8cache\.\d+\.tmp$/.test(name)) continue;
    try {
      const file = path.join(dir, name);
      const stat = fs.lstatSync(file);
      if (stat.isDirectory()) continue;
      const idle = now - Math.max(stat.mtimeMs, stat.atimeMs);
      if (isCache ? idle > STALE_CACHE_MS : now - stat.mtimeMs > STALE_TEMP_MS) fs.unlinkSync(file);
    } catch {
      // Gone already, or not ours to delete.
    }
  }
}
