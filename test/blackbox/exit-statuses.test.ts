/**
 * The README's exit-status table against the real binary: for every reason a run can end
 * with here, a run that ends with it (its `--json` result line says so) exits with the status
 * the README's row for that reason gives (N: the build's own; 130 / 143: SIGINT / SIGTERM).
 * The table is read from the README itself, not from src/outcome/exit.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { formatEvent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { LineClient } from '../fake-agent/line-client.js';
import { jsonResult, runCli, startCli, type CliRun } from '../support/cli.js';
import { agentFor, buildCommand, project, type Project } from '../support/project.js';
import { startProxy } from '../support/proxy.js';
import { waitFor } from '../support/wait.js';
import { readBlocks } from '../../scripts/docs-blocks.mjs';

const README = fs.readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** The README's table: per reason, its status column (`0`, `N`, `130 / 143`, ...). */
function readmeStatuses(): Map<string, string> {
  const [block] = readBlocks(README).filter((b) => b.id === 'exit-statuses');
  const statuses = new Map<string, string>();
  for (const row of block!.body.split('\n').filter((line) => /^\| [^-s]/.test(line))) {
    const cells = row.split(' | ');
    for (const [, reason] of cells.at(-1)!.matchAll(/`([a-z-]+)`/g)) statuses.set(reason!, cells[0]!.slice(2));
  }
  return statuses;
}

/** The status the README gives `reason`, for a build that exited `buildStatus` or a run ended by `signal`. */
function documented(reason: string, facts: { buildStatus?: number; signal?: 'SIGINT' | 'SIGTERM' }): number {
  const status = readmeStatuses().get(reason);
  if (status === undefined) throw new Error(`the README's exit-status table has no row for ${reason}`);
  if (status === 'N') return facts.buildStatus!;
  if (status === '130 / 143') return facts.signal === 'SIGTERM' ? 143 : 130;
  return Number(status);
}

const agents: FakeAgent[] = [];
const others: Array<{ stop: () => void }> = [];
afterEach(async () => {
  for (const other of others.splice(0)) other.stop();
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

const withAgent = (p: Project, options: FakeAgentOptions = {}) => agentFor(p, agents, { portFile: p.portFile, ...options });
const run = (p: Project, args: string[], env?: Record<string, string>) => runCli(['--json', ...args], { cwd: p.dir, env });
const writesGreeter = (p: Project) => buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } });

/** A run of the CLI held mid-build until the test writes `go` (or it is killed). */
async function midBuild(p: Project, args: string[]) {
  const cli = startCli(['--json', ...args, ...buildCommand(p, { until: path.join(p.dir, 'go') })], { cwd: p.dir });
  others.push({ stop: () => cli.kill('SIGKILL') });
  await waitFor(() => fs.existsSync(p.marker) || cli.exitCode !== null, 'the build to start');
  return { cli, go: () => fs.writeFileSync(path.join(p.dir, 'go'), '') };
}

const ended = async (cli: ReturnType<typeof startCli>): Promise<CliRun> => {
  const result = await cli;
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
};

interface Case {
  /** The reason the run ends with, and how it gets there. */
  reason: string;
  how: string;
  run: () => Promise<CliRun>;
  /** What else decides the status (the build's own, the signal). */
  facts?: { buildStatus?: number; signal?: 'SIGINT' | 'SIGTERM' };
  /** `events --json` writes the agent's lines, no result line: the reason is read from stderr instead. */
  stderrSays?: RegExp;
}

