/**
 * The session API as watch mode will use it: one session, two cycles on it, against the fake
 * agent. One connection, two holds (each acquired and released), both cycles' classes verified.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processHost } from '../../src/cli/host.js';
import type { RunEvent } from '../../src/outcome/events.js';
import { type BuildSession, closeSession, prepareBuild } from '../../src/session/options.js';
import { runCycle } from '../../src/session/group.js';
import { openSession } from '../../src/session/open.js';
import { useFakeAgents } from '../support/agents.js';
import { tempDir, writeClass } from '../support/cli.js';
import { describeResult } from '../../src/report/words.js';

const agentFor = useFakeAgents();

describe('one session, two cycles', () => {
  it('holds, builds and verifies twice on one connection', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    const greeter = writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
    const agent = await agentFor({ dir, classes });
    const host = { ...processHost(), cwd: dir, env: { ...process.env, RECLAZZ_PORT: undefined, RECLAZZ_PORT_FILE: undefined } };
    const events: RunEvent[] = [];
    const opening = await openSession(
      {},
      host,
      { onEvent: (e) => events.push(e) },
      {
        builds: true,
        announce: true,
        requires: { need: 'owned builds', ownedBuilds: true, verify: true, session: true },
      },
    );
    expect(opening.kind).toBe('open');
    if (opening.kind !== 'open') return;
    const session = opening.session as BuildSession;
    const cycleOf = (bytes: string) => ({
      tool: 'command' as const,
      args: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(greeter)}, ${JSON.stringify(bytes)})`],
    });
    try {
      for (const bytes of ['greeter-v2', 'greeter-v3']) {
        const prepared = await prepareBuild(cycleOf(bytes), host);
        if (prepared.kind !== 'ok') throw new Error(`not runnable: ${prepared.outcome.reason}`);
        const result = await runCycle(session, prepared.command, cycleOf(bytes));
        expect(result, describeResult(result).message).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true, hold: 'none' });
        expect(result.verdicts.map((v) => [v.className, v.status])).toEqual([['com.acme.Greeter', 'applied']]);
        expect(fs.readFileSync(greeter, 'utf8')).toBe(bytes);
      }
    } finally {
      await closeSession(session);
    }
    expect(new Set(agent.received.map((r) => r.client)).size).toBe(1);
    const started = agent.received.filter((r) => r.line.startsWith('BUILD started'));
    const ok = agent.received.filter((r) => r.line.startsWith('BUILD ok'));
    expect([started.length, ok.length]).toEqual([2, 2]);
    expect(agent.holdLog.filter((h) => h.event === 'acquired').length).toBe(2);
    expect(agent.holdLog.filter((h) => h.event === 'released').length).toBe(2);
    expect(events.filter((e) => e.type === 'agent')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'hold')).toHaveLength(2);
  });
});
