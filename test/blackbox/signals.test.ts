/**
 * Signals on the real binary with a real child process: SIGINT and SIGTERM during the build
 * and during each wait (run lock, connect, DOCTOR, another owner's hold, the started receipt,
 * the ok and failed receipts, VERIFY); the 5 s kill of a build that ignores the signal; a
 * second Ctrl-C; and Ctrl-C in a real terminal (a pty), which must reach the build only once.
 *
 * Each case waits until the run is in the state, sends the signal to the CLI process only, and
 * asserts the exit status (130/143), whether the build ran, what the agent received (BUILD
 * failed after the child ended, never ok), the hold left behind, and no stack trace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import lockfile from 'proper-lockfile';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { FakeAgentOptions } from '../../src/fake-agent/index.js';
import { BIN, cliEnv, startCli } from '../support/cli.js';
import {
  agentFor,
  buildCommand,
  buildEnded,
  buildPid,
  buildRan,
  buildSignals,
  flow,
  hasStackTrace,
  processGone,
  project,
  type BuildOptions,
  type Project,
} from '../support/project.js';
import { startProxy, type ProxyRules } from '../support/proxy.js';
import { waitFor } from '../support/wait.js';

const OWNER = 'signal-owner';
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type Sig = (typeof SIGNALS)[number];
const EXIT: Record<Sig, number> = { SIGINT: 130, SIGTERM: 143 };
let ran = 0;

// Most cases wait for a state or a bound rather than compute: run more at once than the default 5.
vi.setConfig({ maxConcurrency: 8 });

afterAll(() => console.log(`signal tests: ${ran} cases ran on the real binary`));

interface Started {
  p: Project;
  /** Index into agent.received where the run's own lines start (after any setup). */
  from: number;
  proxy?: Awaited<ReturnType<typeof startProxy>>;
  agent: Awaited<ReturnType<typeof agentFor>>;
  cli: ReturnType<typeof startCli>;
  stderr: () => string;
  cleanup: Array<() => unknown>;
}

/** Starts a fake agent (behind a proxy when rules are given) and the CLI with a long-running build. */
async function start(
  options: {
    agent?: FakeAgentOptions;
    proxy?: ProxyRules;
    args?: string[];
    build?: BuildOptions;
    setup?: (p: Project, port: number) => Promise<(() => unknown) | void>;
  } = {},
): Promise<Started> {
  const p = project();
  const agent = await agentFor(p, [], options.agent ?? {});
  const cleanup: Array<() => unknown> = [() => agent.stop()];
  let port = agent.port;
  const proxy = options.proxy === undefined ? undefined : await startProxy(agent.port, options.proxy);
  if (proxy !== undefined) {
    cleanup.push(() => proxy.stop());
    port = proxy.port;
  }
  fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
  fs.writeFileSync(p.portFile, String(port));
  const undo = await options.setup?.(p, agent.port);
  if (undo) cleanup.push(undo);
  const from = agent.received.length;
  const cli = startCli(
    [
      '--owner',
      OWNER,
      '--verify-timeout',
      '20000',
      ...(options.args ?? ['--timeout', '10000']),
      ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' }, signals: 'exit', sleepMs: 20_000, ...options.build }),
    ],
    { cwd: p.dir, timeoutMs: 50_000 },
  );
  let text = '';
  cli.stderr?.on('data', (chunk) => (text += String(chunk)));
  return { p, from, agent, cli, stderr: () => text, cleanup, ...(proxy === undefined ? {} : { proxy }) };
}

async function finish(s: Started): Promise<{ exitCode: number | undefined; stderr: string; durationMs: number }> {
  const begun = Date.now();
  const result = await s.cli;
  await Promise.all(s.cleanup.map((undo) => undo()));
  return { exitCode: result.exitCode, stderr: String(result.stderr), durationMs: Date.now() - begun };
}

/** Sends `sig` to the CLI process only, as CI or npm would (execa's kill() would also SIGKILL it 5 s later). */
function signal(s: Started, sig: NodeJS.Signals): void {
  process.kill(s.cli.pid!, sig);
}

const has = (s: Started, verb: string) => () => s.agent.received.some((r) => r.line.startsWith(verb));

