/**
 * A build run keeps V8's young generation small (cli/memory.ts) by changing a V8
 * flag, and V8 hashes its flags into a code cache: the cache such a run takes at exit must still
 * be one the next run accepts, or every run compiles the bundle again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

describe('the code cache of a build run', () => {
  it('is taken by the first build run and reused as it is by the next', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
    await appStartsLater();
    agents.push(
      await startFakeAgent({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [classes], captureDelayMs: 20, reloadMs: 20 }),
    );
    const cacheDir = path.join(tempDir(), 'cache');
    const rewrite = (bytes: string) => [
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(path.join(classes, 'com', 'acme', 'Greeter.class'))}, '${bytes}')`,
    ];

    const first = await runCli(rewrite('greeter-v2'), { cwd: dir, env: { RECLAZZ_CODE_CACHE_DIR: cacheDir } });
    expect(first.exitCode, first.stderr).toBe(0);
    const [cache] = fs.readdirSync(cacheDir).filter((name) => name.endsWith('.v8cache'));
    expect(cache).toBeDefined();
    const taken = fs.statSync(path.join(cacheDir, cache!)).mtimeMs;

    // A cache V8 rejects is replaced at exit: one left as it was was accepted.
    const second = await runCli(rewrite('greeter-v3'), { cwd: dir, env: { RECLAZZ_CODE_CACHE_DIR: cacheDir } });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(fs.statSync(path.join(cacheDir, cache!)).mtimeMs).toBe(taken);
  });
});
