/**
 * withSmallYoungGeneration, in fresh Node processes: a young generation that would grow under
 * objects that survive its collections stays at the size it had while the work runs, grows again
 * after it, and a code cache taken after it is one the next process accepts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-young-'));
const child = path.join(out, 'child.mjs');
buildSync({
  entryPoints: [fileURLToPath(new URL('./young-generation-child.ts', import.meta.url))],
  outfile: child,
  bundle: true,
  platform: 'node',
  format: 'esm',
  logLevel: 'warning',
});
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

function runChild(...args: string[]): unknown {
  const run = spawnSync(process.execPath, ['--expose-gc', child, ...args], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim() === '' ? undefined : JSON.parse(run.stdout);
}

describe('withSmallYoungGeneration', () => {
  it('keeps the young generation at its size while the work runs, and lets it grow after', () => {
    // The control: without it, V8 grows the young generation several times over for the same objects.
    const grown = runChild('grow') as { before: number; during: number };
    expect(grown.during).toBeGreaterThanOrEqual(4 * grown.before);
    const small = runChild('grow-small') as { before: number; during: number; after: number };
    expect(small.during).toBe(small.before);
    expect(small.after).toBeGreaterThan(small.during);
  });

  it('leaves V8 flags as they were: a code cache taken after it is accepted by the next process', () => {
    const cache = path.join(out, 'script.cache');
    // The control: taken while the flag is changed, V8 rejects the cache (its flags are hashed into it).
    runChild('cache-during', cache);
    expect(runChild('load', cache)).toEqual({ rejected: true });
    runChild('cache-after', cache);
    expect(runChild('load', cache)).toEqual({ rejected: false });
  });

  it('with works running at once, puts the flag back when the last one ends', () => {
    const cache = path.join(out, 'overlap.cache');
    runChild('cache-overlap', cache);
    expect(runChild('load', cache)).toEqual({ rejected: true });
    expect(runChild('load', `${cache}.both`)).toEqual({ rejected: false });
  });
});
