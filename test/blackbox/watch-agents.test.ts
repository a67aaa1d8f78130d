/**
 * Watch mode with several agents in one checkout (two services, each with its agent, and a
 * shared module both watch): every cycle holds both agents on their one connection each, builds
 * once, and each agent proves the shared class; one agent going away during a build is told as
 * that agent's, when it happens, and the other finishes its part.
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

/** The checkout: svc-a and svc-b, each with its agent watching its classes and shared's, and shared's source. */
async function checkout() {
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
  return { root, money, source, agents, portFiles: ['a', 'b'].map((svc) => path.join(root, `svc-${svc}`, '.reclazz', 'agent.port')) };
}

/** `reclazz-build watch --json` of `build` in `root`, its JSON lines collected. */
function watch(root: string, build: string[]) {
  const cli = startCli(['watch', '--json', '--debounce', '100', '--', ...build], { cwd: root, timeoutMs: 120_000 });
  const json: Record<string, unknown>[] = [];
  readline.createInterface({ input: cli.stdout! }).on('line', (line) => json.push(JSON.parse(line) as Record<string, unknown>));
  const cycles = () => json.filter((j) => j.type === 'cycle') as unknown as Cycle[];
  return { cli, json, cycles };
}

interface Cycle {
  line: string;
  result: { reason: string; exitCode: number; message: string; agents?: { agentSource: string; reason: string; exitCode: number }[] };
}

it('every cycle holds both agents, builds once, and each agent proves the shared class', async () => {
  const { root, money, source, agents } = await checkout();
  const { cli, json, cycles } = watch(root, ['cp', source, money]);
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

it('one of the two agents going away during a build: the cycle names that one, and the other proves its classes and is released', async () => {
  const { root, money, source, agents, portFiles } = await checkout();
  const started = path.join(root, 'build-started');
  const go = path.join(root, 'build-go');
  const script = `touch ${started}; while [ ! -f ${go} ]; do sleep 0.02; done; cp ${source} ${money}`;
  const { cli, json, cycles } = watch(root, ['sh', '-c', script]);
  try {
    await waitFor(() => json.some((j) => j.type === 'news' && j.news === 'watching'), 'the watch to start');
    fs.writeFileSync(source, 'money-v2');
    await waitFor(() => fs.existsSync(started), 'the build to start');
    await agents[1]!.stop();
    fs.writeFileSync(go, '');
    await waitFor(() => cycles().length === 1, 'the cycle to end');
    await waitFor(() => json.some((j) => j.type === 'news' && j.news === 'agent-lost'), 'the news of the lost agent');
  } finally {
    cli.kill('SIGINT');
    await cli;
  }
  const [cycle] = cycles();
  const lines = json.map((j) => JSON.stringify(j)).join('\n');
  expect(
    cycle!.result.agents!.map((a) => [a.agentSource, a.reason, a.exitCode]),
    lines,
  ).toEqual([
    [portFiles[0], 'ok', 0],
    [portFiles[1], 'not-safe', 70],
  ]);
  // The connection is seen closed during the build, or when BUILD ok is sent: either way it is svc-b's part.
  const own = cycle!.result.message.split(`the agent of ${portFiles[1]}: `)[1];
  expect(own, cycle!.result.message).toMatch(/closed the connection during the build|the connection closed/);
  expect(cycle!.result.message).not.toContain(portFiles[0]);
  expect(cycle!.line).toContain(portFiles[1]);
  // The agent that stayed got its ok and proved the class; its hold is not left behind.
  expect(agents[0]!.received.filter((r) => r.line.startsWith('BUILD ')).map((r) => r.line.split(' ')[1])).toEqual(['started', 'ok']);
  expect(
    agents[0]!.received.some(
      (r) => r.line.startsWith('VERIFY ') && r.line.endsWith(` com.acme.shared.Money ${sha256Hex(Buffer.from('money-v2'))}`),
    ),
  ).toBe(true);
  expect(agents[0]!.hold().kind).toBe('none');
  // The news comes as it happened, during the build, before the cycle's end; it names the agent that went away.
  const news = json.filter((j) => j.type === 'news' || j.type === 'cycle').map((j) => (j.type === 'cycle' ? 'cycle' : j.news));
  expect(news.slice(0, 3), lines).toEqual(['watching', 'agent-lost', 'cycle']);
  expect(json.find((j) => j.news === 'agent-lost')!.line).toContain(`agent lost (${portFiles[1]})`);
});
