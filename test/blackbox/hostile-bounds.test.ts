/**
 * Bounds against a broken or hostile peer, through the real binary: a port file is read with a
 * 64-byte bound (a huge one is refused at once, without reading it), a FIFO or a device in its
 * place is refused without blocking; `events` with a reader that stopped reading keeps reading
 * the socket with bounded memory, drops the oldest lines it holds for stdout and says how many on
 * stderr once stdout drains (never in the --json stream), and one SIGTERM or SIGINT ends it at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent } from '../../src/fake-agent/index.js';
import { useFakeAgents } from '../support/agents.js';
import { BIN, cliEnv, jsonResult, runCli } from '../support/cli.js';
import { buildCommand, buildRan, hasStackTrace, type Project } from '../support/project.js';
import { scratchDir } from '../support/scratch.js';
import { sleep, waitFor } from '../support/wait.js';

const agentFor = useFakeAgents({ heartbeatMs: 0 });

/** How soon a signal must end a follower of a flood that lasts far longer: with room for a loaded machine. */
const AT_ONCE_MS = 5000;

function project(): Project {
  const dir = scratchDir();
  return {
    dir,
    classes: path.join(dir, 'target', 'classes'),
    marker: path.join(dir, 'build-ran'),
    ended: path.join(dir, 'build-ended.json'),
    signalLog: path.join(dir, 'build-signals.log'),
    portFile: path.join(dir, '.reclazz', 'agent.port'),
  };
}

