/**
 * The start-up code cache (src/cli/launch.ts), through the real binary: written after a run that
 * did work, reused, never trusted when damaged or writable by others, never a reason to fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { codeCacheDir, isLightRun } from '../../src/cli/launch.js';
import { BIN, cliEnv, runCli, tempDir } from '../support/cli.js';

/** A run that does real work without an agent: `status` in an empty folder (exit 69, "no running agent"). */
async function statusRun(cacheDir: string, extra: Record<string, string> = {}) {
  const run = await runCli(['status'], { cwd: tempDir(), env: { RECLAZZ_CODE_CACHE_DIR: cacheDir, ...extra } });
  expect(run.exitCode, run.stderr).toBe(69);
  expect(run.stderr).toContain('no running agent found');
  return run;
}

/** Runs `bundle` (any CommonJS file) through the built launcher, as bin/reclazz-build.cjs runs dist/cli.cjs. */
async function launchRun(bundle: string, cacheDir: string) {
  const launcher = path.resolve(path.dirname(BIN), '../dist/launch.cjs');
  const code = `require(${JSON.stringify(launcher)}).launch(${JSON.stringify(bundle)}, ['work'])`;
  const run = await execa('node', ['-e', code], { env: cliEnv({ RECLAZZ_CODE_CACHE_DIR: cacheDir }), extendEnv: false, reject: false });
  expect(run.exitCode, run.stderr).toBe(0);
  return run.stdout;
}

/** Sets a file's times back to `stat`'s, below the millisecond (a Date would round). */
const restoreTimes = (file: string, stat: fs.Stats) => fs.utimesSync(file, stat.atimeMs / 1000, stat.mtimeMs / 1000);

const caches = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith('.v8cache')) : []);

