/**
 * Issue 37 on the real binary against the fake agent: one evidence rule (classes/evidence.ts)
 * for a build, `verify` and the restart, and the holes where they disagreed or claimed too much.
 * Each test failed before the rule closed its hole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeClass } from '../support/cli.js';
import { buildCommand } from '../support/project.js';
import { classFile, compileOutside, failing, reloadsEnded, run, script, sha, useProjects, WATCHER } from '../support/evidence.js';
import { LineClient } from '../fake-agent/line-client.js';
import { sleep, waitFor } from '../support/wait.js';
import { writeJar } from '../support/zip.js';

/** Longer than the agent's watcher took to dispatch a write before this issue's rule (3 s, whatever its debounceMs). */
const OLD_NOTICE_MS = 3200;

/** Resolves once `file` was last changed at least `ms` ago: a real clock must pass, and this is its only wait. */
async function olderThan(file: string, ms: number): Promise<void> {
  const left = fs.statSync(file).ctimeMs + ms - Date.now();
  if (left > 0) await sleep(left);
}

const projectWithAgent = useProjects();

describe('verify agrees with the build', () => {
  it('a folder the JVM does not load from (an IDE output beside target/classes) is not proven by its age: 75', async () => {
    const { p } = await projectWithAgent({}, (q) => writeClass(path.join(q.dir, 'out', 'production'), 'com.acme.Greeter', 'greeter-ide'));
    for (const args of [
      ['verify', 'out/production'],
      ['verify', '--classes-dir', 'out/production', 'out/production'],
    ]) {
      const result = await runCli(args, { cwd: p.dir });
      expect(result.stderr).not.toContain('✔');
      expect(result.stderr).toMatch(/not-watched\s+com\.acme\.Greeter\s+the app's JVM does not load classes from this folder/);
      expect(result.exitCode, result.stderr).toBe(75);
    }
  });

  it('right after a ✔ build, verify of its class output directory reads the same records: 0, asking nothing', async () => {
    const { p, agent } = await projectWithAgent();
    // A Maven-like build: Greeter's new bytes, and Outer written again with the bytes it had.
    const built = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer': 'outer-v1' } }));
    expect(built.exitCode, built.stderr).toBe(0);
    const sent = agent.received.length;
    const verified = await runCli(['verify', 'target/classes'], { cwd: p.dir });
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(verified.stderr).toContain('✔ proven live');
    // Each says its evidence: Greeter the build's receipt, not its age; the count says so too.
    expect(verified.stderr).toMatch(
      /unchanged\s+com\.acme\.Greeter\s+unchanged since an earlier run in this agent session proved it \(VERIFY applied/,
    );
    expect(verified.stderr).toMatch(/1 live by this agent session's record/);
    expect(agent.received.slice(sent).some((r) => r.line.startsWith('VERIFY '))).toBe(false);
  });
});

describe('the start-time rule: the path as the JVM resolves it, since it started', () => {
  it('a class output directory renamed into place after the JVM started, then changed in its entries, is not there since the start: 75', async () => {
    const { p } = await projectWithAgent({}, (q) =>
      writeClass(path.join(q.dir, 'target', 'staging'), 'com.acme.Greeter', 'greeter-staged'),
    );
    // `rm -rf classes && mv staging classes`, then an entry added and removed: the folder's mtime moves with its ctime.
    fs.renameSync(p.classes, path.join(p.dir, 'target', 'old'));
    fs.renameSync(path.join(p.dir, 'target', 'staging'), p.classes);
    fs.writeFileSync(path.join(p.classes, 'Tmp.class'), 'x');
    fs.rmSync(path.join(p.classes, 'Tmp.class'));
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('a jar earlier on the class path holding the class shadows the file in target/classes: asked, not proven by its age', async () => {
    const { p } = await projectWithAgent(
      (q) => ({ classPath: [path.join(q.dir, 'lib', 'old.jar'), q.classes] }),
      (q) => {
        fs.mkdirSync(path.join(q.dir, 'lib'));
        writeJar(path.join(q.dir, 'lib', 'old.jar'), { 'com/acme/Greeter.class': 'greeter-v0' });
      },
    );
    // Old enough for the agent's watcher to have seen it (its debounceMs, 500, and 1 s): a no-attempt
    // answer then says only that the file did not change, while the JVM runs the jar's copy.
    await olderThan(classFile(p, 'com.acme.Greeter'), 2000);
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(/not-observed\s+com\.acme\.Greeter\s+no reload attempt, but the JVM does not load this file/);
    expect(result.exitCode, result.stderr).toBe(75);
    expect(fs.existsSync(classFile(p, 'com.acme.Greeter'))).toBe(true);
  });
});

describe('identical bytes the watcher saw: only where it watched, had time to, and the receipts are bounded', () => {
  it('a watchDirs entry that did not exist when the app started is never watched: its files are not proven by a not_observed', async () => {
    const later = (q: { dir: string }) => path.join(q.dir, 'target', 'later');
    // The class output directory comes to its path only after the app started (SpringBootContext.initialize: "Watch directory not found").
    const { p } = await projectWithAgent({}, (q) => fs.renameSync(q.classes, later(q)));
    fs.renameSync(later(p), p.classes);
    await olderThan(p.classes, OLD_NOTICE_MS);
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but nothing shows the agent has watched this folder since the app started/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('a folder whose watch the OS refused (DOCTOR unwatchableDirectoryCount) is not: the agent never saw the rewrite', async () => {
    const { p } = await projectWithAgent((q) => ({ refuseWatch: [path.join(q.classes, 'com', 'acme')] }));
    compileOutside(p, 'com.acme.Greeter', 'greeter-v2');
    await olderThan(classFile(p, 'com.acme.Greeter'), OLD_NOTICE_MS);
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but the OS refused 1 of the agent's watch registrations/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it("the agent's debounceMs is honoured: an identical rewrite younger than it is not yet read as one its watcher saw", async () => {
    // debounceMs=10000 on the app's command line (the agent's `-javaagent:...=debounceMs=10000`).
    const { p } = await projectWithAgent({ ...WATCHER, watchDebounceMs: 10_000 });
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    await olderThan(classFile(p, 'com.acme.Greeter'), OLD_NOTICE_MS);
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but the file changed too recently for the agent to have noticed it \(its watcher may take 11 s\)/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('new beans the agent registered count toward its 512 receipts though HEALTH does not count them: an evicted receipt is not read as no attempt', async () => {
    const beans = Array.from({ length: 520 }, (_, i) => `com.acme.beans.Bean${i}`);
    const { p, agent } = await projectWithAgent({
      ...WATCHER,
      newBean: (name) => (name.startsWith('com.acme.beans.') ? 'registered' : undefined),
      ...failing('greeter-v2'),
    });
    // Recorded live by its age; then a failed reload and one back to those bytes: their receipt is the one pushed out.
    expect((await run(p, ['--', 'true'])).exitCode).toBe(0);
    await reloadsEnded(agent, ['com.acme.Greeter'], () => compileOutside(p, 'com.acme.Greeter', 'greeter-v2'));
    await reloadsEnded(agent, ['com.acme.Greeter'], () => compileOutside(p, 'com.acme.Greeter', 'greeter-v1'));
    const events = await LineClient.ready(agent.port);
    try {
      for (const name of beans) compileOutside(p, name, `bean ${name}`);
      const registered = () => events.events().filter((e) => e.message.startsWith('Registered new bean ')).length;
      await waitFor(
        () => registered() >= beans.length,
        () => `the agent to register ${beans.length} beans (${registered()} so far)`,
      );
    } finally {
      events.close();
    }
    // The beans go away again; their receipts pushed Greeter's failed one out of the agent's 512.
    fs.rmSync(path.join(p.classes, 'com', 'acme', 'beans'), { recursive: true });
    await olderThan(classFile(p, 'com.acme.Greeter'), OLD_NOTICE_MS);
    const result = await run(p, ['--', 'true']);
    expect(result.stderr).not.toContain('✔');
    expect(result.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt with these bytes, but .*a receipt may have been evicted.*a class may have come and gone unrecorded/,
    );
    // Its count is below the 512 it keeps: what may be evicted comes from what HEALTH does not count.
    expect(result.stderr).toMatch(
      /a receipt may have been evicted: the agent counts only \d+ reload attempts in this app session \(it keeps 512 receipts\)/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe('a class the JVM has not loaded: by DIAGNOSE of that very file', () => {
  it('DIAGNOSE of another class with the same simple name (its search by file name) does not vouch for a registered bean', async () => {
    const { p } = await projectWithAgent((q) => {
      fs.mkdirSync(path.join(q.dir, 'lib', 'classes'), { recursive: true });
      return {
        watchDirs: [path.join(q.dir, 'lib', 'classes'), q.classes],
        newBean: (name) => (name === 'com.acme.Foo' ? 'registered' : undefined),
      };
    });
    const other = path.join(p.dir, 'lib', 'classes', 'com', 'other', 'Foo.class');
    const build = [
      '--',
      'sh',
      '-c',
      `mkdir -p ${path.dirname(other)} && printf other > ${other} && printf foo > ${classFile(p, 'com.acme.Foo')}`,
    ];
    const result = await run(p, build);
    expect(result.stderr).not.toContain('✔');
    // DIAGNOSE's first file is the other Foo, whose class the JVM has not loaded: no word about this one.
    expect(result.stderr).toMatch(/unverified\s+com\.acme\.Foo\s.*DIAGNOSE: Compiled file: \S+\/com\/other\/Foo\.class/);
    expect(result.stderr).not.toMatch(/added\s+com\.acme\.Foo/);
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe('restart-required, from the receipt of the bytes on disk only', () => {
  it("PENDING is the session's history: an unrelated batch warning's unverified does not run --restart-command", async () => {
    const change = { from: 'com.acme.Base', to: 'com.acme.Other' };
    const { p } = await projectWithAgent({
      restartRequired: (name, hash) => (name === 'com.acme.Greeter' && hash === sha('greeter-v2') ? change : undefined),
      verifyStatus: (_name, hash) => (hash === sha('greeter-v3') ? 'unverified' : undefined),
    });
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(first.stderr).toMatch(/restart-required\s+com\.acme\.Greeter/);
    const marker = path.join(p.dir, 'restarted');
    const second = await run(p, [
      '--restart-command',
      `touch ${marker}`,
      '--restart-timeout',
      '1000',
      ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } }),
    ]);
    expect(second.stderr).toMatch(/unverified\s+com\.acme\.Greeter\s+WARN: Reload of com\.acme\.Greeter finished with a warning/);
    expect(second.stderr).toContain('PENDING lists it from earlier in this agent session (history, not these bytes)');
    expect(second.stderr).not.toContain('need an app restart');
    expect(fs.existsSync(marker)).toBe(false);
    expect(second.exitCode, second.stderr).toBe(75);
  });
});

describe('the words say which evidence each class has', () => {
  it("an applied receipt from an earlier build is said to be one, not this build's reload", async () => {
    const { p } = await projectWithAgent();
    const first = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(first.exitCode, first.stderr).toBe(0);
    // The same bytes written again: asked once, the agent's receipt is the earlier build's.
    const second = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(second.stderr).toMatch(
      /applied\s+com\.acme\.Greeter\s+applied earlier in this agent session \(at \d\d:\d\d:\d\d UTC\), not by this build/,
    );
    expect(second.exitCode, second.stderr).toBe(0);
  });
});

describe('a build that writes every class file again, with the bytes they had', () => {
  it('(an agent with autoCompile=true, known from its receipts) a class not proven before is not "changed too recently" forever: its bytes are there since before the build, though after the app started, so not proven by no attempt', async () => {
    const { p } = await projectWithAgent((q) => ({ ...WATCHER, autoCompile: true, agentArgs: `watchDirs=${q.classes},debounceMs=50` }));
    const files = ['com.acme.Greeter', 'com.acme.Outer', 'com.acme.Outer$Inner'].map((name) => classFile(p, name));
    const rewriteAll = script(`for (const f of ${JSON.stringify(files)}) fs.writeFileSync(f, fs.readFileSync(f));`);
    // Written again after the app started, with the bytes it loaded: nothing records what the app has for it.
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    // Its build writes it again at once: "changed too recently", unless the run came so late that its bytes from before count.
    await run(p, rewriteAll);
    await olderThan(files[0]!, OLD_NOTICE_MS);
    const second = await run(p, rewriteAll);
    expect(second.stderr).not.toMatch(/too recently/);
    expect(second.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but these bytes came to the file after the app started/,
    );
    expect(second.stderr).toMatch(/unchanged\s+com\.acme\.Outer\s/);
    expect(second.exitCode, second.stderr).toBe(75);
    await olderThan(files[0]!, OLD_NOTICE_MS);
    const third = await run(p, rewriteAll);
    expect(third.stderr).not.toMatch(/too recently/);
    expect(third.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but these bytes came to the file after the app started/,
    );
    expect(third.exitCode, third.stderr).toBe(75);
  });
});
