/**
 * A soak of 100 watch cycles against one fake agent: one client slot used throughout, resident
 * memory grows by less than 10 MB from cycle 10 to cycle 100, and the count of open file
 * descriptors does not grow.
 */
import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { agentFor } from '../support/project.js';
import { editSource, startWatch, watchProject, type RunningWatch } from '../support/watch.js';

const CYCLES = 100;
const agents: FakeAgent[] = [];
let running: RunningWatch | undefined;
afterEach(async () => {
  if (running !== undefined && running.cli.exitCode === null) await running.stop('SIGKILL');
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

/** Resident memory of process `pid`, in MB. */
function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** Open file descriptors of process `pid`. */
function fds(pid: number): number {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

it(
  `${CYCLES} cycles: one slot, resident memory flat within 10 MB from cycle 10 on, no file descriptor leak`,
  { timeout: 300_000 },
  async () => {
    const p = watchProject();
    const agent = await agentFor(p, agents, { portFile: p.portFile, heartbeatMs: 1000 });
    running = startWatch(p, ['--debounce', '20']);
    const w = running;
    await w.watching();
    const pid = w.cli.pid!;
    const at: Record<number, { rss: number; fds: number }> = {};
    const slots = new Set<number>();
    for (let n = 1; n <= CYCLES; n += 1) {
      editSource(p, 'com.acme.Greeter', `greeter-v${n + 1}`);
      const cycles = await w.cyclesEnded(n, 30_000);
      expect(cycles[n - 1]!.result, cycles[n - 1]!.line).toMatchObject({ reason: 'ok', exitCode: 0 });
      slots.add(agent.slotsInUse());
      if (n === 10 || n === CYCLES) at[n] = { rss: rssMb(pid), fds: fds(pid) };
    }
    await w.stop('SIGINT');
    console.log(`soak: cycle 10 ${JSON.stringify(at[10])}, cycle ${CYCLES} ${JSON.stringify(at[CYCLES])}`);
    expect(w.cycles()).toHaveLength(CYCLES);
    expect([...slots]).toEqual([1]);
    expect(new Set(agent.received.map((r) => r.client)).size).toBe(1);
    expect(at[CYCLES]!.rss - at[10]!.rss).toBeLessThan(10);
    expect(at[CYCLES]!.fds).toBeLessThanOrEqual(at[10]!.fds);
  },
);