/** A signal during the build (no terminal: forwarded to the build's process group). */
function duringTheBuild(): void {
  for (const sig of SIGNALS) {
    it(`${sig}: the build and its grandchild get it once, BUILD failed follows the child's end, exit ${EXIT[sig]}`, async () => {
      const s = await start();
      await waitFor(() => buildRan(s.p), 'the build to start');
      signal(s, sig);
      const run = await finish(s);
      expect(run.exitCode, run.stderr).toBe(EXIT[sig]);
      expect(run.stderr).toMatch(
        new RegExp(`interrupted \\(${sig}\\) during the build; the agent keeps the hold for owner ${OWNER}: the next run here reuses it`),
      );
      // BUILD failed was acknowledged: the agent has the failed report, and the hold is kept, not "may be left".
      expect(run.stderr).toContain('BUILD failed acknowledged');
      expect(run.stderr).not.toContain('may be left');
      expect(hasStackTrace(run.stderr)).toBe(false);
      const ended = buildEnded(s.p)!;
      expect(ended.signals).toEqual([sig]);
      expect(ended.grandchildSignals).toEqual([sig]);
      expect(flow(s.agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
      const failed = s.agent.received.find((r) => r.line.startsWith('BUILD failed'))!;
      expect(failed.atMs).toBeGreaterThanOrEqual(ended.endedAtMs);
      expect(s.agent.hold()).toMatchObject({ kind: 'named', owner: OWNER });
      ran += 1;
    });
  }

  it('a build that ignores SIGTERM is killed after 5 s; still BUILD failed, never ok; exit 143', async () => {
    const s = await start({ build: { signals: 'ignore' } });
    await waitFor(() => buildRan(s.p), 'the build to start');
    const pid = buildPid(s.p);
    const sentAt = Date.now();
    signal(s, 'SIGTERM');
    const run = await finish(s);
    const tookMs = Date.now() - sentAt;
    expect(run.exitCode, run.stderr).toBe(143);
    expect(tookMs).toBeGreaterThanOrEqual(4900);
    expect(tookMs).toBeLessThan(15_000);
    expect(processGone(pid)).toBe(true);
    expect(buildEnded(s.p)).toBeUndefined(); // it never ended by itself: it was killed
    expect(flow(s.agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
    expect(hasStackTrace(run.stderr)).toBe(false);
    ran += 1;
  });

  it('a second SIGINT exits at once with 130 and one line on how to recover; the build is not left running', async () => {
    const s = await start({ build: { signals: 'ignore' } });
    await waitFor(() => buildRan(s.p), 'the build to start');
    const pid = buildPid(s.p);
    signal(s, 'SIGINT');
    // Only once the first is handled (forwarded to the build): two signals sent at once may arrive as one.
    await waitFor(() => buildSignals(s.p).length === 1, 'the build to get the forwarded SIGINT');
    const exitedAt = new Promise<number>((resolve) => s.cli.once('exit', () => resolve(Date.now())));
    const secondAt = Date.now();
    signal(s, 'SIGINT');
    const run = await finish(s);
    expect((await exitedAt) - secondAt).toBeLessThan(4000); // "at once": well before the 5 s kill
    expect(run.exitCode, run.stderr).toBe(130);
    const lines = run.stderr.split('\n').filter((l) => l.includes('interrupted again'));
    expect(lines).toEqual([
      `reclazz-build: interrupted again, exiting now; the hold may be left with owner ${OWNER}: run again here (or pass --owner ${OWNER}) to recover it`,
    ]);
    expect(hasStackTrace(run.stderr)).toBe(false);
    await waitFor(() => processGone(pid), 'the build process group to be killed');
    expect(flow(s.agent)).toEqual(['DOCTOR', 'BUILD started']);
    expect(s.agent.hold()).toMatchObject({ kind: 'named', owner: OWNER });
    ran += 1;
  });
}

/** Ctrl-C in a terminal (a real pty through script(1)). */
function inATerminal(): void {
  it('Ctrl-C in a terminal reaches the build once through the terminal (not forwarded twice); BUILD failed; exit 130', async () => {
    const p = project();
    const agent = await agentFor(p, []);
    fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
    fs.writeFileSync(p.portFile, String(agent.port));
    const script = path.join(p.dir, 'build.cjs');
    fs.writeFileSync(
      script,
      `const fs = require('fs'); const got = [];
       process.on('SIGINT', () => { got.push('SIGINT'); setTimeout(() => { fs.writeFileSync(${JSON.stringify(p.ended)}, JSON.stringify({ signals: got, endedAtMs: Date.now() })); process.exit(130); }, 400); });
       fs.writeFileSync(${JSON.stringify(p.marker)}, Date.now() + ' ' + process.pid);
       setTimeout(() => process.exit(0), 20000);`,
    );
    const command = [process.execPath, BIN, '--owner', OWNER, '--', process.execPath, script].map((w) => `'${w}'`).join(' ');
    const pty = execa('script', ['-qfec', command, '/dev/null'], {
      cwd: p.dir,
      env: cliEnv(),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
      timeout: 30_000,
    });
    try {
      await waitFor(() => buildRan(p), 'the build to start');
      pty.stdin?.write('\x03');
      const result = await pty;
      const out = String(result.stdout);
      expect(result.exitCode, out).toBe(130);
      expect(buildEnded(p)!.signals).toEqual(['SIGINT']);
      expect(out).toMatch(/interrupted \(SIGINT\) during the build/);
      expect(hasStackTrace(out)).toBe(false);
      expect(flow(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
      ran += 1;
    } finally {
      pty.kill();
      await agent.stop();
    }
  });
}

interface Wait {
  name: string;
  options: (sig: Sig) => Parameters<typeof start>[0];
  /** The run is in the state once this holds. */
  reached: (s: Started) => () => boolean;
  /**
   * The CLI's own line that says it entered the state: the signal is sent from the stderr
   * listener the moment it arrives, not after a poll (the state lasts only until a timer fires).
   */
  line?: string;
  /** The exact words when the signal still met a request in flight (the CLI's timer fired first). */
  saysInFlight?: RegExp;
  built: boolean;
  flow: string[];
  hold: 'none' | 'ours' | 'ide';
  says: RegExp;
}

const WAITS: Wait[] = [
  {
    name: 'waiting for another run’s lock',
    options: () => ({
      // Another run holds this checkout's lock (taken with the same library, kept fresh).
      setup: (p) =>
        lockfile.lock(path.join(p.dir, '.reclazz'), {
          lockfilePath: path.join(p.dir, '.reclazz', 'build.lock'),
          stale: 5000,
          realpath: false,
        }),
    }),
    reached: (s) => () => s.stderr().includes('waiting for another reclazz-build run'),
    built: false,
    flow: [],
    hold: 'none',
    says: /interrupted \(SIG(INT|TERM)\) while waiting for another run/,
  },
  {
    name: 'connecting (no CONNECTED line yet)',
    options: () => ({ proxy: { onAccept: () => 'silent' } }),
    reached: (s) => () => (s.proxy?.accepted ?? 0) >= 1,
    built: false,
    flow: [],
    hold: 'none',
    says: /interrupted \(SIG(INT|TERM)\) while connecting to the agent/,
  },
  {
    name: 'waiting for DOCTOR',
    options: () => ({ agent: { notReady: true } }),
    reached: (s) => has(s, 'DOCTOR'),
    built: false,
    flow: ['DOCTOR'],
    hold: 'none',
    says: /interrupted \(SIG(INT|TERM)\) while asking the agent for DOCTOR/,
  },
  {
    name: 'waiting for another owner’s hold',
    options: () => ({
      args: ['--timeout', '10000', '--wait', '20000'],
      setup: async (_p, port) => {
        const { LineClient } = await import('../fake-agent/line-client.js');
        const ide = await LineClient.ready(port);
        ide.send('BUILD started request=ide-1 owner=the-ide');
        await ide.next((e) => e.message.startsWith('BUILD_ACK ide-1'));
        ide.close();
      },
    }),
    reached: (s) => () => s.stderr().includes('waiting for the build hold'),
    line: 'waiting for the build hold',
    built: false,
    flow: ['DOCTOR', 'BUILD started'],
    hold: 'ide',
    says: /interrupted \(SIG(INT|TERM)\) while waiting for the build hold another owner holds; the build did not run$/m,
    saysInFlight:
      /interrupted \(SIG(INT|TERM)\) while waiting for the BUILD started receipt; the hold may be left with owner signal-owner: the next run here reuses it and recovers/,
  },
  {
    name: 'waiting for the started receipt',
    options: () => ({
      agent: { intercept: (c) => (c.verb === 'BUILD' && c.words[1] === 'started' ? { kind: 'delay', ms: 8000 } : undefined) },
    }),
    reached: (s) => has(s, 'BUILD started'),
    built: false,
    flow: ['DOCTOR', 'BUILD started'],
    hold: 'ours',
    says: /interrupted \(SIG(INT|TERM)\) while waiting for the BUILD started receipt; the hold may be left with owner signal-owner: the next run here reuses it and recovers/,
  },
  {
    name: 'waiting for the ok receipt',
    options: () => ({
      agent: { intercept: (c) => (c.verb === 'BUILD' && c.words[1] === 'ok' ? { kind: 'delay', ms: 8000 } : undefined) },
      build: { sleepMs: 0, signals: undefined },
    }),
    reached: (s) => has(s, 'BUILD ok'),
    built: true,
    flow: ['DOCTOR', 'BUILD started', 'BUILD ok'],
    hold: 'none',
    says: /interrupted \(SIG(INT|TERM)\) while waiting for the BUILD ok receipt; the hold may be left with owner signal-owner/,
  },
  {
    name: 'waiting for the failed receipt',
    options: () => ({
      agent: { intercept: (c) => (c.verb === 'BUILD' && c.words[1] === 'failed' ? { kind: 'delay', ms: 8000 } : undefined) },
      build: { sleepMs: 0, exit: 3, signals: undefined },
    }),
    reached: (s) => has(s, 'BUILD failed'),
    built: true,
    flow: ['DOCTOR', 'BUILD started', 'BUILD failed'],
    hold: 'ours',
    says: /interrupted \(SIG(INT|TERM)\) while waiting for the BUILD failed receipt; the hold may be left with owner signal-owner/,
  },
  {
    name: 'during VERIFY',
    options: () => ({
      agent: { intercept: (c) => (c.verb === 'VERIFY' ? { kind: 'ignore' } : undefined) },
      build: { sleepMs: 0, signals: undefined },
    }),
    reached: (s) => has(s, 'VERIFY'),
    built: true,
    flow: ['DOCTOR', 'BUILD started', 'BUILD ok', 'VERIFY...'],
    hold: 'none',
    says: /interrupted \(SIG(INT|TERM)\) during VERIFY/,
  },
];

/** A signal during each wait: clean stop, no stack trace, the build not started (or left as it was). */
function duringEachWait(): void {
  for (const wait of WAITS) {
    for (const sig of SIGNALS) {
      it(`${sig} ${wait.name} -> exit ${EXIT[sig]}`, async () => {
        const s = await start(wait.options(sig));
        if (wait.line === undefined) {
          await waitFor(wait.reached(s), wait.name);
          await new Promise((r) => setTimeout(r, 50));
          signal(s, sig);
        } else {
          const line = wait.line;
          await new Promise<void>((resolve) => {
            const onData = (): void => {
              if (!s.stderr().includes(line)) return;
              s.cli.stderr?.off('data', onData);
              signal(s, sig);
              resolve();
            };
            s.cli.stderr?.on('data', onData);
            onData();
          });
        }
        const run = await finish(s);
        expect(run.exitCode, run.stderr).toBe(EXIT[sig]);
        if (wait.saysInFlight === undefined) {
          expect(run.stderr).toMatch(wait.says);
          expect(flow(s.agent, s.from), 'no BUILD ok or failed was sent after the signal').toEqual(wait.flow);
        } else {
          // The CLI asks again every 500 ms; on a loaded machine the signal can land after a retry,
          // or meet one in flight, which only a retry sent before the signal can be.
          const started = flow(s.agent, s.from).filter((verb) => verb === 'BUILD started').length;
          expect(flow(s.agent, s.from)).toEqual(['DOCTOR', ...Array<string>(started).fill('BUILD started')]);
          expect(run.stderr).toMatch(started > 1 && wait.saysInFlight.test(run.stderr) ? wait.saysInFlight : wait.says);
        }
        expect(run.stderr).toContain(`(${sig})`);
        expect(hasStackTrace(run.stderr)).toBe(false);
        expect(buildRan(s.p)).toBe(wait.built);
        const hold = s.agent.hold();
        if (wait.hold === 'none') expect(hold.kind).toBe('none');
        else expect(hold).toMatchObject({ kind: 'named', owner: wait.hold === 'ours' ? OWNER : 'the-ide' });
        ran += 1;
      });
    }
  }
}

describe.concurrent('signals on the real binary', () => {
  duringTheBuild();
  inATerminal();
  duringEachWait();
});
