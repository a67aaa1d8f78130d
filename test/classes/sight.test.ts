/**
 * What the disk shows of a built class file against a new JVM's start (classes/scan.ts
 * `sightSince`, the restart's proof): its bytes, and whether they have been at their path since
 * before that start.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { COARSE_CLOCK_MS, verdictOf } from '../../src/classes/evidence.js';
import type { JvmPaths } from '../../src/classes/placement.js';
import { sightSince as sightFacts } from '../../src/classes/scan.js';
import { tempDir, writeClass } from '../support/cli.js';

const sha = (bytes: string) => createHash('sha256').update(bytes).digest('hex');
/** Until what was just written is older than the file system's coarse clock. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));

/** What the disk shows, read by the evidence rule: `pre-start` when its kind holds, else what the disk said or `unknown`. */
function sightSince(...args: Parameters<typeof sightFacts>): 'pre-start' | 'gone' | 'other-bytes' | 'unknown' {
  const seen = sightFacts(...args);
  if (typeof seen === 'string') return seen;
  return verdictOf({ ctimeMs: seen.ctimeMs, byBuild: false, newInSession: false, sight: seen.sight }).kind === 'live'
    ? 'pre-start'
    : 'unknown';
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** com/acme/A.class with `bytes`, then a JVM start after it settled: the file is older than the start. `loadsAll`: its class path is the class output directory. */
async function builtBeforeStart(
  bytes: string,
): Promise<{ file: string; root: string; start: { startMs: number; errorMs: number }; loadsAll: JvmPaths }> {
  const top = tempDir();
  const root = path.join(top, 'classes');
  const file = writeClass(root, 'com.acme.A', bytes);
  await settle();
  const start = { startMs: Date.now(), errorMs: 0 };
  await settle();
  return { file, root, start, loadsAll: { top, classPath: [{ local: root, real: root }], watched: () => true } };
}

describe('sightSince', () => {
  it("is pre-start for the build's bytes at their path since before the start", async () => {
    const { file, start, loadsAll } = await builtBeforeStart('B');
    expect(sightSince(file, 'com.acme.A', sha('B'), start, loadsAll)).toBe('pre-start');
  });

  it('is other-bytes, gone, or unknown (the file written after the start)', async () => {
    const { file, start, loadsAll } = await builtBeforeStart('B');
    expect(sightSince(file, 'com.acme.A', sha('X'), start, loadsAll)).toBe('other-bytes');
    fs.writeFileSync(file, 'B');
    expect(sightSince(file, 'com.acme.A', sha('B'), start, loadsAll)).toBe('unknown');
    fs.rmSync(file);
    expect(sightSince(file, 'com.acme.A', sha('B'), start, loadsAll)).toBe('gone');
  });

  it("is unknown when the file is rewritten in place between its stat and its read: the old file's times never vouch for new bytes", async () => {
    // At the start the file held X; the build's bytes B land in place (same inode) while it is read.
    const { file, start, loadsAll } = await builtBeforeStart('X');
    const read = fs.readFileSync;
    vi.spyOn(fs, 'readFileSync').mockImplementation(((target: fs.PathOrFileDescriptor, options?: unknown) => {
      if (target === file) fs.writeFileSync(file, 'B');
      return read(target, options as undefined);
    }) as typeof fs.readFileSync);
    expect(sightSince(file, 'com.acme.A', sha('B'), start, loadsAll)).toBe('unknown');
  });

  it('is unknown when the JVM does not load classes from its class output directory (a jar on its class path instead)', async () => {
    const { file, root, start, loadsAll } = await builtBeforeStart('B');
    const jar = path.join(path.dirname(root), 'app.jar');
    fs.writeFileSync(jar, '');
    expect(sightSince(file, 'com.acme.A', sha('B'), start, { ...loadsAll, classPath: [{ local: jar, real: jar }] })).toBe('unknown');
  });
});