const cases: Case[] = [
  {
    reason: 'ok',
    how: 'a build whose change is proven live',
    run: async () => {
      const p = project();
      await withAgent(p);
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'ok',
    how: 'status',
    run: async () => {
      const p = project();
      await withAgent(p);
      return run(p, ['status']);
    },
  },
  {
    reason: 'no-agent-build',
    how: '--allow-no-agent and no agent',
    run: async () => {
      const p = project();
      return run(p, ['--allow-no-agent', ...writesGreeter(p)]);
    },
  },
  {
    reason: 'stream-ended',
    how: 'events, and the agent stops',
    stderrSays: /the agent on port \d+ closed the stream after \d+ event\(s\)/,
    run: async () => {
      const p = project();
      const agent = await withAgent(p);
      const cli = startCli(['events'], { cwd: p.dir });
      others.push({ stop: () => cli.kill('SIGKILL') });
      await waitFor(() => agent.clientCount() > 0, 'the follower to connect');
      await agent.stop();
      return ended(cli);
    },
  },
  {
    reason: 'build-failed',
    how: 'a build that exits 3',
    facts: { buildStatus: 3 },
    run: async () => {
      const p = project();
      await withAgent(p);
      return run(p, buildCommand(p, { exit: 3 }));
    },
  },
  { reason: 'usage', how: 'an option without its value', run: () => run(project(), ['--verify-timeout', 'soon', '--', 'true']) },
  {
    reason: 'nested',
    how: 'inside another safe build',
    run: async () => {
      const p = project();
      return run(p, writesGreeter(p), { RECLAZZ_SAFE_BUILD_ACTIVE: '1' });
    },
  },
  {
    reason: 'no-agent',
    how: 'no port file anywhere',
    run: async () => {
      const p = project();
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'bad-port-file',
    how: 'a port file that is not a number',
    run: async () => {
      const p = project();
      fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
      fs.writeFileSync(p.portFile, 'abc');
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'stale-port',
    how: 'a port file naming a port nothing listens on',
    run: async () => {
      const p = project();
      const agent = await withAgent(p);
      await agent.stop();
      fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
      fs.writeFileSync(p.portFile, String(agent.port));
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'handshake',
    how: 'a peer that never sends CONNECTED',
    run: async () => {
      const p = project();
      await withAgent(p, { standInJvm: false, hostile: { silentConnect: true } });
      return run(p, ['--timeout', '300', ...writesGreeter(p)]);
    },
  },
  {
    reason: 'ambiguous-agent',
    how: 'status, and two port files below',
    run: async () => {
      const p = project();
      for (const app of ['a', 'b']) {
        fs.mkdirSync(path.join(p.dir, app, '.reclazz'), { recursive: true });
        fs.writeFileSync(path.join(p.dir, app, '.reclazz', 'agent.port'), '4711');
      }
      return run(p, ['status']);
    },
  },
  {
    reason: 'agent-disconnected',
    how: 'the agent closes the connection on DOCTOR',
    run: async () => {
      const p = project();
      await withAgent(p, { intercept: (cmd) => (cmd.verb === 'DOCTOR' ? { kind: 'close' } : undefined) });
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'unsupported',
    how: 'verify, and DOCTOR says VERIFY is not supported',
    run: async () => {
      const p = project();
      const agent = await withAgent(p);
      const proxy = await startProxy(agent.port, {
        fromAgent: (line) => (line.includes('DOCTOR_RESULT') ? [line.replace(/(verifySupported\\?":)true/, '$1false')] : undefined),
      });
      others.push({ stop: () => void proxy.stop() });
      return run(p, ['verify', '--port', String(proxy.port), p.classes]);
    },
  },
  {
    reason: 'old-agent',
    how: 'an agent from before build ownership',
    run: async () => {
      const p = project();
      await withAgent(p, { agentVersion: null });
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'agent-not-ready',
    how: 'doctor, and DOCTOR gets no answer',
    run: async () => {
      const p = project();
      await withAgent(p, { notReady: true });
      return run(p, ['doctor', '--timeout', '300']);
    },
  },
  {
    reason: 'hold-busy',
    how: 'another owner holds the agent, --wait 0',
    run: async () => {
      const p = project();
      const agent = await withAgent(p);
      const ide = await LineClient.ready(agent.port);
      others.push({ stop: () => ide.close() });
      await ide.ask('BUILD started request=ide-1 owner=the-ide', 'BUILD_ACK', 'ide-1');
      return run(p, ['--wait', '0', ...writesGreeter(p)]);
    },
  },
  {
    reason: 'lock-busy',
    how: 'another run holds the project lock, --wait 0',
    run: async () => {
      const p = project();
      await withAgent(p);
      await midBuild(p, []);
      return run(p, ['--wait', '0', '--', 'true']);
    },
  },
  {
    reason: 'no-receipt',
    how: 'pause, and no RELOAD_STATE comes',
    run: async () => {
      const p = project();
      await withAgent(p, { intercept: (cmd) => (cmd.verb === 'RELOAD' ? { kind: 'drop' } : undefined) });
      return run(p, ['pause', '--timeout', '300']);
    },
  },
  {
    reason: 'unexpected-receipt',
    how: 'pause, and the receipt says not paused',
    run: async () => {
      const p = project();
      const notPaused = (token: string) => `RELOAD_STATE ${token} pause paused=false pendingClasses=0 pendingActions=0 buildHold=none`;
      await withAgent(p, {
        intercept: (cmd) => {
          const token = /request=(\S+)/.exec(cmd.line)?.[1];
          return cmd.verb === 'RELOAD' && token ? { kind: 'reply', lines: [formatEvent('INFO', notPaused(token))] } : undefined;
        },
      });
      return run(p, ['pause']);
    },
  },
  {
    reason: 'state-error',
    how: '.reclazz is a file, so no state can be written there',
    run: async () => {
      const p = project();
      const agent = await withAgent(p, { portFile: path.join(p.dir, 'elsewhere', 'agent.port') });
      fs.writeFileSync(path.join(p.dir, '.reclazz'), 'not a folder');
      return run(p, ['--port', String(agent.port), ...writesGreeter(p)]);
    },
  },
  {
    reason: 'not-safe',
    how: 'the agent goes away during the build',
    run: async () => {
      const p = project();
      const agent = await withAgent(p);
      const { cli, go } = await midBuild(p, []);
      await agent.stop();
      go();
      return ended(cli);
    },
  },
  {
    reason: 'verify-incomplete',
    how: 'the agent needs a restart for the changed class (its superclass changed)',
    run: async () => {
      const p = project();
      await withAgent(p, { restartRequired: () => ({ from: 'com.acme.Base', to: 'com.acme.Other' }) });
      return run(p, writesGreeter(p));
    },
  },
  {
    reason: 'doctor-findings',
    how: 'doctor, and a class output directory here the agent does not watch',
    run: async () => {
      const p = project();
      await withAgent(p);
      fs.mkdirSync(path.join(p.dir, 'build', 'classes', 'java', 'main', 'com'), { recursive: true });
      fs.writeFileSync(path.join(p.dir, 'build', 'classes', 'java', 'main', 'com', 'Other.class'), 'x');
      return run(p, ['doctor']);
    },
  },
  {
    reason: 'command-not-found',
    how: 'a build command that is nowhere',
    run: async () => {
      const p = project();
      await withAgent(p);
      return run(p, ['--', 'reclazz-test-no-such-command']);
    },
  },
  {
    reason: 'command-not-executable',
    how: 'a build script without its x bit',
    run: async () => {
      const p = project();
      await withAgent(p);
      fs.writeFileSync(path.join(p.dir, 'build.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
      return run(p, ['--', './build.sh']);
    },
  },
  ...(['SIGINT', 'SIGTERM'] as const).map((signal): Case => ({
    reason: 'interrupted',
    how: `${signal} during the build`,
    facts: { signal },
    run: async () => {
      const p = project();
      await withAgent(p);
      const { cli } = await midBuild(p, []);
      cli.kill(signal);
      return ended(cli);
    },
  })),
];

describe("the README's exit statuses, as the real binary exits", () => {
  it('the cases cover every reason of the table but internal-error (a bug)', () => {
    const missing = [...readmeStatuses().keys()].filter((reason) => !cases.some((c) => c.reason === reason));
    expect(missing).toEqual(['internal-error']);
  });

  it.each(cases.map((c) => [c.reason, c.how, c] as const))('%s (%s): the status of its README row', async (reason, _how, c) => {
    const result = await c.run();
    if (c.stderrSays === undefined) {
      const last = jsonResult(result);
      expect(last.reason, result.stderr).toBe(reason);
      expect(last.exitCode).toBe(result.exitCode);
    } else {
      expect(result.stderr).toMatch(c.stderrSays);
    }
    expect(result.exitCode, result.stderr).toBe(documented(reason, c.facts ?? {}));
  });
});
