/**
 * keepYoungGenerationSmall, in fresh Node processes: a young generation that would grow under
 * objects that survive its collections stays at the size it had, and a code cache taken at exit
 * is one the next process accepts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-test-young-'));
const child = path.join(out, 'child.cjs');
buildSync({
  entryPoints: [fileURLToPath(new URL('./young-generation-child.ts', import.meta.url))],
  outfile: child,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  logLevel: 'warning',
});
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

function runChild(...args: string[]): unknown {
  const run = spawnSync(process.execPath, ['--expose-gc', child, ...args], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.trim() === '' ? undefined : JSON.parse(run.stdout);
}

describe('keepYoungGenerationSmall', () => {
  it('keeps the young generation at its size while objects kept would grow it', () => {
    // The control: without it, V8 grows the young generation several times over for the same objects.
    const grown = runChild('grow') as { before: number; after: number };
    expect(grown.after).toBeGreaterThanOrEqual(4 * grown.before);
    const small = runChild('grow-small') as { before: number; after: number };
    expect(small.after).toBe(small.before);
  });

  it('puts V8 flags back before earlier exit listeners: a code cache taken at exit is accepted by the next process', () => {
    const cache = path.join(out, 'script.cache');
    // The control: taken while the flag is changed, V8 rejects the cache (its flags are hashed into it).
    runChild('cache-now', cache);
    expect(runChild('load', cache)).toEqual({ rejected: true });
    runChild('cache-at-exit', cache);
    expect(runChild('load', cache)).toEqual({ rejected: false });
  });
});
