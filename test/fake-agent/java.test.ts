/**
 * The Java the fake agent's DOCTOR reports: the JDK an app started here would run on (`java
 * -version` of the `java` on PATH), `unknown` without one, or what a test pins.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, doctor, onCleanup, tempDir } from './fixture.js';
import { LineClient } from './line-client.js';
import { waitFor } from '../support/wait.js';

const root = resolve(import.meta.dirname, '../..');

describe("the fake agent's DOCTOR names a real Java, or none", () => {
  it('by default, the version and VM that java -version here prints, the VM marked as the fake agent’s', async () => {
    const said = execFileSync('sh', ['-c', 'java -version 2>&1'], { encoding: 'utf8' });
    const result = await doctor(await clientOf(await agentFor({ watchDirs: [tempDir()] })), 'd');
    const version = String(result.javaVersion);
    expect(version).not.toBe('unknown');
    expect(said).toContain(`version "${version}"`);
    const vm = String(result.vmName);
    expect(vm.endsWith(' (reclazz fake agent)')).toBe(true);
    expect(said).toContain(`${vm.slice(0, -' (reclazz fake agent)'.length)} (build `);
  });

  it('with no java on PATH: unknown, not an invented version', async () => {
    const cwd = tempDir();
    const empty = join(tempDir(), 'bin');
    mkdirSync(empty);
    const child = spawn(process.execPath, [join(root, 'bin/reclazz-fake-agent.js')], {
      cwd,
      env: { ...process.env, PATH: empty },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    onCleanup(() => void child.kill('SIGKILL'));
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    await waitFor(() => stdout.includes('\n'), 'the ready line');
    const client = await LineClient.ready(Number(readFileSync(join(cwd, '.reclazz', 'agent.port'), 'utf8')));
    onCleanup(() => client.close());
    const result = await doctor(client, 'd');
    expect(result.javaVersion).toBe('unknown');
    expect(result.vmName).toBe('unknown (reclazz fake agent)');
  }, 20_000);

  it('a test pins it with the java option', async () => {
    const agent = await agentFor({ watchDirs: [tempDir()], java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' } });
    const result = await doctor(await clientOf(agent), 'd');
    expect(result.javaVersion).toBe('21.0.4');
    expect(result.vmName).toBe('OpenJDK 64-Bit Server VM (reclazz fake agent)');
  });
});