describe('the code cache', () => {
  it('is written by a run that did work, private to the user, and then reused as it is', async () => {
    const dir = path.join(tempDir(), 'cache');
    await statusRun(dir);
    expect(caches(dir)).toHaveLength(1);
    const file = path.join(dir, caches(dir)[0]!);
    expect(fs.statSync(dir).mode & 0o077).toBe(0);
    expect(fs.statSync(file).mode & 0o077).toBe(0);
    const before = fs.statSync(file);
    await statusRun(dir);
    expect(fs.statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(caches(dir)).toHaveLength(1);
  });

  it('is not written by --version or --help', async () => {
    const dir = path.join(tempDir(), 'cache');
    for (const args of [['--version'], ['--help'], ['doctor', '--help']]) {
      const run = await runCli(args, { cwd: tempDir(), env: { RECLAZZ_CODE_CACHE_DIR: dir } });
      expect(run.exitCode).toBe(0);
    }
    expect(caches(dir)).toEqual([]);
  });

  it('damaged data is rejected, the run is unaffected, and a good cache replaces it', async () => {
    const dir = path.join(tempDir(), 'cache');
    await statusRun(dir);
    const file = path.join(dir, caches(dir)[0]!);
    fs.writeFileSync(file, Buffer.alloc(4096, 7), { mode: 0o600 });
    await statusRun(dir);
    expect(fs.readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it('one changed byte anywhere in the payload is caught before V8 reads it, and the cache is replaced', async () => {
    // V8 release builds do not checksum the data: such a byte crashed the process (exit 133) or ran wrong bytecode.
    const dir = path.join(tempDir(), 'cache');
    await statusRun(dir);
    const file = path.join(dir, caches(dir)[0]!);
    const good = fs.readFileSync(file);
    for (const at of [Math.floor(good.length / 2), Math.floor(good.length * 0.98), good.length - 1]) {
      const bad = Buffer.from(good);
      bad[at] ^= 0xff;
      fs.writeFileSync(file, bad, { mode: 0o600 });
      await statusRun(dir);
      expect(fs.readFileSync(file).equals(bad), `byte ${at} of ${good.length}`).toBe(false);
    }
  });

  it('a bundle changed in place (same path, length and mtime) does not run the old code', async () => {
    const dir = path.join(tempDir(), 'cache');
    const bundle = path.join(tempDir(), 'cli.cjs');
    fs.writeFileSync(bundle, "process.stdout.write('first');\n");
    expect(await launchRun(bundle, dir)).toBe('first');
    expect(caches(dir)).toHaveLength(1);
    expect(await launchRun(bundle, dir)).toBe('first');
    const stat = fs.statSync(bundle);
    fs.writeFileSync(bundle, "process.stdout.write('other');\n");
    restoreTimes(bundle, stat);
    expect(Math.floor(fs.statSync(bundle).mtimeMs)).toBe(Math.floor(stat.mtimeMs));
    expect(await launchRun(bundle, dir)).toBe('other');
    expect(await launchRun(bundle, dir)).toBe('other');
    expect(caches(dir)).toHaveLength(1);
  });

  it('saving prunes cache files untouched for 30 days and temp files left for a day, nothing else', async () => {
    const dir = path.join(tempDir(), 'cache');
    fs.mkdirSync(dir, { mode: 0o700 });
    const day = 24 * 3600 * 1000;
    const plant = (name: string, ageMs: number) => {
      fs.writeFileSync(path.join(dir, name), 'x', { mode: 0o600 });
      const when = new Date(Date.now() - ageMs);
      fs.utimesSync(path.join(dir, name), when, when);
    };
    plant('cli-0badf00d.v8cache', 31 * day);
    plant('cli-0badf00d-11.3.244.8-node.38-x64-313115-1796061723379.v8cache', 40 * day);
    plant('cli-12345678.v8cache', 29 * day);
    plant('cli-0badf00d.v8cache.4242.tmp', 2 * day);
    plant('cli-12345678.v8cache.4343.tmp', 3600 * 1000);
    plant('notes.txt', 90 * day);
    plant('other.tmp', 90 * day);
    await statusRun(dir);
    const left = fs.readdirSync(dir).sort();
    expect(
      left.filter((n) => n !== 'notes.txt' && n !== 'other.tmp' && !n.startsWith('cli-0badf00d') && !n.startsWith('cli-12345678')),
    ).toHaveLength(1);
    expect(left.filter((n) => n.startsWith('cli-0badf00d'))).toEqual([]);
    expect(left).toEqual(expect.arrayContaining(['cli-12345678.v8cache', 'cli-12345678.v8cache.4343.tmp', 'notes.txt', 'other.tmp']));
  });

  it('creates no folder but its own: not a missing home, not a relative or parentless RECLAZZ_CODE_CACHE_DIR', async () => {
    const root = tempDir();
    const base = { RECLAZZ_CODE_CACHE_DIR: undefined, XDG_CACHE_HOME: undefined };
    const run = async (env: Record<string, string | undefined>) => {
      const cwd = tempDir();
      const result = await runCli(['status'], { cwd, env: { ...base, ...env } });
      expect(result.exitCode, result.stderr).toBe(69);
      return fs.readdirSync(cwd);
    };
    expect(await run({ HOME: path.join(root, 'no-home') })).toEqual([]);
    expect(await run({ HOME: path.join(root, 'no-home'), XDG_CACHE_HOME: path.join(root, 'no-xdg') })).toEqual([]);
    expect(await run({ RECLAZZ_CODE_CACHE_DIR: 'rel' })).toEqual([]);
    expect(await run({ RECLAZZ_CODE_CACHE_DIR: path.join(root, 'no-parent', 'cache') })).toEqual([]);
    expect(fs.readdirSync(root)).toEqual([]);
    // An existing home gets .cache/reclazz-build; an existing XDG_CACHE_HOME gets reclazz-build.
    const home = path.join(root, 'home');
    fs.mkdirSync(home);
    await run({ HOME: home });
    expect(caches(path.join(home, '.cache', 'reclazz-build'))).toHaveLength(1);
    const xdg = path.join(root, 'xdg');
    fs.mkdirSync(xdg);
    await run({ HOME: path.join(root, 'no-home'), XDG_CACHE_HOME: xdg });
    expect(caches(path.join(xdg, 'reclazz-build'))).toHaveLength(1);
    expect(fs.readdirSync(root).sort()).toEqual(['home', 'xdg']);
  });

  it('a folder others can write to is never read from or written to', async () => {
    const dir = path.join(tempDir(), 'cache');
    await statusRun(dir);
    const file = path.join(dir, caches(dir)[0]!);
    fs.writeFileSync(file, 'planted by someone else');
    fs.chmodSync(dir, 0o777);
    await statusRun(dir);
    expect(fs.readFileSync(file, 'utf8')).toBe('planted by someone else');
  });

  it('an unusable folder, or RECLAZZ_CODE_CACHE=0, only means no cache', async () => {
    const blocker = path.join(tempDir(), 'a-file');
    fs.writeFileSync(blocker, '');
    await statusRun(path.join(blocker, 'cache'));
    const off = path.join(tempDir(), 'cache');
    await statusRun(off, { RECLAZZ_CODE_CACHE: '0' });
    expect(caches(off)).toEqual([]);
  });
});

describe('codeCacheDir and isLightRun', () => {
  it('follow RECLAZZ_CODE_CACHE_DIR, XDG_CACHE_HOME, the home folder and LOCALAPPDATA', () => {
    const at = (dir: string) => ({ dir, create: [dir] });
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE_DIR: '/x/c/' }, 'linux', '/home/u')).toEqual(at('/x/c/'));
    expect(codeCacheDir({ XDG_CACHE_HOME: '/xdg' }, 'linux', '/home/u')).toEqual(at('/xdg/reclazz-build'));
    expect(codeCacheDir({}, 'linux', '/home/u')).toEqual({
      dir: '/home/u/.cache/reclazz-build',
      create: ['/home/u/.cache', '/home/u/.cache/reclazz-build'],
    });
    expect(codeCacheDir({}, 'linux', '')).toBeUndefined();
    expect(codeCacheDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32', 'C:\\Users\\u')).toEqual(
      at('C:\\Users\\u\\AppData\\Local\\reclazz-build'),
    );
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE: '0', RECLAZZ_CODE_CACHE_DIR: '/x/c' }, 'linux', '/home/u')).toBeUndefined();
  });

  it('never point at a relative folder: a relative RECLAZZ_CODE_CACHE_DIR turns the cache off, a relative XDG_CACHE_HOME is ignored', () => {
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE_DIR: 'rel' }, 'linux', '/home/u')).toBeUndefined();
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE_DIR: 'C:rel' }, 'win32', 'C:\\Users\\u')).toBeUndefined();
    expect(codeCacheDir({ XDG_CACHE_HOME: 'rel' }, 'linux', '/home/u')?.dir).toBe('/home/u/.cache/reclazz-build');
    expect(codeCacheDir({}, 'linux', 'rel-home')).toBeUndefined();
    expect(codeCacheDir({ LOCALAPPDATA: 'Local' }, 'win32', 'C:\\Users\\u')).toBeUndefined();
  });

  it('tells --version/--help runs from runs that do work, up to --', () => {
    expect(isLightRun(['--version'])).toBe(true);
    expect(isLightRun(['doctor', '-h'])).toBe(true);
    expect(isLightRun(['--', 'mvn', '--version'])).toBe(false);
    expect(isLightRun(['mvn', 'compile'])).toBe(false);
  });
});

