/**
 * What a run says when evidence is missing or VERIFY cannot prove a change (issue 11, "The
 * rule" and "Also"), on the real binary against the fake agent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCommand } from '../support/project.js';
import { classFile, compileOutside, run, script, sha, useProjects } from '../support/evidence.js';
import { sleep } from '../support/wait.js';

const projectWithAgent = useProjects();

/** Longer than the agent's watcher may take to notice a rewrite (classes/evidence.ts WATCHER_NOTICE_MS). */
const NOTICED_MS = 3200;

describe('a class file rewritten with the same bytes after the app started', () => {
  // No attempt says the bytes are the watcher's baseline, taken when it armed after the start; these came after the
  // start, so they may be a copy that kept an older mtime (cp -p) made while it armed, then touched: it never loaded them.
  it('is asked once, and no attempt does not prove it: its bytes came after the app started, before any run recorded what it had; run again, still not', async () => {
    const { p } = await projectWithAgent();
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    compileOutside(p, 'com.acme.Outer', 'outer-v1');
    await sleep(NOTICED_MS);
    const result = await run(p, buildCommand(p));
    for (const name of ['Greeter', 'Outer'])
      expect(result.stderr).toMatch(
        new RegExp(`not-observed\\s+com\\.acme\\.${name}\\s+no reload attempt, but these bytes came to the file after the app started`),
      );
    expect(result.stderr).not.toContain('✔');
    // The way back is named: no answer of the agent can prove these, only a restart or a change.
    expect(result.stderr).toMatch(
      /next: the class files not proven were written after the app started \(a build outside reclazz-build, .*restart the app \(or change those classes\)/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
    const next = await run(p, buildCommand(p));
    expect(next.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but these bytes came to the file after the app started/,
    );
    expect(next.exitCode, next.stderr).toBe(75);
  });

  it('rewritten just before the run: the watcher may not have seen it yet, so it is not proven', async () => {
    // Its debounceMs (on the app's command line) long enough that no run under load outlasts it.
    const { p } = await projectWithAgent({ watchDebounceMs: 20_000 });
    compileOutside(p, 'com.acme.Greeter', 'greeter-v1');
    const result = await run(p, buildCommand(p));
    expect(result.stderr).toMatch(/not-observed\s+com\.acme\.Greeter\s+no reload attempt, but the file changed too recently/);
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
  });
});

describe("the app's start time unknown", () => {
  it('a pid not visible here: said once, every class file without a record is asked, and identical bytes cannot count: nothing shows their folder watched since the app started', async () => {
    const { p } = await projectWithAgent({ reportedPid: '999999999' });
    await sleep(NOTICED_MS);
    const result = await run(p, buildCommand(p));
    expect(result.stderr).toContain(
      "warning: the app's process 999999999 is not visible here (a container or another host?), so when the app started is unknown",
    );
    expect(result.stderr.match(/so when the app started is unknown/g)).toHaveLength(1);
    expect(result.stderr).toMatch(
      /\(of \d+\); 3 others asked once whether the app runs their bytes: rewritten since proven live, or never proven$/m,
    );
    expect(result.stderr).toMatch(
      /not-observed\s+com\.acme\.Greeter\s+no reload attempt, but nothing shows the agent has watched this folder since the app started/,
    );
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it("a process that runs in another folder than the agent says: not the app; its classes are not taken as live from that process's start, each is asked about", async () => {
    const { p, agent } = await projectWithAgent({ reportedWorkingDirectory: '/srv/elsewhere' });
    const result = await run(p, buildCommand(p));
    expect(result.stderr).toContain(
      `process ${agent.jvm!.pid} here runs in ${fs.realpathSync(p.dir)}, not in the agent's working directory /srv/elsewhere`,
    );
    // Had its start counted, nothing would be asked ("nothing to prove", as for the app itself).
    // What the answers prove then depends on how recently the files were written (the tests above).
    expect(result.stderr).toMatch(
      /\(of \d+\); 3 others asked once whether the app runs their bytes: rewritten since proven live, or never proven$/m,
    );
    expect(result.stderr).not.toContain('nothing to prove');
    const asked = agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' ')[2]);
    expect(new Set(asked)).toEqual(new Set(['com.acme.Greeter', 'com.acme.Outer', 'com.acme.Outer$Inner']));
  });
});

describe('what VERIFY cannot prove', () => {
  it("a superclass change is restart-required by the agent's own words in its receipt (agent StructuralReloader), exit 75", async () => {
    const change = { from: 'com.acme.Base', to: 'com.acme.Other' };
    const { p } = await projectWithAgent({ restartRequired: (_name, hash) => (hash === sha('greeter-v2') ? change : undefined) });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(result.stderr).toMatch(
      /restart-required\s+com\.acme\.Greeter\s+WARN: com\.acme\.Greeter: superclass change not applied; restart required\. Still extends Base instead of Other\./,
    );
    expect(result.stderr).toContain('1 class(es) need an app restart');
    expect(result.exitCode, result.stderr).toBe(75);
  });

  it('resource files the build wrote in a class output directory are listed as not checked; the classes decide the exit', async () => {
    const { p } = await projectWithAgent();
    const properties = path.join(p.classes, 'app.properties');
    const build = script(
      `fs.writeFileSync(${JSON.stringify(classFile(p, 'com.acme.Greeter'))}, 'greeter-v2');` +
        `fs.writeFileSync(${JSON.stringify(properties)}, 'greeting=hi');`,
    );
    const result = await run(p, ['--json', ...build]);
    expect(result.stderr).toContain(`not checked      ${properties}  not a class file: VERIFY cannot prove it`);
    expect(result.exitCode, result.stderr).toBe(0);
    const last = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    expect(last).toMatchObject({ provenLive: true, resources: [properties], changes: { resources: 1 } });
  });

  it('a class file that moves again after VERIFY applied it is never live: "rewritten", exit 75', async () => {
    let greeter = '';
    const { p } = await projectWithAgent({
      intercept: (cmd) => {
        // The class file is written again (same bytes) while the run asks about it.
        if (cmd.verb === 'VERIFY' && cmd.words[2] === 'com.acme.Greeter') fs.writeFileSync(greeter, 'greeter-v2');
        return undefined;
      },
    });
    greeter = classFile(p, 'com.acme.Greeter');
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }));
    expect(result.stderr).toMatch(/rewritten\s+com\.acme\.Greeter\s+the class file changed again after it was checked/);
    expect(result.stderr).not.toContain('✔');
    expect(result.exitCode, result.stderr).toBe(75);
  });
});
