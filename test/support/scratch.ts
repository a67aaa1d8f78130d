/**
 * Temp folders for black-box tests, removed after each test (cleanup.ts), and the checks that a
 * terminal is safe from what a peer sent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterThisTest } from './cleanup.js';

/** A new empty folder under the system temp folder, removed after the test. */
export function scratchDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-'));
  afterThisTest(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A character that must never reach a terminal raw: C0 controls but TAB and LF (LF ends our own
 * lines), DEL, C1 controls, the bidirectional controls, a lone surrogate half.
 */
const RAW_CONTROL =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first raw control character in `text` with what surrounds it (for a failure message), or undefined. */
export function rawControlIn(text: string): string | undefined {
  const match = RAW_CONTROL.exec(text);
  if (match === null) return undefined;
  return JSON.stringify(text.slice(Math.max(0, match.index - 60), match.index + 20));
}