describe('the port file is read with a 64-byte bound', () => {
  it('a 1 GB port file is refused at once, saying it is too large, without reading it', async () => {
    const p = project();
    fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
    // Sparse: a gigabyte by its size, nothing on disk.
    fs.writeFileSync(p.portFile, '4242');
    fs.truncateSync(p.portFile, 1024 ** 3);
    const run = await runCli(['--json', ...buildCommand(p)], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toContain(`✘ not run: port file ${p.portFile} holds more than 64 bytes: it is not a port number the agent wrote`);
    expect(run.stderr).toContain(
      'next: the agent writes only its port number there: delete the file and restart the app, or pass --port <n>',
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(buildRan(p)).toBe(false);
    // Reading it whole took seconds and a gigabyte; a bounded read takes the run (start-up aside) no time.
    expect(jsonResult(run).durationMs).toBeLessThan(3000);
  });

  it('64 bytes (a port padded with whitespace) is read; 65 bytes is refused', async () => {
    const p = project();
    const agent = await startFakeAgent({ heartbeatMs: 0, standInJvm: false });
    try {
      const file = path.join(p.dir, 'agent.port');
      fs.writeFileSync(file, String(agent.port).padEnd(63, ' ') + '\n');
      const ok = await runCli(['doctor', '--port-file', file], { cwd: p.dir });
      expect(ok.exitCode, ok.stderr).toBe(0);
      fs.writeFileSync(file, String(agent.port).padEnd(64, ' ') + '\n');
      const refused = await runCli(['doctor', '--port-file', file], { cwd: p.dir });
      expect(refused.exitCode).toBe(69);
      expect(refused.stderr).toContain(`port file ${file} holds more than 64 bytes`);
    } finally {
      await agent.stop();
    }
  });

  it('a FIFO or a device in its place is refused as not a regular file, without blocking', async () => {
    const p = project();
    fs.mkdirSync(path.dirname(p.portFile), { recursive: true });
    await execa('mkfifo', [p.portFile]);
    for (const args of [[], ['--port-file', '/dev/zero'], ['--port-file', '/dev/tty']]) {
      // A run blocked on the FIFO would be killed at the hang bound, not exit 69.
      const run = await runCli(['--json', ...args, ...buildCommand(p)], { cwd: p.dir, timeoutMs: 30_000 });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(run.stderr).toMatch(/✘ not run: port file \S+ is not a regular file \(a device, pipe or socket\)/);
      expect(jsonResult(run).durationMs).toBeLessThan(3000);
    }
    expect(buildRan(p)).toBe(false);
  });
});

/** VmRSS of process `pid` in MB, or undefined once it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

const followers: ChildProcess[] = [];
afterEach(() => {
  for (const child of followers.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * `reclazz-build events` whose stdout nobody reads (a paused pipe) until `resume()`, which gives
 * what stdout had so far (`text`) and all of it once it ends (`ended`).
 */
function stalledEvents(
  dir: string,
  args: string[] = [],
): { child: ChildProcess; stderr: () => string; resume: () => { text: () => string; ended: Promise<string> } } {
  const child = spawn(process.execPath, [BIN, 'events', ...args], {
    cwd: dir,
    env: cliEnv() as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  followers.push(child);
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout!.pause();
  return {
    child,
    stderr: () => err,
    resume: () => {
      let out = '';
      const ended = new Promise<string>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stdout!.on('end', () => resolve(out));
        child.stdout!.resume();
      });
      return { text: () => out, ended };
    },
  };
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Polls the RSS of `pid` every 200 ms for `ms`; returns the samples in MB. */
async function sampleRss(pid: number, ms: number): Promise<number[]> {
  const samples: number[] = [];
  for (const end = Date.now() + ms; Date.now() < end;) {
    const mb = rssMb(pid);
    if (mb !== undefined) samples.push(mb);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return samples;
}

/** The built fake agent, for one that runs in a process of its own. */
const FAKE_AGENT = fileURLToPath(new URL('../../dist/fake-agent/index.js', import.meta.url));

/** A fake agent in a process of its own (its flood would otherwise hog this test's event loop) that floods each client with `events` lines. */
interface FloodingAgent {
  /** The latest client list it printed (every 200 ms). */
  clients(): Array<{ id: number; open: boolean; queued: number; dropped: number }>;
  /** Stops it (the followers see the stream end). */
  stop(): Promise<void>;
}

const agents: ChildProcess[] = [];
afterEach(() => {
  for (const child of agents.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function floodingAgent(portFile: string, events: number): Promise<FloodingAgent> {
  const script = `
    const { startFakeAgent } = await import(${JSON.stringify(FAKE_AGENT)});
    const agent = await startFakeAgent({ portFile: ${JSON.stringify(portFile)}, heartbeatMs: 0, standInJvm: false, hostile: { flood: { events: ${events} } } });
    setInterval(() => console.log(JSON.stringify(agent.clients())), 200);
    process.on('SIGTERM', async () => { await agent.stop(); process.exit(0); });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  agents.push(child);
  let latest: ReturnType<FloodingAgent['clients']> = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    if (lines.length > 0) latest = JSON.parse(lines.at(-1)!);
  });
  await waitFor(() => fs.existsSync(portFile), 'the flooding agent to start');
  return {
    clients: () => latest,
    stop: async () => {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

describe('events with a reader that stopped reading', () => {
  async function flooding(events: number): Promise<{ p: Project; agent: FloodingAgent }> {
    const p = project();
    return { p, agent: await floodingAgent(p.portFile, events) };
  }
  const connected = (agent: FloodingAgent) => waitFor(() => agent.clients().some((c) => c.open), 'the follower to connect');

  it('keeps reading the socket in bounded memory; one SIGTERM ends it at once, saying what stdout never had', async () => {
    const { p, agent } = await flooding(3_000_000);
    const run = stalledEvents(p.dir);
    await connected(agent);
    const samples = await sampleRss(run.child.pid!, 6000);
    // The socket was read all along: the agent did not have to hold or drop lines for it.
    expect(agent.clients()[0]!.dropped).toBe(0);
    // Unbounded, this grew by about 40 MB a second; bounded, it stays near where it started.
    const shown = samples.map((s) => s.toFixed(0)).join(' ');
    expect(Math.max(...samples), shown).toBeLessThan(160);
    expect(samples.at(-1)! - samples[Math.floor(samples.length / 2)]!, shown).toBeLessThan(30);

    const sent = performance.now();
    run.child.kill('SIGTERM');
    const end = await exited(run.child);
    // At once: the flood would go on for far longer (a bound with room for a loaded machine).
    expect(performance.now() - sent).toBeLessThan(AT_ONCE_MS);
    expect(end.code).toBe(143);
    expect(run.stderr()).toMatch(/^reclazz-build: warning: dropped \d+ event line\(s\): stdout's reader did not keep up/m);
    expect(hasStackTrace(run.stderr())).toBe(false);
    await agent.stop();
  }, 60_000);

  it('SIGINT ends it at once too', async () => {
    const { p, agent } = await flooding(1_000_000);
    const run = stalledEvents(p.dir, ['--json']);
    await connected(agent);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const sent = performance.now();
    run.child.kill('SIGINT');
    const end = await exited(run.child);
    expect(performance.now() - sent).toBeLessThan(AT_ONCE_MS);
    expect(end.code).toBe(130);
    await agent.stop();
  }, 60_000);

  it('when stdout drains: the newest lines in order, then a line on stderr with how many were dropped; --json stays JSON', async () => {
    const total = 50_000;
    for (const json of [false, true]) {
      const { p, agent } = await flooding(total);
      const run = stalledEvents(p.dir, json ? ['--json'] : []);
      await connected(agent);
      // The flood (about 4 MB) goes on while only the socket is read: far more lines than the 1,000 held for stdout.
      await sleep(3000);
      const reading = run.resume();
      // The agent goes away once the follower has passed on the flood's last line.
      await waitFor(
        () => /dropped \d+ event line/.test(run.stderr()) && reading.text().includes(`flood ${total} of ${total}`),
        "the dropped-lines line and the flood's last line",
      );
      await agent.stop();
      const out = await reading.ended;
      const end = await exited(run.child);
      expect(end.code, run.stderr()).toBe(0);
      const lines = out.trim().split('\n');
      if (json) for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      else expect(out).not.toMatch(/dropped/);
      const numbers = lines.filter((l) => l.includes('flood ')).map((l) => Number(/flood (\d+) of/.exec(l)![1]));
      // In order, and ending with the flood's last line; the oldest waiting ones were dropped.
      for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThan(numbers[i - 1]!);
      expect(numbers.at(-1)).toBe(total);
      // Every line stdout did not get is counted (the pipe may have drained once before the reader paused).
      const reported = [...run.stderr().matchAll(/dropped (\d+) event line/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(reported).toBe(total - numbers.length);
      expect(reported).toBeGreaterThan(0);
      // The newest 1,000 were held for stdout.
      expect(numbers.slice(-1000)).toEqual(Array.from({ length: 1000 }, (_, i) => total - 999 + i));
    }
  }, 120_000);
});

describe('a peer that breaks the connection', () => {
  const cases: Array<{ name: string; hostile: Parameters<typeof agentFor>[1]; says: RegExp; args?: string[] }> = [
    {
      name: 'accepts and never sends CONNECTED',
      hostile: { hostile: { silentConnect: true } },
      says: /accepted the connection but sent no CONNECTED line within 800 ms/,
    },
    {
      name: 'sends half a CONNECTED line, then nothing',
      hostile: { hostile: { halfLine: true } },
      says: /accepted the connection but sent no CONNECTED line within 800 ms/,
    },
    {
      // With --wait 0 the DOCTOR is not asked again (the next one would be answered: the reply's end ends the line).
      name: 'sends a 1 MiB line without an end, so the DOCTOR reply is lost in it (--wait 0)',
      hostile: { hostile: { oversizedLine: true } },
      says: /did not answer DOCTOR within 800 ms/,
      args: ['--wait', '0'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: refused (69) within the timeout, the build not run`, async () => {
      const p = project();
      await agentFor(p, { standInJvm: false, ...c.hostile });
      const run = await runCli(['--json', '--timeout', '800', ...(c.args ?? []), ...buildCommand(p)], { cwd: p.dir, timeoutMs: 30_000 });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(run.stderr).toMatch(c.says);
      expect(hasStackTrace(run.stderr)).toBe(false);
      expect(buildRan(p)).toBe(false);
      // Within --timeout's 800 ms, not the default 5000 (the run's own duration: start-up aside).
      expect(jsonResult(run).durationMs).toBeLessThan(4000);
    });
  }

  it('a 1 MiB line that ends is skipped whole: the connection goes on and DOCTOR is answered', async () => {
    const p = project();
    await agentFor(p, { standInJvm: false, hostile: { oversizedLine: { newline: true } } });
    const run = await runCli(['doctor', '--timeout', '2000'], { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^agent\s+1\.4\.0-fake/m);
  });

  it('a build while the agent floods the connection still gets its receipts and proves the change live', async () => {
    const p = project();
    fs.mkdirSync(path.join(p.classes, 'com', 'acme'), { recursive: true });
    fs.writeFileSync(path.join(p.classes, 'com', 'acme', 'Greeter.class'), 'v1');
    await agentFor(p, { standInJvm: false, watchDirs: [p.classes], hostile: { flood: { events: 200_000 } } });
    const run = await runCli(['--quiet', ...buildCommand(p, { writes: { 'com.acme.Greeter': 'v2' } })], { cwd: p.dir, timeoutMs: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('✔ proven live: all 1 changed class(es) proven live');
  }, 60_000);
});
