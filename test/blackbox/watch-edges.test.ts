/**
 * `reclazz-build watch` at the edges of what a cycle looks at, on the real binary against the
 * fake agent: a class an earlier cycle did not prove live is asked again in every cycle until
 * it is proven or changes (a cycle's verdict covers it, not only the cycle's own changes), and a
 * class file that is a symbolic link is looked at every cycle (a write through it makes no event
 * in its class folder).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex, type FakeAgent } from '../../src/fake-agent/index.js';
import { writeClass } from '../support/cli.js';
import { agentFor } from '../support/project.js';
import { editSource, startWatch, watchProject, type RunningWatch, type WatchProject } from '../support/watch.js';

const agents: FakeAgent[] = [];
const watches: RunningWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => (w.cli.exitCode === null ? w.stop('SIGKILL') : undefined)));
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

function watch(p: WatchProject): RunningWatch {
  const running = startWatch(p);
  watches.push(running);
  return running;
}

/** The agent reloads every class but Greeter with `failing`'s bytes, which it fails. */
function failing(bytes: string): (className: string, sha256: string) => 'failed' | undefined {
  const sha = sha256Hex(Buffer.from(bytes));
  return (className, sha256) => (className === 'com.acme.Greeter' && sha256 === sha ? 'failed' : undefined);
}

/** VERIFY lines the agent got for Greeter with `bytes`. */
function asked(agent: FakeAgent, bytes: string): number {
  const line = ` com.acme.Greeter ${sha256Hex(Buffer.from(bytes))}`;
  return agent.received.filter((r) => r.line.startsWith('VERIFY ') && r.line.endsWith(line)).length;
}

describe('reclazz-build watch: what each cycle covers', () => {
  it('a class whose reload failed is asked again in every cycle, also one for a save in another folder, until it is proven', async () => {
    const p = watchProject();
    // A second package, compiled before the app starts: a save there makes events in its folder only.
    editSource(p, 'com.acme.web.Page', 'page-v1');
    writeClass(p.classes, 'com.acme.web.Page', 'page-v1');
    const agent = await agentFor(p, agents, { portFile: p.portFile, verifyStatus: failing('greeter-v2') });
    const w = watch(p);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    editSource(p, 'com.acme.web.Page', 'page-v2');
    await w.cyclesEnded(2);
    const askedBefore = asked(agent, 'greeter-v2');
    editSource(p, 'com.acme.web.Page', 'page-v3');
    await w.cyclesEnded(3);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    await w.cyclesEnded(4);
    const provenAsked = asked(agent, 'greeter-v3');
    editSource(p, 'com.acme.web.Page', 'page-v4');
    const cycles = await w.cyclesEnded(5);
    await w.stop();

    const status = (i: number, name: string) => cycles[i]!.result.classes.find((c) => c.className === name)?.status;
    expect([cycles[0]!.result.exitCode, status(0, 'com.acme.Greeter')], w.stderr.join('\n')).toEqual([75, 'failed']);
    // Saves in com/acme/web only: Greeter, still not live, is asked again and named; the cycle is not green.
    for (const i of [1, 2]) {
      expect(cycles[i]!.result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, provenLive: false });
      expect(status(i, 'com.acme.Greeter')).toBe('failed');
      expect(status(i, 'com.acme.web.Page')).toBe('applied');
      expect(cycles[i]!.line).toMatch(/⚠ 1 class live, 1 not proven in .*exit 75\)$/);
    }
    expect(asked(agent, 'greeter-v2')).toBeGreaterThan(askedBefore);
    // Changed and proven: from then on it is live by the record, and no longer asked.
    expect([cycles[3]!.result.exitCode, status(3, 'com.acme.Greeter')]).toEqual([0, 'applied']);
    expect(cycles[4]!.result).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true });
    expect(status(4, 'com.acme.Greeter')).toBeUndefined();
    expect(asked(agent, 'greeter-v3')).toBe(provenAsked);
  });

  it('a class file that is a symbolic link: a write through it is found in a later cycle, and its failed reload is not green', async () => {
    const p = watchProject();
    // Greeter.class is a link to a file outside the class output directory: the compiler writes through it.
    const greeter = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const target = path.join(p.dir, 'linked', 'Greeter.class');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.renameSync(greeter, target);
    fs.symlinkSync(target, greeter);
    const agent = await agentFor(p, agents, { portFile: p.portFile, verifyStatus: failing('greeter-v3') });
    const w = watch(p);
    await w.watching();
    editSource(p, 'com.acme.Greeter', 'greeter-v2');
    await w.cyclesEnded(1);
    editSource(p, 'com.acme.Greeter', 'greeter-v3');
    const cycles = await w.cyclesEnded(2);
    await w.stop();

    expect(fs.lstatSync(greeter).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('greeter-v3');
    expect(cycles[0]!.result.classes, w.stderr.join('\n')).toContainEqual(
      expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' }),
    );
    // The agent took the link as the file and failed its reload: the cycle says so.
    expect(asked(agent, 'greeter-v3')).toBeGreaterThan(0);
    expect(cycles[1]!.result).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, provenLive: false });
    expect(cycles[1]!.result.classes).toContainEqual(expect.objectContaining({ className: 'com.acme.Greeter', status: 'failed' }));
    expect(cycles[1]!.line).toMatch(/⚠ 0 classes live, 1 not proven in .*exit 75\)$/);
  });
});
