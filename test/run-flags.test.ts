/**
 * The library leaves V8's flags as its caller set them, while it runs too: flags are the whole
 * process's, and the command line alone changes them (cli/memory.ts). Seen through a code cache
 * taken in the middle of a run, which V8 rejects in a process with other flags.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../src/fake-agent/index.js';
import { appStartsLater } from './support/agents.js';
import { tempDir, writeClass } from './support/cli.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

describe('runSafeBuild in a process of its caller', () => {
  it('changes no V8 flag while the build runs', async () => {
    const out = tempDir();
    const child = path.join(out, 'child.cjs');
    buildSync({
      entryPoints: [fileURLToPath(new URL('./run-flags-child.ts', import.meta.url))],
      outfile: child,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      logLevel: 'warning',
    });
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, '.git'));
    const classes = path.join(dir, 'target', 'classes');
    writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
    await appStartsLater();
    agents.push(await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [classes] }));
    const cache = path.join(out, 'during-build.cache');

    // Not spawnSync: the agent answers from this process.
    const run = await promisify(execFile)(process.execPath, [child, dir, cache], { encoding: 'utf8' });
    expect(JSON.parse(run.stdout), run.stderr).toMatchObject({ exitCode: 0 });
    // This process has V8's own flags, as the child had before the run.
    const source = 'function add(a, b) { return a + b; } add(1, 2);';
    expect(new vm.Script(source, { cachedData: fs.readFileSync(cache) }).cachedDataRejected).toBe(false);
  });
});
