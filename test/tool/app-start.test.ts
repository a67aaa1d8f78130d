/** When the app's JVM started (src/classes/app-start.ts): DOCTOR's pid, confirmed by its working directory. */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findAppStart } from '../../src/tool/proc.js';
import { recordedHost } from '../tool/proc-recorded.js';
import { tempDir } from '../support/cli.js';

describe('findAppStart', () => {
  it('a process here running in the agent working directory: its start, within the error bound', async () => {
    const found = await findAppStart(String(process.pid), process.cwd());
    expect(found).toMatchObject({ kind: 'known', pid: process.pid });
    if (found.kind !== 'known') return;
    expect(found.startMs).toBeLessThan(Date.now());
    expect(found.errorMs).toBeGreaterThan(0);
  });

  it('the same folder through a symbolic link is the same folder', async () => {
    const dir = tempDir();
    try {
      fs.symlinkSync(process.cwd(), `${dir}/link`);
      expect((await findAppStart(String(process.pid), `${dir}/link`)).kind).toBe('known');
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

  it.each([
    ['not a number', 'abc', { kind: 'no-pid', pid: 'abc' }],
    ['empty', '', { kind: 'no-pid', pid: '' }],
    ['zero', '0', { kind: 'no-pid', pid: '0' }],
    ['not visible here', '999999999', { kind: 'not-visible', pid: 999999999 }],
  ])('a pid %s: unknown, saying why', async (_what, pid, why) => {
    expect(await findAppStart(pid, process.cwd())).toEqual({ kind: 'unknown', why });
  });

  it('a process here in another folder than the agent names is not the app (a pid of a container or another host)', async () => {
    expect(await findAppStart(String(process.pid), '/srv/app')).toEqual({
      kind: 'unknown',
      why: { kind: 'elsewhere', pid: process.pid, cwd: process.cwd(), workingDirectory: '/srv/app' },
    });
  });

  it('where the platform cannot tell a working directory (Windows), the start stays unknown', async () => {
    const script = "(Get-Process -Id 4242).StartTime.ToUniversalTime().ToString('o')";
    const host = recordedHost({
      platform: 'win32',
      commands: { [`powershell.exe -NoProfile -NonInteractive -Command ${script}`]: '2026-12-01T08:53:05.1234567Z\r\n' },
    });
    expect(await findAppStart('4242', 'C:\\app', host)).toEqual({
      kind: 'unknown',
      why: { kind: 'elsewhere', pid: 4242, cwd: null, workingDirectory: 'C:\\app' },
    });
  });
});
