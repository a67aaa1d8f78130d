/** Which folders a watch watches, on temp project trees. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findWatchSources, WatchPathError } from '../../src/watch/sources.js';
import { mkdirs, put, tempTree } from './tmp.js';

const rel = (root: string, paths: string[]) => paths.map((p) => path.relative(root, p) || '.');

describe('findWatchSources', () => {
  it('finds the conventional folders of a Maven project and its modules, only those that exist', () => {
    const root = tempTree();
    put(root, 'pom.xml');
    mkdirs(root, 'src/main/java');
    put(root, 'core/pom.xml');
    mkdirs(root, 'core/src/main/java');
    mkdirs(root, 'core/src/main/resources');
    put(root, 'web/pom.xml');
    mkdirs(root, 'web/src/main/kotlin');
    put(root, 'web/api/pom.xml'); // a nested module
    mkdirs(root, 'web/api/src/main/java');
    mkdirs(root, 'docs/src/main/java'); // no build file: not a module
    const found = findWatchSources({ projectDir: root });
    expect(rel(root, found.roots)).toEqual([
      'core/src/main/java',
      'core/src/main/resources',
      'src/main/java',
      'web/api/src/main/java',
      'web/src/main/kotlin',
    ]);
    expect(rel(root, found.modules)).toEqual(['.', 'core', 'web', 'web/api']);
    expect(found.missing).toEqual([]);
    expect(rel(root, found.outputDirs)).toContain('core/target');
    expect(rel(root, found.outputDirs)).toContain('web/api/build');
  });

  it('finds Gradle subprojects by build.gradle and build.gradle.kts', () => {
    const root = tempTree();
    put(root, 'settings.gradle.kts');
    put(root, 'app/build.gradle.kts');
    mkdirs(root, 'app/src/main/kotlin');
    put(root, 'libs/util/build.gradle');
    mkdirs(root, 'libs/util/src/main/java');
    expect(rel(root, findWatchSources({ projectDir: root }).roots)).toEqual(['app/src/main/kotlin', 'libs/util/src/main/java']);
  });

  it('does not look inside build output, tool folders, hidden folders or src for modules', () => {
    const root = tempTree();
    put(root, 'pom.xml');
    for (const skipped of ['node_modules/x', 'target/x', 'build/x', '.gradle/x', '.git/x', '.reclazz/x', 'src/it/x']) {
      put(root, `${skipped}/pom.xml`);
      mkdirs(root, `${skipped}/src/main/java`);
    }
    expect(findWatchSources({ projectDir: root }).roots).toEqual([]);
  });

  it('stops at the depth limit', () => {
    const root = tempTree();
    put(root, 'a/b/c/pom.xml');
    mkdirs(root, 'a/b/c/src/main/java');
    expect(findWatchSources({ projectDir: root, maxDepth: 2 }).roots).toEqual([]);
    expect(rel(root, findWatchSources({ projectDir: root, maxDepth: 3 }).roots)).toEqual(['a/b/c/src/main/java']);
  });

  it('does not follow symbolic links (a link loop cannot trap the walk)', () => {
    const root = tempTree();
    put(root, 'real/pom.xml');
    mkdirs(root, 'real/src/main/java');
    fs.symlinkSync(path.join(root, 'real'), path.join(root, 'linked'));
    fs.symlinkSync(root, path.join(root, 'real', 'loop'));
    expect(rel(root, findWatchSources({ projectDir: root }).roots)).toEqual(['real/src/main/java']);
  });

  it('finds SAP Commerce custom extensions below hybris/bin/custom, also in group folders, and not the rest of the platform home', () => {
    const root = tempTree();
    put(root, 'hybris/bin/custom/acmecore/extensioninfo.xml');
    mkdirs(root, 'hybris/bin/custom/acmecore/src');
    mkdirs(root, 'hybris/bin/custom/acmecore/resources');
    mkdirs(root, 'hybris/bin/custom/acmecore/gensrc');
    put(root, 'hybris/bin/custom/shop/acmestorefront/extensioninfo.xml');
    mkdirs(root, 'hybris/bin/custom/shop/acmestorefront/web/src');
    put(root, 'hybris/bin/platform/ext/core/extensioninfo.xml'); // SAP's own
    mkdirs(root, 'hybris/bin/platform/ext/core/src');
    put(root, 'hybris/data/pom.xml'); // runtime data is not searched
    mkdirs(root, 'hybris/data/src/main/java');
    const found = findWatchSources({ projectDir: root });
    expect(rel(root, found.roots)).toEqual([
      'hybris/bin/custom/acmecore/resources',
      'hybris/bin/custom/acmecore/src',
      'hybris/bin/custom/shop/acmestorefront/web/src',
    ]);
    expect(rel(root, found.modules)).toEqual(['.', 'hybris/bin/custom/acmecore', 'hybris/bin/custom/shop/acmestorefront']);
    expect(rel(root, found.outputDirs)).toContain('hybris/bin/custom/acmecore/classes');
    expect(rel(root, found.outputDirs)).toContain('hybris/bin/custom/acmecore/gensrc');
  });

  it('finds extensions when the project is the platform home (bin/custom) or the custom folder itself', () => {
    const root = tempTree();
    put(root, 'bin/custom/acmecore/extensioninfo.xml');
    mkdirs(root, 'bin/custom/acmecore/src');
    expect(rel(root, findWatchSources({ projectDir: root }).roots)).toEqual(['bin/custom/acmecore/src']);
    const custom = path.join(root, 'bin', 'custom');
    expect(rel(custom, findWatchSources({ projectDir: custom }).roots)).toEqual(['acmecore/src']);
  });

  it('adds --watch entries relative to the project, reports the missing ones, and drops roots inside others', () => {
    const root = tempTree();
    put(root, 'pom.xml');
    mkdirs(root, 'src/main/java');
    mkdirs(root, 'src/main/webapp');
    put(root, 'config/app.properties');
    const outside = tempTree();
    const found = findWatchSources({
      projectDir: root,
      extra: ['src/main/webapp', 'config/app.properties', outside, 'nope', 'src/main', 'nope'],
    });
    expect(found.roots).toEqual([path.join(root, 'config/app.properties'), path.join(root, 'src/main'), outside].sort());
    expect(found.missing).toEqual([path.join(root, 'nope')]);
  });

  it('rejects an empty or NUL --watch entry and a missing project folder, naming the fix', () => {
    const root = tempTree();
    expect(() => findWatchSources({ projectDir: root, extra: [''] })).toThrow(WatchPathError);
    expect(() => findWatchSources({ projectDir: root, extra: [' '] })).toThrow(/--watch entry is empty: give a folder or file/);
    expect(() => findWatchSources({ projectDir: root, extra: ['a\0b'] })).toThrow(/NUL character/);
    expect(() => findWatchSources({ projectDir: path.join(root, 'gone') })).toThrow(/does not exist or is not a folder/);
  });
});
