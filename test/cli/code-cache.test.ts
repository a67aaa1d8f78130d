/**
 * The start-up code cache (src/launch.ts), through the real binary: written after a run that
 * did work, reused, never trusted when damaged or writable by others, never a reason to fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeCacheDir, isLightRun } from '../../src/launch.js';
import { runCli, tempDir } from '../support/cli.js';

/** A run that does real work without an agent: `status` in an empty folder (exit 69, "no running agent"). */
async function statusRun(cacheDir: string, extra: Record<string, string> = {}) {
  const run = await runCli(['status'], { cwd: tempDir(), env: { RECLAZZ_CODE_CACHE_DIR: cacheDir, ...extra } });
  expect(run.exitCode, run.stderr).toBe(69);
  expect(run.stderr).toContain('no running agent found');
  return run;
}

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
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE_DIR: '/x/c' }, 'linux', '/home/u')).toBe('/x/c');
    expect(codeCacheDir({ XDG_CACHE_HOME: '/xdg' }, 'linux', '/home/u')).toBe(path.join('/xdg', 'reclazz-build'));
    expect(codeCacheDir({}, 'linux', '/home/u')).toBe(path.join('/home/u', '.cache', 'reclazz-build'));
    expect(codeCacheDir({}, 'linux', '')).toBeUndefined();
    expect(codeCacheDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, 'win32', 'C:\\Users\\u')).toBe(path.join('C:\\Users\\u\\AppData\\Local', 'reclazz-build'));
    expect(codeCacheDir({ RECLAZZ_CODE_CACHE: '0', RECLAZZ_CODE_CACHE_DIR: '/x/c' }, 'linux', '/home/u')).toBeUndefined();
  });

  it('tells --version/--help runs from runs that do work, up to --', () => {
    expect(isLightRun(['--version'])).toBe(true);
    expect(isLightRun(['doctor', '-h'])).toBe(true);
    expect(isLightRun(['--', 'mvn', '--version'])).toBe(false);
    expect(isLightRun(['mvn', 'compile'])).toBe(false);
  });
});
