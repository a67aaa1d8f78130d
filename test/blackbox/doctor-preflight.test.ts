/**
 * `doctor` as a pre-flight check (CI): exit 75 when it finds what will keep a build's classes
 * from being proven (a class output directory NOT watched, reloads paused, a hold this checkout
 * does not own, a legacy hold, the watcher not running), 0 otherwise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineClient } from '../fake-agent/line-client.js';
import { useFakeAgents } from '../support/agents.js';
import { runCli, tempDir, writeClass } from '../support/cli.js';

const startAgent = useFakeAgents({ heartbeatMs: 0 });

async function withAgent(options: Parameters<typeof startAgent>[1] = {}) {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.App', 'app-v1');
  const agent = await startAgent({ dir, classes }, options);
  return { dir, classes, agent };
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('doctor exits 75 when a build here could not be proven', () => {
  it('a class output directory NOT watched: 75, doctor-findings in --json; the table still on stdout', async () => {
    const { dir } = await withAgent();
    writeClass(path.join(dir, 'build', 'classes', 'java', 'main'), 'com.acme.Other', 'x');
    const run = await runCli(['doctor'], { cwd: dir });
    expect(run.exitCode).toBe(75);
    expect(run.stdout).toMatch(/^agent\s+1\.4\.0-fake/m);
    expect(run.stdout).toContain('1 of 2 class output directories here NOT watched');
    const json = await runCli(['doctor', '--json'], { cwd: dir });
    expect(json.exitCode).toBe(75);
    expect(lastJson(json.stdout)).toMatchObject({ action: 'doctor', reason: 'doctor-findings', exitCode: 75 });
  });

  it('reloads paused: 75; resumed: 0', async () => {
    const { dir } = await withAgent();
    expect((await runCli(['pause'], { cwd: dir })).exitCode).toBe(0);
    const paused = await runCli(['doctor'], { cwd: dir });
    expect(paused.exitCode).toBe(75);
    expect(paused.stdout).toContain('PAUSED');
    // A finding that ends 75 says what to do next, as any refusal does.
    expect(paused.stdout).toMatch(/^next: reclazz-build resume$/m);
    expect((await runCli(['resume'], { cwd: dir })).exitCode).toBe(0);
    expect((await runCli(['doctor'], { cwd: dir })).exitCode).toBe(0);
  });

  it("another owner's named hold: 75, saying a build here waits for it; released: 0", async () => {
    const { dir, agent } = await withAgent();
    const ide = await LineClient.ready(agent.port);
    try {
      await ide.ask('BUILD started request=ide-1 owner=the-ide', 'BUILD_ACK', 'ide-1');
      const held = await runCli(['doctor'], { cwd: dir });
      expect(held.exitCode).toBe(75);
      expect(held.stdout).toContain("a named build this checkout's .reclazz/owner.json does not record as its own");
      await ide.ask('BUILD ok request=ide-2 owner=the-ide', 'BUILD_ACK', 'ide-2');
    } finally {
      ide.close();
    }
    expect((await runCli(['doctor'], { cwd: dir })).exitCode).toBe(0);
  });

  it("a run here refused by another owner's hold leaves it another owner's: doctor still 75, no later run recovers it", async () => {
    const { dir, agent } = await withAgent();
    expect((await runCli(['--', 'true'], { cwd: dir })).exitCode).toBe(0);
    const ide = await LineClient.ready(agent.port);
    try {
      await ide.ask('BUILD started request=ide-1 owner=the-ide', 'BUILD_ACK', 'ide-1');
      const refused = await runCli(['--wait', '300', '--', 'true'], { cwd: dir });
      expect(refused.exitCode).toBe(69);
      const owner = JSON.parse(fs.readFileSync(path.join(dir, '.reclazz', 'owner.json'), 'utf8')) as { held: boolean };
      expect(owner.held).toBe(false);
      const held = await runCli(['doctor'], { cwd: dir });
      expect(held.stdout).toContain("a named build this checkout's .reclazz/owner.json does not record as its own");
      expect(held.exitCode).toBe(75);
      const again = await runCli(['--wait', '300', '--', 'true'], { cwd: dir });
      expect(again.stderr).not.toContain('recovering');
      expect(again.exitCode).toBe(69);
    } finally {
      ide.close();
    }
  });

  it('a legacy hold: 75', async () => {
    const { dir, agent } = await withAgent();
    const old = await LineClient.ready(agent.port);
    try {
      old.send('BUILD started');
      const held = await runCli(['doctor'], { cwd: dir });
      expect(held.exitCode).toBe(75);
      expect(held.stdout).toContain('legacy (unowned) build');
    } finally {
      old.close();
    }
  });

  it('the hold a failed build of this checkout left: 0 (the next run here recovers it)', async () => {
    const { dir, classes } = await withAgent();
    const file = path.join(classes, 'com', 'acme', 'App.class');
    const failing = await runCli(
      ['--', process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(file)}, 'half'); process.exit(1)`],
      {
        cwd: dir,
      },
    );
    expect(failing.exitCode, failing.stderr).toBe(1);
    const run = await runCli(['doctor'], { cwd: dir });
    expect(run.stdout).toMatch(/^build hold\s+named$/m);
    // Told with the way out: nothing reloads (an outside compile neither) until a build here succeeds.
    expect(run.stdout).toContain("the agent holds this checkout's build (a build here is running, or the last one failed");
    expect(run.stdout).toMatch(/note: unless a build here is running: fix the build and run it again through reclazz-build/);
    expect(run.exitCode, run.stdout).toBe(0);
  });

  it('the watcher not started yet: 75', async () => {
    const { dir } = await withAgent({ watcherStartMs: Infinity });
    const run = await runCli(['doctor'], { cwd: dir });
    expect(run.exitCode).toBe(75);
    expect(run.stdout).toContain("the agent's file watcher is starting");
  });
});
