/**
 * Start-up of `reclazz-build` (`bin/reclazz-build.cjs`): runs `dist/cli.cjs` with a V8 code cache
 * taken at exit, after a whole run, since V8 compiles most functions only when first called
 * (savings: bench/README.md, "History"). The cache is code V8 will run, and V8 release builds
 * neither checksum it nor compare more than the source's length, so it is read only from a folder
 * only this user can write, and checked first: a header with SHA-256 of the bundle's identity
 * (device, inode, size, mtime, ctime in ns, stat'ed around the read: any write moves ctime) and
 * of the payload. Anything unexpected means compiling as usual. `RECLAZZ_CODE_CACHE_DIR` names
 * the folder; `RECLAZZ_CODE_CACHE=0` turns it off.
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
 * The folder for the code cache: `RECLAZZ_CODE_CACHE_DIR` if absolute (relative turns the cache
 * off), else `reclazz-build` in `XDG_CACHE_HOME`, `~/.cache` or `%LOCALAPPDATA%`; undefined when
 * off. Only that folder and `~/.cache` may be created, never their parents.
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
 * Runs the CommonJS bundle `file` with the code cache when one passes the checks; else, for a run
 * doing real work, saves a new one at exit. Never throws for the cache.
 * @param words the command line after the program name: `--version`/`--help` never write the cache.
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

/** `cli-<bundle path hash>-<V8 version>.v8cache`: one per installed copy and Node version, so neither evicts the other. */
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
 * Deletes our files in `dir` but `keep`: `cli-*.v8cache` untouched for 30 days, and
 * `cli-*.v8cache.<pid>.tmp` older than a day. Other names stay (the folder may be shared).
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
