/**
 * The one exit-status table (src/outcome/exit.ts) against what users read: the README's
 * exit-status table ("The last line and the exit status") is the table as `npm run docs`
 * writes it, and `--help` shows it.
 * That the real binary exits with the README's status for each reason is
 * test/blackbox/exit-statuses.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT_TABLE, exitStatus, reasonsOf, REASON_EXIT } from '../../src/outcome/exit.js';
import { exitHelp, exitMarkdown } from '../../src/report/shortfall-words.js';
import { runCli, tempDir } from '../support/cli.js';
import { readBlocks } from '../../scripts/docs-blocks.mjs';

const README = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md'), 'utf8');

describe('the exit-status table', () => {
  it('puts every reason in exactly one row', () => {
    const rows = EXIT_TABLE.flatMap((row) => reasonsOf(row));
    expect(rows.sort()).toEqual(Object.keys(REASON_EXIT).sort());
  });

  it("gives the build's own status for build-failed and 128+N for an interrupt", () => {
    expect(exitStatus({ reason: 'build-failed', status: 3 })).toBe(3);
    expect(exitStatus({ reason: 'interrupted', signal: 'SIGTERM', at: 'build' })).toBe(143);
    expect(exitStatus({ reason: 'interrupted', signal: 'SIGINT', at: 'build' })).toBe(130);
  });

  it("is the README's exit-status table (run npm run docs after changing it)", () => {
    const blocks = readBlocks(README).filter((block) => block.id === 'exit-statuses');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.body).toBe(exitMarkdown());
  });

  it.each([
    [[], 'build'],
    [['doctor'], 'agent'],
    [['status'], 'agent'],
    [['events'], 'agent'],
    [['verify'], 'verify'],
  ] as const)('%j --help shows the %s column', async (words, column) => {
    const run = await runCli([...words, '--help'], { cwd: tempDir() });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(exitHelp(column));
  });
});