describe('--version', () => {
  it('alone is answered before the bundle loads, exactly as commander answers it among other options', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.resolve(path.dirname(BIN), '../package.json'), 'utf8')) as { version: string };
    const dir = path.join(tempDir(), 'cache');
    const env = { RECLAZZ_CODE_CACHE_DIR: dir };
    for (const args of [['--version'], ['-V'], ['--json', '--version'], ['--quiet', '-V']]) {
      const run = await runCli(args, { cwd: tempDir(), env });
      expect([run.exitCode, run.stdout, run.stderr]).toEqual([0, version, '']);
    }
    // Before the bundle: with NODE_DEBUG the module loader names every file it loads.
    const light = await runCli(['--version'], { cwd: tempDir(), env: { ...env, NODE_DEBUG: 'module' } });
    expect(light.stderr).not.toContain('launch.cjs');
    const full = await runCli(['--json', '--version'], { cwd: tempDir(), env: { ...env, NODE_DEBUG: 'module' } });
    expect(full.stderr).toContain('launch.cjs');
  });
});

describe('the code cache folder, as the XDG base directory spec says', () => {
  it('XDG_CACHE_HOME comes first, also when ~/.cache exists', async () => {
    const root = tempDir();
    const home = path.join(root, 'home');
    const xdg = path.join(root, 'xdg');
    fs.mkdirSync(path.join(home, '.cache'), { recursive: true });
    fs.mkdirSync(xdg);
    const run = await runCli(['status'], { cwd: tempDir(), env: { RECLAZZ_CODE_CACHE_DIR: undefined, HOME: home, XDG_CACHE_HOME: xdg } });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(caches(path.join(xdg, 'reclazz-build'))).toHaveLength(1);
    expect(fs.readdirSync(path.join(home, '.cache'))).toEqual([]);
  });
});
