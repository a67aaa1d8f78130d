import { existsSync, mkdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { waitFor } from '../support/wait.js';
import { agentFor, clientOf, doctor, isRunning, standInsOf, tempDir } from './fixture.js';
import { LineClient } from './line-client.js';

/** The working directory of process `pid`, read from /proc (Linux). */
function cwdOf(pid: number): string {
  return readlinkSync(`/proc/${pid}/cwd`);
}

describe('stand-in JVM', () => {
  it('is a real process in the app folder the port file implies; DOCTOR reports its pid and cwd', async () => {
    const app = tempDir();
    const agent = await agentFor({ portFile: join(app, '.reclazz', 'agent.port') });
    const jvm = agent.jvm!;
    expect(jvm.pid).not.toBe(process.pid);
    expect(isRunning(jvm.pid)).toBe(true);
    expect(cwdOf(jvm.pid)).toBe(realpathSync(app));
    expect(standInsOf(process.pid)).toHaveLength(1);
    const result = await doctor(await clientOf(agent), 'd1');
    expect(result).toMatchObject({ pid: String(jvm.pid), workingDirectory: realpathSync(app) });
  });

  it('takes the project of an IDE port file, an explicit appDir, or else the current directory', async () => {
    const project = tempDir();
    const ide = await agentFor({ portFile: join(project, '.idea', 'reclazz', 'agent.port') });
    expect(ide.jvm!.cwd).toBe(realpathSync(project));
    const other = join(tempDir(), 'app');
    mkdirSync(other);
    const explicit = await agentFor({ portFile: join(tempDir(), 'agent.port'), appDir: other });
    expect(cwdOf(explicit.jvm!.pid)).toBe(realpathSync(other));
    const plain = await agentFor({ portFile: join(tempDir(), 'ports', 'agent.port') });
    expect(plain.jvm!.cwd).toBe(realpathSync(process.cwd()));
  });

  it('is replaced by a new process on restart()', async () => {
    const agent = await agentFor();
    const first = agent.jvm!.pid;
    await agent.restart();
    const second = agent.jvm!.pid;
    expect(second).not.toBe(first);
    expect(isRunning(first)).toBe(false);
    expect(isRunning(second)).toBe(true);
    expect((await doctor(await clientOf(agent), 'd')).pid).toBe(String(second));
  });

  it('is stopped by stop()', async () => {
    const agent = await startFakeAgent({ heartbeatMs: 0 });
    const pid = agent.jvm!.pid;
    await agent.stop();
    expect(isRunning(pid)).toBe(false);
    expect(standInsOf(process.pid)).toEqual([]);
  });

  it('with shutdownMs, stop() closes the socket and deletes the port file at once, and the stand-in ends only after that time', async () => {
    const portFile = join(tempDir(), '.reclazz', 'agent.port');
    const agent = await startFakeAgent({ heartbeatMs: 0, portFile, shutdownMs: 1500 });
    const pid = agent.jvm!.pid;
    const port = agent.port;
    const stopped = agent.stop();
    await waitFor(() => !existsSync(portFile), 'the port file to go');
    await expect(LineClient.connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // The JVM still runs its own shutdown.
    expect(isRunning(pid)).toBe(true);
    await stopped;
    expect(isRunning(pid)).toBe(false);
  });

  it('reportedPid and reportedWorkingDirectory replace what DOCTOR says (a JVM in a container, a foreign app)', async () => {
    const agent = await agentFor({ reportedPid: '4194999', reportedWorkingDirectory: '/srv/other-app' });
    expect(await doctor(await clientOf(agent), 'd')).toMatchObject({ pid: '4194999', workingDirectory: '/srv/other-app' });
    expect(isRunning(agent.jvm!.pid)).toBe(true);
  });

  it('standInJvm false: no process; DOCTOR reports this process and the app folder', async () => {
    const app = tempDir();
    const agent = await agentFor({ standInJvm: false, appDir: app });
    expect(agent.jvm).toBeUndefined();
    expect(standInsOf(process.pid)).toEqual([]);
    expect(await doctor(await clientOf(agent), 'd')).toMatchObject({ pid: String(process.pid), workingDirectory: app });
  });

  it('refuses an app folder that does not exist, naming it', async () => {
    const missing = join(tempDir(), 'nope');
    await expect(startFakeAgent({ appDir: missing })).rejects.toThrow(`the app folder ${missing} is not a directory`);
  });
});
