/**
 * Helpers for the state-folder tests: temp folders removed after each test, small tmpfs disks
 * (root only), class indexes of a chosen size, and a child process running the real store code
 * (bundled with esbuild) under limits the test process itself must not have.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { expect } from 'vitest';
import { StateError } from '../../src/state/store.js';
import { afterThisTest } from '../support/cleanup.js';


/** A new empty folder under the system temp folder, removed after the test. */
export function scratch(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-'));
  afterThisTest(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Whether this process may mount file systems (CI runs the tests as root). */
export const isRoot = process.getuid?.() === 0;

/** A tmpfs of `bytes` mounted on a new folder, unmounted and removed after the test. Root only. */
export function smallDisk(bytes: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir]);
  afterThisTest(() => {
    execFileSync('umount', [dir]);
    fs.rmdirSync(dir);
  });
  return dir;
}

/** Remounts the tmpfs at `dir` read-only. */
export function makeReadOnly(dir: string): void {
  execFileSync('mount', ['-o', 'remount,ro', dir]);
}

/** Writes to a new file in `dir` until the file system refuses (ENOSPC), then frees the last `leave` bytes (whole 4 KiB pages on tmpfs). */
export function fillDisk(dir: string, leave = 0): void {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  fs.truncateSync(filler, fs.statSync(filler).size - leave);
}

/** The StateError `run` throws (the test fails when it throws nothing, or something else). */
export function thrownBy(run: () => unknown): StateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(StateError);
    return error as StateError;
  }
  return expect.fail('expected a StateError');
}

/** Names in `dir`, sorted. */
export function names(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

/** Every file and link below `dir`: relative path -> bytes, or `-> target` for a link, or `/` for a folder. */
export function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      const rel = path.relative(dir, full);
      if (entry.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(full)}`;
      else if (entry.isDirectory()) {
        out[rel] = '/';
        walk(full);
      } else out[rel] = fs.readFileSync(full, 'latin1');
    }
  };
  walk(dir);
  return out;
}

/** What the child process reports. */
export interface ChildResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  /** The StateError message, when the write threw one. */
  error?: string;
}

let bundled: string | undefined;

/**
 * Runs test/state/child.ts (the real store code) in a new Node process: `mode` `write` writes a
 * class index of `rows` rows to `projectDir`; `kill-before-rename` does the same but the process
 * kills itself with SIGKILL once the temp file is written, as a crash or power cut would. `shell`
 * runs first in the child's shell (for example `ulimit -f 64`).
 */
export function runChild(mode: 'write' | 'kill-before-rename', projectDir: string, rows: number, shell = ''): ChildResult {
  if (bundled === undefined) {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-child-'));
    // CommonJS: the dependencies of earlier versions' writer (write-file-atomic) use require().
    bundled = path.join(out, 'child.cjs');
    buildSync({
      entryPoints: [fileURLToPath(new URL('./child.ts', import.meta.url))],
      outfile: bundled,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'warning',
    });
  }
  const child = spawnSync('bash', ['-c', `${shell}\nexec node "$@"`, 'bash', bundled, mode, projectDir, String(rows)], { encoding: 'utf8' });
  const line = child.stdout.trim();
  return { status: child.status, signal: child.signal, ...(line === '' ? {} : (JSON.parse(line) as { error?: string })) };
}

/** Removes the child bundle (once, after all tests of a file). */
export function removeChildBundle(): void {
  if (bundled !== undefined) fs.rmSync(path.dirname(bundled), { recursive: true, force: true });
  bundled = undefined;
}
