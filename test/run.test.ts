/**
 * runSafeBuild in its caller's process: it reads this machine's processes through the Host it is
 * given, and leaves V8's flags as the caller set them, while it runs too (flags are the whole
 * process's; the command line alone changes them, cli/memory.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { processHost } from '../src/cli/host.js';
import { startFakeAgent, type FakeAgent } from '../src/fake-agent/index.js';
import { runSafeBuild, type RunEvent } from '../src/index.js';
import { localHost, type ProcHost } from '../src/tool/proc.js';
import { appStartsLater } from './support/agents.js';
import { tempDir, writeClass } from './support/cli.js';
import { describeResult } from '../src/report/words.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** A checkout with one class file, and an agent watching its class output directory (the app started after the class was written). */
async function project(): Promise<string> {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, '.git'));
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  await appStartsLater();
  agents.push(await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [classes] }));
  return dir;
}

describe('runSafeBuild in a process of its caller', () => {
  it("reads the app's JVM and the build's processes through the Host it is given", async () => {
    const dir = await project();
    const read: string[] = [];
    const observed: ProcHost = {
      platform: localHost.platform,
      readText: (file) => (read.push(file), localHost.readText(file)),
      readBytes: (file) => (read.push(file), localHost.readBytes(file)),
      readLink: (file) => (read.push(file), localHost.readLink(file)),
      listDir: (folder) => (read.push(folder), localHost.listDir(folder)),
      run: (file, args) => (read.push([file, ...args].join(' ')), localHost.run(file, args)),
      now: () => localHost.now(),
    };
    const events: RunEvent[] = [];
    const result = await runSafeBuild(
      { tool: 'command', args: ['true'], cwd: dir, sharesTerminal: false },
      { onEvent: (event) => events.push(event) },
      { ...processHost(), proc: observed },
    );
    expect(result.exitCode, describeResult(result).message).toBe(0);
    const agent = events.find((event) => event.type === 'agent');
    const jvm = agent?.type === 'agent' ? agent.agent.pid : undefined;
    // The app's start (the evidence rule's cut) and the scan of the build's process group after it.
    expect(read).toContain(`/proc/${jvm}/stat`);
    expect(read).toContain('/proc');
  });

  it('changes no V8 flag while the build runs', async () => {
    const out = tempDir();
    const child = path.join(out, 'child.cjs');
    buildSync({
      entryPoints: [fileURLToPath(new URL('./run-child.ts', import.meta.url))],
      outfile: child,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'warning',
    });
    const dir = await project();
    const cache = path.join(out, 'during-build.cache');

    // Not execFileSync: the agent answers from this process.
    const run = await promisify(execFile)(process.execPath, [child, dir, cache], { encoding: 'utf8' });
    expect(JSON.parse(run.stdout), run.stderr).toMatchObject({ exitCode: 0 });
    // This process has V8's own flags, as the child had before the run.
    const source = 'function add(a, b) { return a + b; } add(1, 2);';
    expect(new vm.Script(source, { cachedData: fs.readFileSync(cache) }).cachedDataRejected).toBe(false);
  });
});
