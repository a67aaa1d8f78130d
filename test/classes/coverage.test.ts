/** The agent's watched directories seen from here: class folders from the agent, this project's, another app's. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentClassDirs,
  agentView,
  classPathDirs,
  classWatched,
  isForeignAgent,
  missingWatchedDirs,
  onClassPath,
  watchCoverage,
} from '../../src/classes/coverage.js';
import { findClassDirs } from '../../src/classes/dirs.js';
import { tempDir, writeClass } from '../support/cli.js';

const doctor = (watched: string[], workingDirectory: string, truncated = false) => ({
  watchedDirectories: watched,
  watchedDirectoryCount: watched.length,
  watchSampleTruncated: truncated,
  workingDirectory,
  watcherState: 'watching',
  unwatchableDirectoryCount: 0,
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

  it("takes the class path's folders inside the project holding class files, watched or not, and none around or beside a known one", () => {
    const dir = tempDir();
    const outside = tempDir();
    const at = (...parts: string[]) => path.join(dir, ...parts);
    writeClass(at('out', 'production', 'app'), 'x.A', 'a');
    writeClass(at('target', 'classes'), 'x.B', 'b');
    writeClass(path.join(outside, 'classes'), 'x.C', 'c');
    fs.mkdirSync(at('build', 'resources', 'main'), { recursive: true });
    fs.writeFileSync(at('lib.jar'), '');
    const classPath = [
      dir,
      at('target'),
      at('lib.jar'),
      at('build', 'resources', 'main'),
      path.join(outside, 'classes'),
      at('out', 'production', 'app'),
    ];
    const nothing = { roots: [], from: 'watchDirs' as const, excludePatterns: [], autoCompile: false, classPath };
    const view = agentView(doctor([], dir), [], nothing);
    // `.` (the project folder itself) holds every other one; target holds the known target/classes.
    expect(classPathDirs(view, [at('target', 'classes')], [dir])).toEqual([at('out', 'production', 'app')]);
    expect(classPathDirs(view, [at('target', 'classes')], [dir, outside])).toEqual([
      path.join(outside, 'classes'),
      at('out', 'production', 'app'),
    ]);
  });

  it('takes a class path folder outside the project holding class files when the agent may watch it: not all it watches is known', () => {
    const dir = tempDir();
    const outside = path.join(tempDir(), 'classes');
    writeClass(outside, 'x.C', 'c');
    writeClass(path.join(dir, 'target', 'classes'), 'x.B', 'b');
    const known = [path.join(dir, 'target', 'classes')];
    const classPath = [outside, known[0]!];
    // The agent's options not readable (attached at run time): the JVM's class path alone, and DOCTOR lists nothing yet.
    expect(classPathDirs(agentView(doctor([], dir), [], { classPath }), known, [dir])).toEqual([outside]);
    // Its truncated sample lists a folder sorting after it, not it: by the sample's order it is not registered.
    const sample = agentView(doctor([`${outside}~`], dir, true), [], { classPath });
    expect(classPathDirs(sample, known, [dir])).toEqual([]);
    // All it watches known, and not that folder: a copy there never reloads, and the folder is not the app's.
    const options = { roots: [known[0]!], from: 'watchDirs' as const, excludePatterns: [], autoCompile: false, classPath };
    expect(classPathDirs(agentView(doctor([], dir), [], options), known, [dir])).toEqual([]);
  });

  it("is another app's only with a complete sample, nothing of the project's watched and a working directory outside", () => {
    const project = tempDir();
    const other = tempDir();
    const classes = [path.join(project, 'target', 'classes')];
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], other), []), [project], classes)).toBe(true);
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], other, true), []), [project], classes)).toBe(false);
    expect(isForeignAgent(agentView(doctor([path.join(other, 'target', 'classes')], project), []), [project], classes)).toBe(false);
    expect(isForeignAgent(agentView(doctor([classes[0]!], other), []), [project], classes)).toBe(false);
    // Its options say it watches nothing (every watchDirs= entry missing): nothing says whose it is.
    const nothing = { roots: [], from: 'watchDirs' as const, excludePatterns: [], autoCompile: false, classPath: [] };
    expect(isForeignAgent(agentView(doctor([], other), [], nothing), [project], classes)).toBe(false);
  });
});

describe("DOCTOR's registrations, the JVM's options and the sample's order", () => {
  it('a whole sample of registrations: its roots are the folders whose parent is not registered, without the derived resources folder', () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    const resources = path.join(dir, 'src', 'main', 'resources');
    const listed = [
      classes,
      path.join(classes, 'com'),
      path.join(classes, 'com', 'acme'),
      resources,
      path.join(resources, 'static'),
    ].sort();
    const view = agentView(doctor(listed, dir), []);
    expect(view).toMatchObject({ complete: true, from: 'doctor' });
    expect(view.watched.map((w) => w.local)).toEqual([classes]);
    // A new package folder the build makes lies under the root: watched.
    expect(classWatched(view, path.join(classes, 'org', 'new', 'B.class'))).toBe(true);
    expect(classWatched(view, path.join(dir, 'lib', 'target', 'classes', 'a', 'C.class'))).toBe(false);
  });

  it("the JVM's options decide first, excludePatterns included; autoCompile leaves everything unknown", () => {
    const dir = tempDir();
    const app = path.join(dir, 'app', 'target', 'classes');
    const lib = path.join(dir, 'lib', 'target', 'classes');
    const truncated = doctor([path.join(dir, 'app', 'src')], dir, true);
    const options = {
      roots: [app],
      from: 'watchDirs' as const,
      excludePatterns: ['*Test.class'],
      autoCompile: false,
      classPath: [app, lib],
    };
    const view = agentView(truncated, [], options);
    expect(view).toMatchObject({ complete: true, from: 'options' });
    expect(watchCoverage([app, lib], view).map((c) => c.watched)).toEqual([true, false]);
    expect(classWatched(view, path.join(app, 'a', 'ATest.class'))).toEqual({ excludedBy: '*Test.class' });
    expect(classWatched(view, path.join(lib, 'a', 'B.class'))).toBe(false);
    // Its app loads lib's classes though the agent does not watch them; a folder around one is no class path root.
    expect([app, lib, path.join(dir, 'lib')].map((d) => onClassPath(view, d))).toEqual([true, true, false]);
    const compiling = agentView(truncated, [], { roots: [app], from: 'watchDirs', excludePatterns: [], autoCompile: true, classPath: [] });
    expect(watchCoverage([app, lib], compiling).map((c) => c.watched)).toEqual([null, null]);
    expect(classWatched(compiling, path.join(lib, 'a', 'B.class'))).toBeNull();
  });

  it('a truncated sample: a folder that, with every folder above it, sorts at or before its last entry and is not listed is not registered', () => {
    const dir = tempDir();
    const listed = Array.from({ length: 8 }, (_, i) => path.join(dir, 'm', 'target', 'classes', `p${i}`));
    const view = agentView({ ...doctor(listed, dir, true), watchedDirectoryCount: 30 }, []);
    expect(view).toMatchObject({ complete: false, from: 'sample' });
    // "a" sorts before "m": not registered. "z" sorts after the last: unknown. Listed: watched.
    expect(classWatched(view, path.join(dir, 'a', 'target', 'classes', 'x', 'A.class'))).toBe(false);
    expect(classWatched(view, path.join(dir, 'z', 'target', 'classes', 'x', 'A.class'))).toBeNull();
    expect(classWatched(view, path.join(dir, 'm', 'target', 'classes', 'p3', 'A.class'))).toBe(true);
    // Class output directories are judged alike.
    expect(watchCoverage([path.join(dir, 'a', 'classes'), path.join(dir, 'z', 'classes')], view).map((c) => c.watched)).toEqual([
      false,
      null,
    ]);
    // Through --path-map: the order is the agent's paths'.
    const mapped = agentView({ ...doctor(['/app/m/x', '/app/m/y'], '/app', true), watchedDirectoryCount: 9 }, [
      { agent: '/app', local: dir },
    ]);
    expect(classWatched(mapped, path.join(dir, 'a', 'A.class'))).toBe(false);
    expect(classWatched(mapped, path.join(dir, 'n', 'A.class'))).toBeNull();
  });

  it('a watcher still starting lists nothing, and says nothing', () => {
    const view = agentView({ ...doctor([], '/'), watcherState: 'starting' }, []);
    expect(view).toMatchObject({ complete: false, from: 'none' });
    expect(classWatched(view, '/p/target/classes/a/A.class')).toBeNull();
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
