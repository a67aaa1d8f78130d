/**
 * Watch mode with several agents in one checkout (two services, each with its agent, and a
 * shared module both watch): every cycle holds both agents on their one connection each, builds
 * once, and each agent proves the shared class.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { expect, it } from 'vitest';
import { sha256Hex } from '../../src/fake-agent/index.js';
import { useFakeAgents } from '../support/agents.js';
import { startCli, tempDir, writeClass } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

it('every cycle holds both agents, builds once, and each agent proves the shared class', async () => {
  const root = tempDir();
  const shared = path.join(root, 'shared', 'target', 'classes');
  const money = writeClass(shared, 'com.acme.shared.Money', 'money-v1');
  for (const svc of ['a', 'b']) writeClass(path.join(root, `svc-${svc}`, 'target', 'classes'), `com.acme.${svc}.Service`, `${svc}-v1`);
  const source = path.join(root, 'shared', 'src', 'main', 'java', 'com', 'acme', 'shared', 'Money.java');
  fs.mkdirSync(path.dirname(source), { recursive: true });
  fs.writeFileSync(source, 'money-v1');
  fs.writeFileSync(path.join(root, 'shared', 'pom.xml'), '<project/>');
  const agents = [];
  for (const svc of ['a', 'b']) {
    const classes = path.join(root, `svc-${svc}`, 'target', 'classes');
    agents.push(await startAgent({ dir: path.join(root, `svc-${svc}`), classes }, { watchDirs: [classes, shared] }));
  }
  const cli = startCli(['watch', '--json', '--debounce', '100', '--', 'cp', source, money], { cwd: root, timeoutMs: 120_000 });
  const json: Record<string, unknown>[] = [];
  readline.createInterface({ input: cli.stdout! }).on('line', (line) => json.push(JSON.parse(line) as Record<string, unknown>));
  const cycles = () => json.filter((j) => j.type === 'cycle') as { line: string; result: { reason: string; exitCode: number } }[];
  try {
    await waitFor(() => json.some((j) => j.type === 'news' && j.news === 'watching'), 'the watch to start');
    for (const n of [2, 3]) {
      fs.writeFileSync(source, `money-v${n}`);
      await waitFor(() => cycles().length === n - 1, `cycle ${n - 1}`);
    }
  } finally {
    cli.kill('SIGINT');
    await cli;
  }
  expect(cycles().map((c) => [c.result.reason, c.result.exitCode])).toEqual([
    ['ok', 0],
    ['ok', 0],
  ]);
  for (const agent of agents) {
    expect(new Set(agent.received.map((r) => r.client)).size).toBe(1);
    expect(agent.received.filter((r) => r.line.startsWith('BUILD ')).map((r) => r.line.split(' ')[1])).toEqual([
      'started',
      'ok',
      'started',
      'ok',
    ]);
    for (const bytes of ['money-v2', 'money-v3'])
      expect(
        agent.received.some(
          (r) => r.line.startsWith('VERIFY ') && r.line.endsWith(` com.acme.shared.Money ${sha256Hex(Buffer.from(bytes))}`),
        ),
      ).toBe(true);
  }
});
