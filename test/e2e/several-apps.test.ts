/**
 * Several apps in one checkout, with a real build: fixtures/two-services (a Maven reactor of
 * `shared`, `svc-a` and `svc-b`; both services use `shared`) compiled by the real Maven (offline,
 * Debian's repository), each service's app with its own agent (a fake one, watching its own
 * classes and the shared module's, its port file in the service's `.reclazz/`). One
 * `reclazz-build mvn -q -o compile` from the checkout root holds both agents, builds once, and
 * each agent proves the changed classes it watches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { LineClient } from '../fake-agent/line-client.js';
import { runCli } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { editSource } from '../fixtures/fixture-build.js';

const MVN_ARGS = ['-q', '-o', 'compile'];
const REAL_BUILD_TIMEOUT_MS = 240_000;

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

/** The checkout, compiled (the apps' starting classes), with an agent per service. */
async function prepare(): Promise<{ dir: string; a: FakeAgent; b: FakeAgent }> {
  const dir = await compiledFixture('two-services');
  fs.mkdirSync(path.join(dir, '.git'));
  await appStartsLater();
  const shared = path.join(dir, 'shared', 'target', 'classes');
  const start = async (service: string) => {
    const agent = await startFakeAgent({
      portFile: path.join(dir, service, '.reclazz', 'agent.port'),
      watchDirs: [path.join(dir, service, 'target', 'classes'), shared],
      captureDelayMs: 50,
      reloadMs: 30,
      heartbeatMs: 500,
    });
    agents.push(agent);
    return agent;
  };
  return { dir, a: await start('svc-a'), b: await start('svc-b') };
}

/** The closing report of a run (stderr): from the first agent's section or verdict line to the end, for the record. */
function verdictLines(stderr: string): string[] {
  const lines = stderr.trimEnd().split('\n');
  const first = lines.findIndex((l) => /^reclazz-build: (agent \/\S+:$|✔|✘|•)/.test(l));
  return first < 0 ? lines : lines.slice(first);
}

describe('fixtures/two-services: two services with an agent each, and a shared module', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it('mvn: an edited shared class is proven by both agents, a service class by its own, in one build', async () => {
    const { dir, a, b } = await prepare();
    await editSource(dir, 'shared/src/main/java/com/acme/shared/Money.java', '"EUR"', '"CHF"');
    await editSource(dir, 'svc-a/src/main/java/com/acme/a/OrderService.java', '"orders in "', '"orders, now in "');
    const run = await runCli(['--json', 'mvn', ...MVN_ARGS], { cwd: dir });
    console.log(`reclazz-build --json mvn ${MVN_ARGS.join(' ')} (from the checkout root)\n${verdictLines(run.stderr).join('\n')}`);
    expect(run.exitCode, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    const portFile = (service: string) => path.join(dir, service, '.reclazz', 'agent.port');
    expect(result.agents.map((x: { agentSource: string }) => x.agentSource)).toEqual([portFile('svc-a'), portFile('svc-b')]);
    const applied = (n: number) =>
      result.agents[n].classes
        .filter((c: { status: string }) => c.status === 'applied')
        .map((c: { className: string }) => c.className)
        .sort();
    expect(applied(0)).toEqual(['com.acme.a.OrderService', 'com.acme.shared.Money']);
    expect(applied(1)).toEqual(['com.acme.shared.Money']);
    expect(run.stderr.match(/hold acquired; running/g)).toHaveLength(1);
    for (const agent of [a, b]) expect(agent.hold().kind).toBe('none');
    expect(fs.readdirSync(path.join(dir, 'svc-a', '.reclazz'))).toEqual(['agent.port']);
  });

  it('mvn with a busy second agent: the build never runs, the first hold is given back, exit 69', async () => {
    const { dir, a, b } = await prepare();
    // Another owner (the IDE) holds service B's agent, on a connection of its own.
    const ide = await LineClient.ready(b.port);
    expect(await ide.ask('BUILD started request=ide-1 owner=the-ide', 'BUILD_ACK', 'ide-1')).toContain('owner=the-ide');
    await editSource(dir, 'shared/src/main/java/com/acme/shared/Money.java', '"EUR"', '"CHF"');
    const before = fs.statSync(path.join(dir, 'shared', 'target', 'classes', 'com', 'acme', 'shared', 'Money.class')).mtimeMs;
    const run = await runCli(['--wait', '500', 'mvn', ...MVN_ARGS], { cwd: dir });
    console.log(`reclazz-build --wait 500 mvn ${MVN_ARGS.join(' ')} (svc-b held by the-ide)\n${verdictLines(run.stderr).join('\n')}`);
    expect(run.exitCode, run.stderr).toBe(69);
    expect(fs.statSync(path.join(dir, 'shared', 'target', 'classes', 'com', 'acme', 'shared', 'Money.class')).mtimeMs).toBe(before);
    expect(run.stderr).toContain('released the hold on the agent of');
    await expect.poll(() => a.hold().kind).toBe('none');
    expect(b.hold()).toMatchObject({ kind: 'named', owner: 'the-ide' });
    ide.socket.destroy();
  });
});
