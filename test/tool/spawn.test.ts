/** tool/build.ts: the build gets exactly the environment it is given, and a signal stops its process group through the host. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkExecutable, runBuild, type ProcessControl } from '../../src/tool/build.js';
import { tempDir } from '../support/cli.js';

const control: ProcessControl = { kill: (pid, signal) => process.kill(pid, signal), onExit: () => () => undefined };

describe('running the build command', () => {
  it('passes only the given environment', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'env.txt');
    const command = {
      kind: 'command' as const,
      file: '/bin/sh',
      args: ['-c', `printf '%s|%s' "$ONLY_THIS" "$HOME" > ${out}`],
      wrapper: false,
      cwd: dir,
    };
    const run = await runBuild(command, {
      env: { ONLY_THIS: 'yes' },
      process: control,
      sharesTerminal: true,
      platform: 'linux',
      self: process.pid,
    });
    expect(run.exitCode).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe('yes|');
  });

  it('looks the tool up on the PATH it is given', async () => {
    const command = { kind: 'command' as const, file: 'sh', args: [], wrapper: false, cwd: '/' };
    expect(await checkExecutable(command, 'linux', { PATH: '/bin:/usr/bin' })).toMatchObject({ kind: 'ok' });
    expect(await checkExecutable(command, 'linux', { PATH: tempDir() })).toEqual({ kind: 'missing' });
  });

  it('sends SIGTERM to the build through the host, and reports 128+15', async () => {
    const kills: Array<[number, string]> = [];
    const recording: ProcessControl = {
      kill: (pid, signal) => (kills.push([pid, signal]), process.kill(pid, signal)),
      onExit: () => () => undefined,
    };
    const stop = new AbortController();
    const command = { kind: 'command' as const, file: '/bin/sh', args: ['-c', 'sleep 5'], wrapper: false, cwd: '/' };
    const running = runBuild(command, {
      env: { PATH: '/bin:/usr/bin' },
      process: recording,
      sharesTerminal: false,
      platform: 'linux',
      self: process.pid,
      signal: stop.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop.abort('SIGTERM');
    const run = await running;
    expect(run).toMatchObject({ exitCode: 143, signal: 'SIGTERM', interruptedBy: 'SIGTERM' });
    expect(kills[0]![1]).toBe('SIGTERM');
    expect(kills[0]![0]).toBeLessThan(0); // its own process group
  });
});
