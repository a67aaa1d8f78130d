/**
 * Held builds and recovery through the real binary: the owner token saved in `.reclazz/`
 * per agent session, reused without a flag, fresh for a new session, overridden by --owner
 * (and never lost to a rejected run), a corrupt state file ignored with a warning; and a hold
 * owned by someone else, waited for with progress up to --wait while `started` is retried.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { runCli } from '../support/cli.js';
import { LineClient } from '../fake-agent/line-client.js';
import {
  agentFor,
  buildCommand,
  buildRan,
  buildStartedAtMs,
  hasStackTrace,
  project,
  requestToken,
  type Project,
} from '../support/project.js';
import { waitFor } from '../support/wait.js';

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

async function setup(options: Parameters<typeof agentFor>[2] = {}): Promise<{ p: Project; agent: FakeAgent }> {
  const p = project();
  const agent = await agentFor(p, agents, { portFile: p.portFile, ...options });
  return { p, agent };
}

const ownerFile = (p: Project) => path.join(p.dir, '.reclazz', 'owner.json');
const savedOwner = (p: Project): string => (JSON.parse(fs.readFileSync(ownerFile(p), 'utf8')) as { owner: string }).owner;

describe('the owner token of a hold left behind', () => {
  it('a lost started receipt leaves a hold; the next run, without flags, reuses the saved owner and releases it', async () => {
    let first = true;
    const { p, agent } = await setup({
      intercept: (cmd) => {
        if (cmd.verb === 'BUILD' && cmd.words[1] === 'started' && first) {
          first = false;
          return { kind: 'drop' };
        }
        return undefined;
      },
    });
    const lost = await runCli(['--timeout', '1500', ...buildCommand(p)], { cwd: p.dir });
    expect(lost.exitCode, lost.stderr).toBe(69);
    const owner = savedOwner(p);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner });

    const next = await runCli(buildCommand(p, { writes: { 'com.acme.Greeter': 'v2' } }), { cwd: p.dir });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toContain(`recovering the build an earlier run left held (owner token ${owner})`);
    expect(agent.hold().kind).toBe('none');
    expect(agent.holdLog.map((h) => `${h.event}:${h.owner}`)).toEqual([
      `acquired:${owner}`,
      `reacquired:${owner}`,
      `capture-scheduled:${owner}`,
      `released:${owner}`,
    ]);
  });

  it('a different agent session (the app restarted) gets a fresh token', async () => {
    const { p, agent } = await setup();
    expect((await runCli(buildCommand(p, { exit: 1, writes: { 'com.acme.Outer': 'outer-half' } }), { cwd: p.dir })).exitCode).toBe(1);
    const before = savedOwner(p);
    await agent.restart();
    const next = await runCli(['--verbose', ...buildCommand(p)], { cwd: p.dir });
    expect(next.exitCode, next.stderr).toBe(0);
    const after = savedOwner(p);
    expect(after).not.toBe(before);
    expect(next.stderr).toContain(`owner token ${after} (new)`);
    expect(JSON.parse(fs.readFileSync(ownerFile(p), 'utf8'))).toMatchObject({ owner: after, sessionId: agent.sessionId, port: agent.port });
  });

  it('a corrupt owner.json whose session id was cut off: its token is still tried and recovers the hold', async () => {
    const { p, agent } = await setup();
    expect((await runCli(buildCommand(p, { exit: 1, writes: { 'com.acme.Outer': 'outer-half' } }), { cwd: p.dir })).exitCode).toBe(1);
    const left = savedOwner(p);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: left });
    // Cut short right after the token: the session id is gone, the token is whole.
    fs.writeFileSync(ownerFile(p), `{"owner":"${left}","sess`);
    const next = await runCli(['--verbose', ...buildCommand(p)], { cwd: p.dir });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/owner\.json is corrupt; ignoring it: moved to .*owner\.json\.corrupt-/);
    expect(next.stderr).toContain(`owner token ${left} (reused`);
    await waitFor(() => agent.hold().kind === 'none', 'the capture to release the hold');
    expect(agent.holdLog.filter((h) => h.event === 'released').map((h) => h.owner)).toEqual([left]);
  });

  it('--owner overrides the saved token, and a run whose started is rejected does not lose the saved one', async () => {
    const { p, agent } = await setup();
    expect((await runCli(buildCommand(p, { exit: 1, writes: { 'com.acme.Outer': 'outer-half' } }), { cwd: p.dir })).exitCode).toBe(1);
    const left = savedOwner(p);
    const other = await runCli(['--verbose', '--owner', 'someone-else', '--wait', '0', ...buildCommand(p)], { cwd: p.dir });
    expect(other.exitCode, other.stderr).toBe(69);
    expect(other.stderr).toContain('owner token someone-else (from --owner)');
    expect(savedOwner(p)).toBe(left);
    const recovered = await runCli(buildCommand(p), { cwd: p.dir });
    expect(recovered.exitCode, recovered.stderr).toBe(0);
    // Nothing changed, so nothing to VERIFY: the run ends at the ok receipt, before the capture releases the hold.
    await waitFor(() => agent.hold().kind === 'none', 'the capture to release the hold');
    expect(agent.holdLog.filter((h) => h.event === 'released').map((h) => h.owner)).toEqual([left]);
  });

  it('corrupt state files are ignored with a warning and rewritten whole; the old JSON class state is removed', async () => {
    const { p } = await setup();
    const state = path.dirname(ownerFile(p));
    fs.mkdirSync(state, { recursive: true });
    fs.writeFileSync(ownerFile(p), '{"owner": "half-writ');
    fs.writeFileSync(path.join(state, 'classes.idx'), 'RCLZIDX3 cut short');
    fs.writeFileSync(path.join(state, 'classes.json'), '{"version":2,"files":[]}');
    const run = await runCli(buildCommand(p), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: .*owner\.json is corrupt; ignoring it/);
    expect(run.stderr).toMatch(
      /warning: .*classes\.idx is corrupt; ignoring it \(class files are hashed again and checked, and it is rewritten\)/,
    );
    expect(savedOwner(p)).toMatch(/^[0-9a-f-]{36}$/);
    // Written by temp file and rename: nothing else is left in the state folder but the corrupt
    // owner.json, moved aside (never overwritten: it may hold the only recovery token).
    const left = fs.readdirSync(state).sort();
    expect(left.filter((f) => !f.startsWith('owner.json.corrupt-'))).toEqual(['.gitignore', 'agent.port', 'classes.idx', 'owner.json']);
    expect(left.filter((f) => f.startsWith('owner.json.corrupt-'))).toHaveLength(1);
  });
});

describe('state files that cannot be written', () => {
  it('a read-only state folder: exit 69 naming the folder and the fix, no stack trace, nothing sent, a JSON result line', async () => {
    const { p, agent } = await setup();
    const state = path.dirname(ownerFile(p));
    fs.chmodSync(p.dir, 0o755); // readable for nobody, who runs it when the tests run as root
    fs.chmodSync(state, 0o555);
    try {
      const run = await runCli(['--json', ...buildCommand(p)], { cwd: p.dir, unprivileged: true, env: { RECLAZZ_CODE_CACHE: '0' } });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(run.stderr).toContain(`cannot write ${state}`);
      expect(run.stderr).toContain('make it readable and writable for this user');
      expect(hasStackTrace(run.stderr)).toBe(false);
      expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'result', reason: 'state-error', exitCode: 69 });
      expect(buildRan(p)).toBe(false);
      expect(agent.received).toEqual([]);
    } finally {
      fs.chmodSync(state, 0o755);
    }
  });

  it('an owner.json that cannot be read is never replaced: exit 69 before anything is sent, and the hold it names is recovered once readable', async () => {
    const { p, agent } = await setup();
    const left = await runCli(buildCommand(p, { exit: 1, writes: { 'com.acme.Outer': 'outer-half' } }), { cwd: p.dir });
    expect(left.exitCode).toBe(1);
    const owner = savedOwner(p);
    const original = fs.readFileSync(ownerFile(p));
    const sent = agent.received.length;
    fs.rmSync(ownerFile(p));
    fs.mkdirSync(ownerFile(p)); // unreadable as a file, for root too
    const blocked = await runCli(buildCommand(p), { cwd: p.dir });
    expect(blocked.exitCode, blocked.stderr).toBe(69);
    expect(blocked.stderr).toContain(`cannot read ${ownerFile(p)}`);
    expect(hasStackTrace(blocked.stderr)).toBe(false);
    expect(agent.received.slice(sent).filter((r) => r.line.startsWith('BUILD'))).toEqual([]);
    fs.rmSync(ownerFile(p), { recursive: true });
    fs.writeFileSync(ownerFile(p), original);
    const again = await runCli(['--verbose', ...buildCommand(p)], { cwd: p.dir });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain(`owner token ${owner} (reused from the last run`);
  });

  it('a class index that cannot be written: refused before the hold (69), nothing held, the build does not run; fixed, the next run is plain', async () => {
    const { p, agent } = await setup();
    fs.mkdirSync(path.join(p.dir, '.reclazz', 'classes.idx', 'in-the-way'), { recursive: true });
    const run = await runCli(buildCommand(p), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(69);
    expect(run.stderr).toMatch(/cannot write .*classes\.idx/);
    expect(run.stderr).not.toContain('the hold stays');
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(buildRan(p)).toBe(false);
    expect(agent.received.filter((r) => r.line.startsWith('BUILD'))).toEqual([]);
    expect(agent.hold().kind).toBe('none');
    fs.rmSync(path.join(p.dir, '.reclazz', 'classes.idx'), { recursive: true });
    const again = await runCli(buildCommand(p), { cwd: p.dir });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('recovering');
  });
});

describe('a hold owned by someone else (the IDE)', () => {
  async function ideHolds(agent: FakeAgent): Promise<LineClient> {
    const ide = await LineClient.ready(agent.port);
    ide.send('BUILD started request=ide-1 owner=the-ide');
    await ide.next((e) => e.message.startsWith('BUILD_ACK ide-1 started'));
    return ide;
  }

  it('is waited for with progress while started is retried; when the IDE finishes, the build runs and ends 0', async () => {
    const { p, agent } = await setup();
    const ide = await ideHolds(agent);
    const from = agent.received.length;
    const running = runCli(['--wait', '15000', ...buildCommand(p, { writes: { 'com.acme.Greeter': 'v2' } })], { cwd: p.dir });
    // The IDE finishes only once our run has been turned away at least once.
    await waitFor(() => agent.holdLog.some((h) => h.event === 'rejected'), 'our started to be rejected');
    ide.send('BUILD ok request=ide-2 owner=the-ide');
    const run = await running;
    ide.close();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/waiting for the build hold, held by another owner \(the IDE or another terminal\)… \d\.\d s/);
    const starts = agent.received.slice(from).filter((r) => r.line.startsWith('BUILD started'));
    expect(starts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(starts.map((r) => requestToken(r.line))).size).toBe(starts.length);
    const released = agent.holdLog.find((h) => h.event === 'released' && h.owner === 'the-ide')!;
    expect(buildStartedAtMs(p)).toBeGreaterThanOrEqual(released.atMs);
  });

  it('after --wait it ends 69 explaining the options, the build not run', async () => {
    const { p, agent } = await setup();
    const ide = await ideHolds(agent);
    const begun = Date.now();
    const run = await runCli(['--wait', '1200', ...buildCommand(p)], { cwd: p.dir });
    ide.close();
    expect(run.exitCode, run.stderr).toBe(69);
    expect(Date.now() - begun).toBeGreaterThanOrEqual(1200);
    expect(run.stderr).toMatch(/waiting for the build hold, held by another owner/);
    expect(run.stderr).toMatch(/another owner still holds the agent's build hold after \d+ ms; the build did not run/);
    expect(run.stderr).toMatch(
      /next: let that build \(IDE or terminal\) finish, raise --wait <ms>, or restart the app if its owner is gone/,
    );
    expect(hasStackTrace(run.stderr)).toBe(false);
    expect(buildRan(p)).toBe(false);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'the-ide' });
  });
});
