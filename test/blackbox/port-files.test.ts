/**
 * Every way the agent can be hard to reach, through the real binary: the port file missing,
 * empty, not a number, 0 or above 65535, a directory, stale (connection refused); a sixth
 * client closed before CONNECTED; an agent still starting (no replies). Each ends 69 with the
 * build not run, nothing sent, and a distinct message naming the path or port and the next step.
 * (Unreadable files: tests run as root, so that case is in test/agent/discover.test.ts.)
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { runCli } from '../support/cli.js';
import { buildCommand, buildRan, hasStackTrace, project, type Project } from '../support/project.js';

interface Case {
  name: string;
  /** Prepares the project; returns extra CLI arguments and what to clean up. */
  setup: (p: Project) => Promise<{ args?: string[]; cleanup?: () => unknown; sent?: () => string[] }>;
  /** The message: must name the path or port. */
  says: (p: Project) => RegExp;
  /** The next step. */
  next: RegExp;
}

function writePortFile(p: Project, content: string, file = p.portFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const CASES: Case[] = [
  {
    name: 'missing (--port-file names no file)',
    setup: async () => ({ args: ['--port-file', 'app/.reclazz/agent.port'] }),
    says: (p) => new RegExp(`port file ${esc(path.join(p.dir, 'app/.reclazz/agent.port'))} does not exist`),
    next: /next: start the app with the agent, check the path, or pass --port <n>/,
  },
  {
    name: 'empty',
    setup: async (p) => (writePortFile(p, ''), {}),
    says: (p) => new RegExp(`port file ${esc(p.portFile)} is empty`),
    next: /delete it and restart the app, or pass --port <n>/,
  },
  {
    name: 'not a number',
    setup: async (p) => (writePortFile(p, 'localhost:8080'), {}),
    says: (p) => new RegExp(`port file ${esc(p.portFile)} does not hold a port number \\("localhost:8080"\\)`),
    next: /delete it and restart the app, or pass --port <n>/,
  },
  {
    name: 'port 0',
    setup: async (p) => (writePortFile(p, '0'), {}),
    says: (p) => new RegExp(`port file ${esc(p.portFile)} holds 0, outside 1-65535`),
    next: /delete it and restart the app/,
  },
  {
    name: 'port above 65535',
    setup: async (p) => (writePortFile(p, '65536\n'), {}),
    says: (p) => new RegExp(`port file ${esc(p.portFile)} holds 65536, outside 1-65535`),
    next: /delete it and restart the app/,
  },
  {
    name: 'a directory where the port file should be',
    setup: async (p) => (fs.mkdirSync(p.portFile, { recursive: true }), {}),
    says: (p) => new RegExp(`port file ${esc(p.portFile)} is a directory, not a file`),
    next: /pass the agent\.port file itself with --port-file <path>, or remove the directory/,
  },
  {
    name: 'stale (nothing listens on the port: connection refused)',
    setup: async (p) => {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      writePortFile(p, String(port));
      return {};
    },
    says: (p) => new RegExp(`nothing is listening on port \\d+ from ${esc(p.portFile)}: the agent is not running`),
    next: /the port file is stale \(left by a killed app\): start the app with the agent, or delete/,
  },
  {
    name: 'a sixth client (five already connected): closed before CONNECTED',
    setup: async (p) => {
      const agent = await startFakeAgent({ heartbeatMs: 0 });
      const sockets = Array.from({ length: 5 }, () =>
        net.createConnection({ host: '127.0.0.1', port: agent.port }).on('error', () => undefined),
      );
      while (agent.clientCount() < 5) await new Promise((r) => setTimeout(r, 10));
      writePortFile(p, String(agent.port));
      // Tried again with backoff within --wait: a closed client's slot may linger.
      return {
        args: ['--wait', '1000'],
        cleanup: async () => (sockets.forEach((s) => s.destroy()), agent.stop()),
        sent: () => agent.received.map((r) => r.line),
      };
    },
    says: (p) =>
      new RegExp(`the agent on port \\d+ from ${esc(p.portFile)} closed the connection before CONNECTED, on every try for \\d+ ms`),
    next: /it already serves 5 clients \(close an IDE window/,
  },
  {
    name: 'an agent still starting (its handlers not wired: no replies)',
    setup: async (p) => {
      const agent = await startFakeAgent({ heartbeatMs: 0, notReady: true });
      writePortFile(p, String(agent.port));
      // DOCTOR is asked again within --wait, each time for at most --timeout.
      return { args: ['--wait', '2000'], cleanup: () => agent.stop(), sent: () => agent.received.map((r) => r.line.split(' ')[0]!) };
    },
    says: () =>
      /the agent 1\.4\.0-fake on port \d+ accepted the connection but did not answer DOCTOR within \d+ ms after waiting \d+ ms: it is still starting, too old, or its JVM is stopped or hung/,
    next: /wait until the app has started and try again, or raise --timeout or --wait/,
  },
];

const messages = new Map<string, string>();

afterAll(() => {
  console.log(`port-file and reachability faults: ${messages.size} cases ran`);
});

describe.concurrent('reaching the agent: each fault a distinct message, exit 69, build not run', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const p = project();
      const { args = [], cleanup, sent } = await c.setup(p);
      try {
        const run = await runCli(['--timeout', '1500', ...args, ...buildCommand(p)], { cwd: p.dir });
        expect(run.exitCode, run.stderr).toBe(69);
        expect(run.stderr).toMatch(c.says(p));
        expect(run.stderr).toMatch(c.next);
        expect(hasStackTrace(run.stderr)).toBe(false);
        expect(buildRan(p)).toBe(false);
        if (sent) expect(sent().filter((line) => line.startsWith('BUILD'))).toEqual([]);
        const verdict = run.stderr.split('\n').find((line) => line.includes('✘ not run:'))!;
        messages.set(c.name, verdict.replaceAll(p.dir, '<dir>').replace(/port \d+/g, 'port N'));
      } finally {
        await cleanup?.();
      }
    });
  }
});

describe('reaching the agent, all cases together', () => {
  it('the messages are all different', () => {
    expect(messages.size).toBe(CASES.length);
    expect(new Set(messages.values()).size).toBe(CASES.length);
  });
});
