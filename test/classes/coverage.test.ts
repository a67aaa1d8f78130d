/** The agent's watched directories seen from here: class folders from the agent, this project's, another app's. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentClassDirs, agentView, isForeignAgent, missingWatchedDirs, watchCoverage } from '../../src/classes/coverage.js';
import { findClassDirs } from '../../src/classes/dirs.js';
import { tempDir, writeClass } from '../support/cli.js';

const doctor = (watched: string[], workingDirectory: string, truncated = false) => ({
  watchedDirectories: watched,
  watchedDirectoryCount: watched.length,
  watchSampleTruncated: truncated,
  workingDirectory,
  watcherState: 'watching',
});

describe('agentView', () => {
  it('translates by the path map and says what each watched directory is here', () => {
    const dir = tempDir();
    writeClass(path.join(dir, 'out', 'a'), 'x.A', 'a');
    fs.mkdirSync(path.join(dir, 'empty'));
    const view = agentView(doctor(['/app/out/a', '/app/empty', '/app/gone'], '/app'), [{ agent: '/app', local: dir }]);
    expect(view.watched.map((w) => [w.local, w.here])).toEqual([
      [path.join(dir, 'out', 'a'), 'classes'],
      [path.join(dir, 'empty'), 'empty'],
      [path.join(dir, 'gone'), 'missing'],
    ]);
    expect(view.workingDirectory).toBe(dir);
    expect(view.complete).toBe(true);
    expect(missingWatchedDirs(view)).toEqual([path.join(dir, 'gone')]);
    expect(agentView({ ...doctor(['/a'], '/'), watchedDirectoryCount: 9 }, []).complete).toBe(false);
    // Still starting, or listing nothing: no evidence of what it watches.
    expect(agentView({ ...doctor(['/a'], '/'), watcherState: 'starting' }, []).complete).toBe(false);
    expect(agentView(doctor([], '/'), []).complete).toBe(false);
  });

  it('counts a folder as watched when the agent names it through a symbolic link', () => {
    const dir = tempDir();
    const real = path.join(dir, 'real', 'classes');
    fs.mkdirSync(real, { recursive: true });
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    const view = agentView(doctor([real], dir), []);
    expect(watchCoverage([path.join(dir, 'link', 'classes')], view)).toEqual([{ dir: path.join(dir, 'link', 'classes'), watched: true }]);
  });

  it('takes class folders from a complete sample only, and none that overlaps a known one', () => {
    const dir = tempDir();
    const out = path.join(dir, 'out');
    writeClass(out, 'x.A', 'a');
    writeClass(path.join(dir, 'target', 'classes'), 'x.B', 'b');
    const known = [path.join(dir, 'target', 'classes')];
    expect(agentClassDirs(agentView(doctor([out, path.join(dir, 'target')], dir), []), known, [dir])).toEqual([out]);
    expect(agentClassDirs(agentView(doctor([out], dir, true), []), known, [dir])).toEqual([]);
    // A folder holding the project (here the project folder itself, or /) is not a class output directory.
    expect(agentClassDirs(agentView(doctor([path.dirname(dir), dir], dir), []), [], [dir])).toEqual([]);
  });

  it("is another app's only with a complete sample, nothing of the project's watched and a working directory outside", () => {
    const project = tempDir();
    const other = tempDir();
    const classes = [path.join(project, 'target', 'classes')];
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], other), []), [project], classes)).toBe(true);
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], other, true), []), [project], classes)).toBe(false);
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], project), []), [project], classes)).toBe(false);
    expect(isForeignAgent(agentView(doctor([classes[0]!], other), []), [project], classes)).toBe(false);
  });
});

describe('findClassDirs in an SAP Commerce tree', () => {
  it('finds modelclasses and both class folders of each custom extension, also in group folders', () => {
    const hybris = path.join(tempDir(), 'hybris');
    const ext = (rel: string) => {
      fs.mkdirSync(path.join(hybris, 'bin', 'custom', rel, 'classes'), { recursive: true });
      fs.mkdirSync(path.join(hybris, 'bin', 'custom', rel, 'web', 'webroot', 'WEB-INF', 'classes'), { recursive: true });
      fs.writeFileSync(path.join(hybris, 'bin', 'custom', rel, 'extensioninfo.xml'), '<extensioninfo/>');
    };
    ext('acmecore');
    ext(path.join('group', 'acmeweb'));
    fs.mkdirSync(path.join(hybris, 'bin', 'platform', 'bootstrap', 'modelclasses'), { recursive: true });
    // Not an extension (no extensioninfo.xml): its classes folder is not one.
    fs.mkdirSync(path.join(hybris, 'bin', 'custom', 'notes', 'classes'), { recursive: true });
    const custom = path.join(hybris, 'bin', 'custom');
    const expected = [
      path.join(custom, 'acmecore', 'classes'),
      path.join(custom, 'acmecore', 'web', 'webroot', 'WEB-INF', 'classes'),
      path.join(custom, 'group', 'acmeweb', 'classes'),
      path.join(custom, 'group', 'acmeweb', 'web', 'webroot', 'WEB-INF', 'classes'),
      path.join(hybris, 'bin', 'platform', 'bootstrap', 'modelclasses'),
    ].sort();
    expect(findClassDirs(hybris, 'command')).toEqual(expected);
    expect(findClassDirs(path.dirname(hybris), 'mvn')).toEqual(expected);
  });
});
