/**
 * A soak of 100 watch cycles against one fake agent: one client slot used throughout, resident
 * memory grows by less than 10 MB from cycle 10 to cycle 100, and the count of open file
 * descriptors does not grow. And a soak of two apps sharing a module, one killed and started again
 * three times: every cycle's verdict is what both JVMs run.
 */
import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { twoServices, watchIn, type WatchCycle } from '../support/apps.js';
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

it(
  'two apps, svc-b killed (kill -9) and started again three times: every cycle is proven live exactly when both JVMs run the change',
  { timeout: 300_000 },
  async () => {
    const c = await twoServices();
    const [a, b] = c.apps;
    const w = watchIn(c.root, c.build);
    await w.newsCame('watching');
    let version = 1;
    let cycles = 0;
    /** The next cycle, once it ended, and whether its verdict is what both JVMs run (the bytes of the last save). */
    const next = async (): Promise<WatchCycle> => {
      const cycle = (await w.cyclesEnded((cycles += 1)))[cycles - 1]!;
      const text = `money-v${version}`;
      const truth = { a: c.runs(a, text), b: c.runs(b, text) };
      expect(cycle.result.provenLive, `cycle ${cycles} ${cycle.line} ${JSON.stringify(truth)}${w.stderr.join('\n')}`).toBe(
        truth.a === true && truth.b === true,
      );
      return cycle;
    };
    const save = () => c.save(`money-v${(version += 1)}`);
    for (let round = 1; round <= 3; round += 1) {
      save();
      expect((await next()).result.exitCode).toBe(0);
      // Killed during a build: that build's part for svc-b is not safe.
      const build = c.hold();
      save();
      await build.started();
      await b.kill();
      build.release();
      expect((await next()).result.agents!.map((p) => p.exitCode)).toEqual([0, 70]);
      // A save while it is gone: not proven for svc-b, named.
      save();
      const gone = await next();
      expect([gone.result.exitCode, gone.result.message.includes(b.portFile)]).toEqual([75, true]);
      // Back in a new JVM: the change is proven there.
      await b.start();
      const back = await next();
      expect([back.changed, back.result.exitCode]).toEqual([0, 0]);
    }
    save();
    expect((await next()).result.exitCode).toBe(0);
    expect(b.runs).toHaveLength(4);
    await w.stop();
  },
);
