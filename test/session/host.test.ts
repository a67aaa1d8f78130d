/**
 * The host a build runs on is a parameter: `SafeBuildOptions.env` is the build's whole
 * environment, and its PATH is where the build tool is looked up (not this process's).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeResult, runSafeBuild } from '../../src/index.js';
import { tempDir } from '../support/cli.js';

describe('the environment given to a build', () => {
  it('finds the tool on its PATH and reaches the build, with RECLAZZ_SAFE_BUILD_ACTIVE=1', async () => {
    const dir = tempDir();
    const bin = path.join(dir, 'tools');
    fs.mkdirSync(bin);
    const tool = path.join(bin, 'only-on-this-path');
    fs.writeFileSync(tool, '#!/bin/sh\nprintf "%s %s" "$RECLAZZ_TEST_MARKER" "$RECLAZZ_SAFE_BUILD_ACTIVE" > built.txt\n', { mode: 0o755 });
    const env = { PATH: `${bin}:/usr/bin:/bin`, RECLAZZ_TEST_MARKER: 'from-options' };
    const result = await runSafeBuild({
      tool: 'command',
      args: ['only-on-this-path'],
      cwd: dir,
      env,
      allowNoAgent: true,
      sharesTerminal: false,
    });
    expect(result, describeResult(result).message).toMatchObject({ reason: 'no-agent-build', exitCode: 0 });
    expect(fs.readFileSync(path.join(dir, 'built.txt'), 'utf8')).toBe('from-options 1');
    expect(process.env.RECLAZZ_TEST_MARKER).toBeUndefined();
  });

  it('a tool that is only on this process PATH is not found with another PATH', async () => {
    const dir = tempDir();
    const result = await runSafeBuild({ tool: 'command', args: ['node', '-e', '0'], cwd: dir, env: { PATH: dir }, allowNoAgent: true });
    expect(result).toMatchObject({ reason: 'command-not-found', exitCode: 127 });
  });
});
