/**
 * The process as a host: what must run at exit (each running build's kill of its process group)
 * hangs on one `exit` listener however many builds run at once, as a library user's 32 parallel
 * builds do (test/fuzz), and every one of them still runs when the process exits.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processHost } from '../../src/cli/host.js';

describe('onExit', () => {
  it('adds one exit listener for any number of registrations, and removes it with the last', () => {
    const before = process.listenerCount('exit');
    const host = processHost();
    const offs = Array.from({ length: 20 }, () => processHost().onExit(() => undefined));
    const twice = () => undefined;
    offs.push(host.onExit(twice), host.onExit(twice));
    expect(process.listenerCount('exit')).toBe(before + 1);
    for (const off of offs.splice(1)) off();
    expect(process.listenerCount('exit')).toBe(before + 1);
    offs[0]!();
    expect(process.listenerCount('exit')).toBe(before);
  });

  it('runs every registered listener at exit, and the ones taken back not at all, with no warning', () => {
    const index = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
    const script = `
      const { processHost } = await import(${JSON.stringify(index)});
      const host = processHost();
      for (let i = 0; i < 12; i++) host.onExit(() => process.stdout.write(i + ' '));
      host.onExit(() => process.stdout.write('taken back'))();`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout.trim().split(' ')).toEqual(Array.from({ length: 12 }, (_, i) => String(i)));
    expect(run.stderr).toBe('');
  });
});
