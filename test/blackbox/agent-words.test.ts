/**
 * Issue 24, item 5, on the real binary against the fake agent (modelled on the agent's source):
 * the agent's own words. Restart-required verdicts come from the receipt of the bytes on disk (the
 * StructuralReloader warning); PENDING's sentences are the session's history, shown beside the
 * receipt's, and a later `applied` for the bytes on disk wins over an old PENDING entry; DIAGNOSE's words come with a `failed` or `unverified` verdict; the
 * batch-wide `unverified` names what the agent's detail covers; a legacy hold's advice says an
 * unowned `BUILD ok` releases it; class names take every Java identifier character.
 */
import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { buildCommand } from '../support/project.js';
import { waitFor } from '../support/wait.js';
import { classFile, run, sha, useProjects } from '../support/evidence.js';

const projectWithAgent = useProjects();

describe('class names', () => {
  it('a class whose name holds a currency symbol or connector punctuation is asked and proven, as the JVM names it', async () => {
    const { p, agent } = await projectWithAgent({}, (q) => {
      fs.writeFileSync(classFile(q, 'com.acme.Price€'), 'price-v1');
      fs.writeFileSync(classFile(q, 'com.acme.tie‿Knot'), 'knot-v1');
    });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Price€': 'price-v2', 'com.acme.tie‿Knot': 'knot-v2' } }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/applied\s+com\.acme\.Price€/);
    expect(result.stderr).toMatch(/applied\s+com\.acme\.tie‿Knot/);
    expect(agent.received.some((r) => r.line.endsWith(` com.acme.Price€ ${sha('price-v2')}`))).toBe(true);
  });
});

describe("restart-required, in the agent's words", () => {
  it('from the receipt of the bytes on disk; PENDING (its history) only in words; an applied for the bytes on disk wins over the old entry', async () => {
    const base = { from: 'com.acme.Base', to: 'com.acme.Other' };
    const { p } = await projectWithAgent({
      restartRequired: (name, hash) =>
        (name === 'com.acme.Greeter' && hash === sha('greeter-v2')) || (name === 'com.acme.Outer' && hash === sha('outer-v2'))
          ? base
          : undefined,
    });
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(first.stderr).toMatch(
      /restart-required\s+com\.acme\.Greeter\s+WARN: com\.acme\.Greeter: superclass change not applied; restart required/,
    );
    expect(first.exitCode, first.stderr).toBe(75);
    // Outer's warning makes the batch unverified; Greeter's receipt names Outer, PENDING still names Greeter:
    // its history, so Greeter is unverified (by Outer's restart note, which a restart of the app can settle).
    const second = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3', 'com.acme.Outer': 'outer-v2' } }));
    expect(second.stderr).toMatch(/restart-required\s+com\.acme\.Outer\s+WARN: com\.acme\.Outer: superclass change not applied/);
    expect(second.stderr).toMatch(
      /unverified\s+com\.acme\.Greeter\s+WARN: com\.acme\.Outer: .*PENDING lists it from earlier in this agent session \(history, not these bytes\): "com\.acme\.Greeter: superclass change not applied; restart required"/,
    );
    expect(second.exitCode, second.stderr).toBe(75);
    const third = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v4', 'com.acme.Outer': 'outer-v3' } }));
    expect(third.stderr).toMatch(/applied\s+com\.acme\.Greeter/);
    expect(third.exitCode, third.stderr).toBe(0);
  });

  it("a failed verdict comes with DIAGNOSE's words", async () => {
    const { p } = await projectWithAgent({ verifyStatus: (_name, hash) => (hash === sha('greeter-v2') ? 'failed' : undefined) });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(result.stderr).toMatch(/failed\s+com\.acme\.Greeter\s+the reload attempt reported failure \(fake\); DIAGNOSE: Compiled file: /);
    expect(result.stderr).toContain('Loaded and prepared by the agent, so a reload of it would be applied.');
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it("DIAGNOSE's words end where its answer does: the INFO line after it (the DOCTOR_RESULT marking its end) is not among them", async () => {
    const { p } = await projectWithAgent({ verifyStatus: (_name, hash) => (hash === sha('greeter-v2') ? 'failed' : undefined) });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    const row = result.stderr.split('\n').find((line) => /^\s+failed\s+com\.acme\.Greeter\s/.test(line));
    expect(row, result.stderr).toMatch(
      /; DIAGNOSE: Compiled file: \S+ \(last built [^)]*\) Loaded and prepared by the agent, so a reload of it would be applied\.$/,
    );
    expect(result.stderr).not.toContain('DOCTOR_RESULT');
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe('an agent with autoCompile=true (issue 24, item 4; agent ReclazzAgent.handleJavaBatch)', () => {
  const writes = { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer': 'outer-v2' };

  it('known from its command line: the run says it compiles by itself, asks nothing, and ends 75', async () => {
    const { p, agent } = await projectWithAgent({ autoCompile: true });
    const result = await run(p, buildCommand(p, { writes }));
    expect(result.stderr).toContain('the agent compiles the sources by itself (its options say autoCompile=true)');
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
    expect(agent.received.some((r) => r.line.startsWith('VERIFY '))).toBe(false);
  });

  it('known from its receipts alone (its command line does not say): every one names other bytes, so 75', async () => {
    const { p } = await projectWithAgent((q) => ({ autoCompile: true, agentArgs: `watchDirs=${q.classes}` }));
    const result = await run(p, buildCommand(p, { writes }));
    expect(result.stderr).toMatch(/mismatch\s+com\.acme\.Greeter/);
    expect(result.stderr).toContain("every receipt names bytes other than this build's, as an agent with autoCompile=true gives");
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

/** Sends `line` to `agent` on a connection of its own, as a client that names no owner would, and closes it once received. */
async function sendUnowned(agent: FakeAgent, line: string): Promise<void> {
  const socket = net.connect({ host: '127.0.0.1', port: agent.port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const seen = agent.received.length;
  socket.write(`${line}\n`);
  await waitFor(() => agent.received.slice(seen).some((r) => r.line === line), `the agent to read ${line}`);
  socket.destroy();
}

describe('a legacy (unowned) hold', () => {
  it('is named as such, with the unowned BUILD ok that releases it; once sent, the next run builds', async () => {
    const { p, agent } = await projectWithAgent();
    await sendUnowned(agent, 'BUILD started');
    await waitFor(() => agent.hold().kind === 'legacy', 'the legacy hold');
    const busy = await run(p, ['--wait', '0', ...buildCommand(p)]);
    expect(busy.exitCode, busy.stderr).toBe(69);
    expect(busy.stderr).toContain('an unowned (legacy) build hold is still held');
    expect(busy.stderr).toContain(
      `an unowned BUILD ok releases the hold once the output is good (exec 3<>/dev/tcp/127.0.0.1/${agent.port}; printf 'BUILD ok\\n' >&3)`,
    );
    expect(busy.stderr).not.toContain('restart the app if its owner is gone');
    await sendUnowned(agent, 'BUILD ok');
    await waitFor(() => agent.hold().kind === 'none', 'the unowned ok to release it');
    const built = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(built.exitCode, built.stderr).toBe(0);
  });
});
