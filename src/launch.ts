/**
 * Start-up of the `reclazz-build` command (`bin/reclazz-build.cjs`): runs the CLI bundle
 * (`dist/cli.cjs`) with V8's code cache, kept in the user's cache folder.
 *
 * Why: a run is ~60 ms of Node itself plus compiling and starting ~300 KB of JavaScript. V8
 * compiles most functions only when first called, so a cache taken right after compiling
 * (what Node 20's loaders and require hooks can do) misses them; this one is taken when the
 * process exits, after a whole run, and makes the next run skip compiling nearly everything
 * it calls (about 20 ms of a 125 ms run here; see the README's performance section).
 *
 * The cache is code V8 will run, so it is only read from a folder only this user can write
 * to, and V8 itself refuses data from another V8 version, other flags or another source.
 * Anything unexpected (no cache folder, unreadable or rejected data, a failed write) just
 * means compiling as usual. `RECLAZZ_CODE_CACHE_DIR` names the folder; `RECLAZZ_CODE_CACHE=0`
 * turns the cache off.
 */
import fs from 'node:fs';
import { createRequire, wrap } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

/**
 * The folder for the code cache: `RECLAZZ_CODE_CACHE_DIR`, else `reclazz-build` in
 * `XDG_CACHE_HOME`, `~/.cache` (`%LOCALAPPDATA%` on Windows); undefined when the cache is off
 * (`RECLAZZ_CODE_CACHE=0`) or there is no such folder to use.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string | undefined {
  if (env.RECLAZZ_CODE_CACHE === '0') return undefined;
  if (env.RECLAZZ_CODE_CACHE_DIR) return path.resolve(env.RECLAZZ_CODE_CACHE_DIR);
  const base = platform === 'win32' ? env.LOCALAPPDATA : env.XDG_CACHE_HOME || (home === '' ? undefined : path.join(home, '.cache'));
  return base === undefined || base === '' ? undefined : path.join(base, 'reclazz-build');
}

/**
 * Runs the CommonJS bundle `file` as the program, compiled with the code cache when there is
 * a usable one; when there is none (or V8 rejected it) and the run does real work, saves a new
 * one as the process exits, replacing older ones. Never throws for the cache.
 * @param words the command line after the program name: `--version`/`--help` runs (which
 *   call little of the CLI) never write the cache.
 */
export function launch(file: string, words: readonly string[]): void {
  const source = fs.readFileSync(file, 'utf8');
  const dir = codeCacheDir(process.env, process.platform, os.homedir());
  const cacheFile = dir === undefined ? undefined : path.join(dir, cacheName(file));
  const cachedData = cacheFile === undefined ? undefined : readOwn(cacheFile);
  const script = new vm.Script(wrap(source), { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  if (dir !== undefined && cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected === true) && !isLightRun(words)) {
    process.once('exit', () => save(dir, cacheFile, script));
  }
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, path.dirname(file));
}

/** Whether the command line only asks for `--version` or `--help` (before any `--`). */
export function isLightRun(words: readonly string[]): boolean {
  const own = words.includes('--') ? words.slice(0, words.indexOf('--')) : words;
  return own.some((w) => w === '-V' || w === '--version' || w === '-h' || w === '--help');
}

/**
 * `cli-<bundle path hash>-<V8 version>-<arch>-<bundle size>-<bundle mtime>.v8cache`: one per
 * installed copy of the CLI (two installs never evict each other), renewed when it is rebuilt.
 */
function cacheName(file: string): string {
  const stat = fs.statSync(file);
  return `${cachePrefix(file)}${process.versions.v8}-${process.arch}-${stat.size}-${Math.floor(stat.mtimeMs)}.v8cache`;
}

/** `cli-` and an FNV-1a hash of the bundle's path. */
function cachePrefix(file: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < file.length; i += 1) hash = Math.imul(hash ^ file.charCodeAt(i), 0x01000193);
  return `cli-${(hash >>> 0).toString(16).padStart(8, '0')}-`;
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
 * one) and removes this installation's older ones. Plain fs calls, not write-file-atomic: this runs at every
 * start-up and must not load more code.
 */
function save(dir: string, cacheFile: string, script: vm.Script): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!privateToUs(dir)) return;
    const temp = `${cacheFile}.${process.pid}.tmp`;
    const prefix = path.basename(cacheFile).slice(0, cachePrefix('').length);
    fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(temp, cacheFile);
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(prefix) && name.endsWith('.v8cache') && name !== path.basename(cacheFile)) fs.rmSync(path.join(dir, name), { force: true });
    }
  } catch {
    // The cache is only a speed-up.
  }
}
