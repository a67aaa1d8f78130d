/** Temp trees for the watch tests, removed after each test. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterThisTest } from '../support/cleanup.js';

/** A fresh temp folder (real path), removed after the current test. */
export function tempTree(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-watch-')));
  afterThisTest(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `text` to `root/relative`, creating folders; returns the absolute path. */
export function put(root: string, relative: string, text = 'x'): string {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** Makes folders below `root`; returns the absolute path. */
export function mkdirs(root: string, relative: string): string {
  const dir = path.join(root, relative);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
