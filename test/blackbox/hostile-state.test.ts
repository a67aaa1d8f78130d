/**
 * The state folder against a checkout that points it elsewhere, through the real binary: a
 * symbolic link in the place of `.reclazz`, `owner.json`, `classes.idx` or `build.lock` is
 * refused with a state error (69) naming it before the build runs, and nothing where it points
 * is read, written or deleted; temp files an interrupted write left are removed by the next run;
 * a working directory that was deleted is a usage error (2), not a bug.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { useFakeAgents } from '../support/agents.js';
import { BIN, cliEnv, runCli, writeClass } from '../support/cli.js';
import { buildCommand, buildRan, hasStackTrace, type Project } from '../support/project.js';
import { scratchDir } from '../support/scratch.js';

const agentFor = useFakeAgents({ heartbeatMs: 0 });

function project(): Project {
  const dir = scratchDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  return {
    dir,
    classes,
    marker: path.join(dir, 'build-ran'),
    ended: path.join(dir, 'build-ended.json'),
    signalLog: path.join(dir, 'build-signals.log'),
    portFile: path.join(dir, '.reclazz', 'agent.port'),
  };
}

/** Every file below `dir` (links not followed) with its content, `<dir>` for folders, `-> target` for links. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      const key = path.relative(dir, file);
      if (entry.isSymbolicLink()) out[key] = `-> ${fs.readlinkSync(file)}`;
      else if (entry.isDirectory()) {
        out[key] = '<dir>';
        walk(file);
      } else out[key] = fs.readFileSync(file, 'latin1');
    }
  };
  walk(dir);
  return out;
}

/** A folder outside the project holding what a followed link would read, replace or delete. */
function outside(): string {
  const dir = scratchDir();
  fs.writeFileSync(path.join(dir, 'owner.json'), '{"owner":"someone-elses","sessionId":"x","port":1,"updatedAt":""}\n');
  fs.writeFileSync(path.join(dir, 'classes.idx'), 'not ours');
  fs.writeFileSync(path.join(dir, 'classes.json'), '{"version":2,"files":[]}');
  fs.mkdirSync(path.join(dir, 'build.lock'));
  fs.writeFileSync(path.join(dir, 'build.lock.holder'), '{"pid":1,"host":"elsewhere"}');
  return dir;
}

const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a symbolic link in the state folder is refused (69), naming it; its target is untouched', () => {
  const cases: Array<{ name: string; link: (p: Project, target: string) => string }> = [
    { name: '.reclazz', link: (p) => path.join(p.dir, '.reclazz') },
    { name: 'owner.json', link: (p) => path.join(p.dir, '.reclazz', 'owner.json') },
    { name: 'classes.idx', link: (p) => path.join(p.dir, '.reclazz', 'classes.idx') },
    { name: 'build.lock', link: (p) => path.join(p.dir, '.reclazz', 'build.lock') },
    // Beside the four: the lock's holder file, and the JSON state of earlier versions (removed when the index is written).
    { name: 'build.lock.holder', link: (p) => path.join(p.dir, '.reclazz', 'build.lock.holder') },
    { name: 'classes.json', link: (p) => path.join(p.dir, '.reclazz', 'classes.json') },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const p = project();
      const target = outside();
      const agent = await agentFor(p, { portFile: path.join(scratchDir(), 'agent.port') });
      const link = c.link(p, target);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      // The folder for .reclazz; for a file, the file of that name out there.
      fs.symlinkSync(c.name === '.reclazz' ? target : path.join(target, c.name), link);
      const before = tree(target);

      const run = await runCli(['--port', String(agent.port), ...buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } })], {
        cwd: p.dir,
      });
      expect(run.exitCode, run.stderr).toBe(69);
      expect(run.stderr).toMatch(
        new RegExp(
          `✘ not run: cannot write ${esc(link)} \\(it is a symbolic link, and reclazz-build never follows links in its state folder: remove the link\\)`,
        ),
      );
      expect(hasStackTrace(run.stderr)).toBe(false);
      expect(buildRan(p)).toBe(false);
      expect(agent.received.filter((r) => r.line.startsWith('BUILD'))).toEqual([]);
      expect(tree(target)).toEqual(before);
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);

      const json = await runCli(['--json', '--port', String(agent.port), ...buildCommand(p)], { cwd: p.dir });
      expect(json.exitCode).toBe(69);
      expect(JSON.parse(json.stdout.trim().split('\n').at(-1)!)).toMatchObject({ reason: 'state-error', exitCode: 69 });
      expect(tree(target)).toEqual(before);
    });
  }
});

describe('temp files of an interrupted write', () => {
  it('are removed by the next run; other files in the state folder stay', async () => {
    const p = project();
    const agent = await agentFor(p);
    const state = path.join(p.dir, '.reclazz');
    const left = [
      'classes.idx.4242',
      'owner.json.17',
      'classes.idx.tmp-99-0badf00d',
      'owner.json.tmp-1234-deadbeef',
      'build.lock.holder.5150',
    ];
    const kept = ['classes.idx.bak', 'notes.txt', 'owner.json.corrupt-2025-01-01T00-00-00-000Z'];
    for (const name of [...left, ...kept]) fs.writeFileSync(path.join(state, name), 'x');
    const run = await runCli(buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }), { cwd: p.dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const names = fs.readdirSync(state);
    for (const name of left) expect(names).not.toContain(name);
    for (const name of kept) expect(names).toContain(name);
    expect(agent.received.some((r) => r.line.startsWith('BUILD ok'))).toBe(true);
  });
});

describe('a working directory that was deleted', () => {
  /** Runs the CLI with `args` in a folder that is removed just before it starts. */
  async function inDeletedDir(args: string[]) {
    const parent = scratchDir();
    const gone = path.join(parent, 'gone');
    fs.mkdirSync(gone);
    const result = await execa('sh', ['-c', 'cd "$0" && rmdir "$0" && exec node "$@"', gone, BIN, ...args], {
      cwd: parent,
      env: cliEnv(),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 30_000,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  }

  for (const args of [['--', 'true'], ['mvn', 'compile'], ['doctor'], ['events'], ['verify'], ['status']]) {
    it(`${args.join(' ')}: exit 2 and a message saying so, not an internal error`, async () => {
      const run = await inDeletedDir(args);
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^error: the working directory no longer exists/m);
      expect(run.stderr).toMatch(/^next: cd to the project folder/m);
      expect(hasStackTrace(run.stderr)).toBe(false);
    });
  }

  it('--json: the result line says usage', async () => {
    const run = await inDeletedDir(['--json', 'doctor']);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'result', action: 'doctor', reason: 'usage', exitCode: 2 });
    const build = await inDeletedDir(['--json', '--', 'true']);
    expect(JSON.parse(build.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'result', action: 'build', reason: 'usage' });
  });
});
