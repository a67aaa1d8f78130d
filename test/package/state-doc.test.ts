/**
 * docs/state.md's table of the files under `.reclazz/` (section "The files") against real runs: every
 * file a build with two agents, and then a restart, leave under the checkout root is a row of the
 * table, and every row is a file those runs made (the run lock while the build runs, the rest after it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { startCli, tempDir, writeClass } from '../support/cli.js';

const STATE_DOC = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/state.md'), 'utf8');

/** The paths in the first cell of each row of the state table, as patterns over `/`-separated relative paths. */
function tableRows(): Array<{ paths: string[]; patterns: RegExp[] }> {
  const start = STATE_DOC.indexOf('<!-- state-layout');
  const end = STATE_DOC.indexOf('<!-- /state-layout -->');
  expect(start, 'docs/state.md has the state layout table').toBeGreaterThanOrEqual(0);
  const rows = STATE_DOC.slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return rows.map((row) => {
    const paths = [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const patterns = paths.map((p) => {
      const escaped = p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return new RegExp(
        `^${escaped.replace('<folder>-<hash>', '[A-Za-z0-9._-]+-[0-9a-f]{12}').replace('<n>', '[0-9]+').replace('<module>', '[^/]+')}$`,
      );
    });
    return { paths, patterns };
  });
}

/** Every file and the lock folder below `dir`, relative to `root`, `/`-separated. */
function listed(root: string, dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() || e.name === 'build.lock')
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .filter((f) => !f.startsWith('.reclazz/build.lock/'));
}

const startAgent = useFakeAgents({ heartbeatMs: 0 });

describe('docs/state.md: the files under .reclazz/', () => {
  it('the state layout table is what a run with two agents, then a restart, leave under the checkout root', async () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, '.git'));
    const classes = path.join(root, 'target', 'classes');
    const module = path.join(root, 'svc-a', 'target', 'classes');
    writeClass(classes, 'com.acme.Root', 'root-v1');
    writeClass(module, 'com.acme.a.Service', 'a-v1');
    // Root's next change needs an app restart: the second run restarts the app (restart.log).
    await startAgent(
      { dir: root, classes },
      { restartRequired: (name) => (name === 'com.acme.Root' ? { from: 'Base', to: 'Other' } : undefined) },
    );
    await startAgent({ dir: path.join(root, 'svc-a'), classes: module });
    const marker = path.join(root, 'build-ran');
    const script = `require('fs').writeFileSync(${JSON.stringify(marker)},'');setTimeout(()=>{},800)`;
    const run = startCli(
      ['--port-file', '.reclazz/agent.port', '--port-file', 'svc-a/.reclazz/agent.port', '--', process.execPath, '-e', script],
      { cwd: root },
    );
    await expect.poll(() => fs.existsSync(marker)).toBe(true);
    const during = [...listed(root, path.join(root, '.reclazz')), ...listed(root, path.join(root, 'svc-a', '.reclazz'))];
    const result = await run;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const rootClass = path.join(classes, 'com', 'acme', 'Root.class');
    const restart = [
      '--restart-command',
      'true',
      '--restart-timeout',
      '200',
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(rootClass)},'root-v2')`,
    ];
    const restarted = await startCli(['--port-file', '.reclazz/agent.port', ...restart], { cwd: root });
    expect(String(restarted.stderr)).toContain('need an app restart');
    // An agent given by its port number, with no record here yet (another app, only ever reached so): its own state folder.
    const moduleB = path.join(root, 'svc-b', 'target', 'classes');
    writeClass(moduleB, 'com.acme.b.Service', 'b-v1');
    const svcB = await startAgent({ dir: path.join(root, 'svc-b'), classes: moduleB });
    const byPort = await startCli(['--port', String(svcB.port), '--', 'true'], { cwd: path.join(root, 'svc-b') });
    expect(byPort.exitCode, String(byPort.stderr)).toBe(0);
    const after = [...listed(root, path.join(root, '.reclazz')), ...listed(root, path.join(root, 'svc-a', '.reclazz'))];

    const rows = tableRows();
    const row = (file: string) => rows.findIndex((r) => r.patterns.some((p) => p.test(file)));
    // Every file is a row of the table...
    expect([...during, ...after].filter((f) => row(f) < 0)).toEqual([]);
    // ...and every path a row names is there, while the build runs (the lock) or after it.
    const seen = [...new Set([...during, ...after])];
    const unseen = rows.flatMap((r) => r.paths.filter((p, i) => !p.startsWith('.idea/') && !seen.some((f) => r.patterns[i]!.test(f))));
    expect(unseen).toEqual([]);
    expect(during).toContain('.reclazz/build.lock');
    expect(after).not.toContain('.reclazz/build.lock');
  });
});
