/** The source watcher on real temp trees: what it reports, what it leaves out, editors' saves. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isEditorTemporary, watchSources, type SourceWatcher } from '../../src/watch/watcher.js';
import { mkdirs, put, tempTree } from './tmp.js';
import { sleep, waitFor } from '../support/wait.js';

const open: SourceWatcher[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

/** A started source watcher that records what it reports. */
async function start(roots: string[], ignoreDirs: string[] = [], recheckMs?: number) {
  const changed = new Set<string>();
  const errors: Error[] = [];
  const watcher = watchSources({ roots, ignoreDirs, onChange: (p) => changed.add(p), onError: (e) => errors.push(e), recheckMs });
  open.push(watcher);
  await watcher.ready;
  return { watcher, changed, errors };
}

/**
 * Once the watcher is quiet, clears what was reported, writes `text` to `file` again and again
 * until it is reported, then waits a little longer and returns all that was reported: a folder the
 * watcher takes up after an event of its own (a new folder, a root back) is watched once that has
 * run, not after a guessed time.
 */
async function rewriteUntilSeen(changed: Set<string>, file: string, text: string): Promise<string[]> {
  // What came before (a new folder's burst of events) is over first: nothing new for 300 ms.
  let size = -1;
  let still = 0;
  const quiet = () => {
    still = changed.size === size ? still + 1 : 0;
    size = changed.size;
    return still >= 3;
  };
  await waitFor(quiet, 'the watcher to go quiet', { pollMs: 100 });
  changed.clear();
  await waitFor(
    () => {
      if (changed.has(file)) return true;
      fs.writeFileSync(file, text);
      return false;
    },
    `a change of ${file}`,
    { pollMs: 50 },
  );
  await sleep(150);
  return [...changed].sort();
}

/** Waits for `file` to be reported, then a little longer, and returns all that was reported. */
async function settle(changed: Set<string>, file: string): Promise<string[]> {
  await waitFor(() => changed.has(file), `a change of ${file}`);
  await sleep(150);
  return [...changed].sort();
}

describe('watchSources', () => {
  it('reports files written, created and removed below a root, as absolute paths', async () => {
    const root = tempTree();
    const src = mkdirs(root, 'src/main/java');
    const a = put(src, 'com/acme/A.java', 'class A {}');
    const { changed } = await start([src]);
    fs.writeFileSync(a, 'class A { int x; }');
    expect(await settle(changed, a)).toEqual([a]);
    changed.clear();
    const b = put(src, 'com/acme/B.java');
    expect(await settle(changed, b)).toEqual([b]);
    changed.clear();
    fs.rmSync(a);
    expect(await settle(changed, a)).toEqual([a]);
  });

  it('sees files in a package folder created after the start, deep ones included', async () => {
    const root = tempTree();
    const src = mkdirs(root, 'src/main/java');
    const { changed } = await start([src]);
    const deep = put(src, 'com/acme/billing/Invoice.java');
    await waitFor(() => changed.has(path.join(src, 'com')), 'the new package');
    // Seen once chokidar watches the new folders.
    expect(await rewriteUntilSeen(changed, deep, 'class Invoice { }')).toEqual([deep]);
  });

  it("reports only the saved file for vim's rename-save (swap, probes, write test, backup), as recorded from vim 9", async () => {
    const root = tempTree();
    const a = put(root, 'A.java', 'class A {}');
    const { changed } = await start([root]);
    // The sequence vim --clean wrote for `:w` (inotify log of a real save).
    put(root, '.A.java.swp', 'swap');
    put(root, '.A.java.swx', '');
    fs.rmSync(path.join(root, '.A.java.swx'));
    put(root, '.A.java.swpx', '');
    fs.rmSync(path.join(root, '.A.java.swpx'));
    put(root, '4913', '');
    fs.rmSync(path.join(root, '4913'));
    put(root, '5036', ''); // the next probe name when 4913 is taken
    fs.rmSync(path.join(root, '5036'));
    fs.renameSync(a, `${a}~`);
    fs.writeFileSync(a, 'class A { int x; }');
    fs.rmSync(`${a}~`);
    fs.rmSync(path.join(root, '.A.java.swp'));
    expect(await settle(changed, a)).toEqual([a]);
  });

  it("reports only the saved file for Emacs' save (lock link, auto-save, backup rename), as recorded from Emacs 28", async () => {
    const root = tempTree();
    const b = put(root, 'B.java', 'class B {}');
    const { changed } = await start([root]);
    fs.symlinkSync('user@host.1234:1700000000', path.join(root, '.#B.java')); // a dangling link, as Emacs makes it
    put(root, '#B.java#', 'auto-save');
    fs.renameSync(b, `${b}~`);
    fs.writeFileSync(b, 'class B { int y; }');
    put(root, 'B.java.~1~', 'numbered backup');
    put(root, 'flycheck_B.java', 'checker copy');
    put(root, 'B_flymake.java', 'checker copy');
    fs.rmSync(path.join(root, '.#B.java'));
    fs.rmSync(path.join(root, '#B.java#'));
    expect(await settle(changed, b)).toEqual([b]);
  });

  it("reports only the saved file for JetBrains' safe write, VS Code's atomic write and GIO's replace", async () => {
    const root = tempTree();
    const c = put(root, 'C.kt', 'class C');
    const d = put(root, 'd.properties', 'a=1');
    const e = put(root, 'E.java', 'class E {}');
    const { changed } = await start([root]);
    put(root, 'C.kt___jb_tmp___', 'class C(val x: Int)');
    fs.renameSync(c, `${c}___jb_old___`);
    fs.renameSync(`${c}___jb_tmp___`, c);
    fs.rmSync(`${c}___jb_old___`);
    put(root, 'd.properties.vsctmp', 'a=2');
    fs.renameSync(`${d}.vsctmp`, d);
    put(root, '.goutputstream-3XK0Q1', 'class E { }');
    fs.renameSync(path.join(root, '.goutputstream-3XK0Q1'), e);
    put(root, 'E.java.tmp', 'temp');
    put(root, '.DS_Store', 'finder');
    await waitFor(() => changed.has(c) && changed.has(d) && changed.has(e), 'all three saves');
    await sleep(150);
    expect([...changed].sort()).toEqual([c, d, e].sort());
  });

  it('leaves out class output folders, .git, node_modules, .reclazz and class files, even under a broad root', async () => {
    const root = tempTree();
    const classes = mkdirs(root, 'target/classes');
    for (const dir of ['.git', 'node_modules/x', '.reclazz']) mkdirs(root, dir);
    const source = put(root, 'src/main/java/A.java');
    const { changed } = await start([root], [path.join(root, 'target')]);
    put(classes, 'A.class', 'bytes');
    put(root, '.git/index', 'git');
    put(root, 'node_modules/x/index.js', 'js');
    put(root, '.reclazz/state.json', '{}');
    put(root, 'src/main/java/Stray.class', 'in-place compile');
    put(root, 'target/maven-status/list', 'tool state');
    fs.writeFileSync(source, 'class A { }');
    expect(await settle(changed, source)).toEqual([source]);
  });

  it('watches a root file: a rename-save of it is seen, and its neighbours are not', async () => {
    const root = tempTree();
    const config = put(root, 'config/app.properties', 'a=1');
    const other = put(root, 'config/other.properties', 'b=1');
    const { changed } = await start([config]);
    fs.writeFileSync(other, 'b=2');
    fs.renameSync(config, `${config}~`);
    fs.writeFileSync(config, 'a=2');
    fs.rmSync(`${config}~`);
    expect(await settle(changed, config)).toEqual([config]);
    changed.clear();
    fs.writeFileSync(config, 'a=3'); // still watched after the inode changed
    expect(await settle(changed, config)).toEqual([config]);
  });

  it('watches a root that did not exist at the start once it exists, and says it changed', async () => {
    const root = tempTree();
    const kotlin = path.join(root, 'src/main/kotlin');
    const { watcher, changed } = await start([kotlin], [], 30);
    expect(watcher.missingRoots()).toEqual([kotlin]);
    const file = put(kotlin, 'K.kt');
    await waitFor(() => changed.has(kotlin), 'the new root');
    expect(watcher.missingRoots()).toEqual([]);
    expect(await rewriteUntilSeen(changed, file, 'class K')).toEqual([file]);
  });

  it('keeps watching a root that was removed and made again', async () => {
    const root = tempTree();
    const src = mkdirs(root, 'src/main/java');
    const { watcher, changed } = await start([src], [], 30);
    fs.rmSync(src, { recursive: true });
    await waitFor(() => changed.has(src) && watcher.missingRoots().length === 1, 'the root going away');
    const file = put(src, 'A.java');
    await waitFor(() => watcher.missingRoots().length === 0, 'the root back');
    expect(await rewriteUntilSeen(changed, file, 'class A { }')).toEqual([file]);
  });

  it('sees again a package folder removed and made at once (a branch switch)', async () => {
    const root = tempTree();
    const src = mkdirs(root, 'src/main/java');
    const acme = path.join(src, 'com/acme');
    put(acme, 'A.java');
    const { changed } = await start([src]);
    fs.rmSync(acme, { recursive: true });
    const a = put(acme, 'A.java', 'class A { }');
    await waitFor(() => changed.has(acme), 'the replaced folder');
    expect(await rewriteUntilSeen(changed, a, 'class A { int x; }')).toEqual([a]);
  });

  it('surfaces watcher errors and keeps watching', async () => {
    const root = tempTree();
    const src = mkdirs(root, 'src');
    fs.symlinkSync('loop', path.join(src, 'loop')); // stat fails with ELOOP
    const { changed, errors } = await start([src]);
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ELOOP']);
    const file = put(src, 'A.java');
    expect(await settle(changed, file)).toContain(file);
  });

  it('closes at once, and reports nothing after close', async () => {
    const root = tempTree();
    const { watcher, changed } = await start([root]);
    await watcher.close();
    await watcher.close();
    put(root, 'A.java');
    await sleep(150);
    expect([...changed]).toEqual([]);
  });
});

describe('isEditorTemporary', () => {
  it.each([
    '.A.java.swp',
    '.A.java.swo',
    '.A.java.swn',
    '.A.java.swx',
    '.A.java.swpx',
    '_A.java.swp',
    '.env.swp',
    '4913',
    '5036',
    '5159',
    'A.java~',
    'A.java.~12~',
    '#A.java#',
    '.#A.java',
    'flycheck_A.java',
    'A_flymake.java',
    'A.java___jb_tmp___',
    'A.java___jb_old___',
    'a.properties.vsctmp',
    '.goutputstream-ABC123',
    'sedX7kQ2a',
    'A.java.tmp',
    'x.TMP',
    'y.temp',
    '.DS_Store',
    '._A.java',
  ])('%s is an editor file', (name) => {
    expect(isEditorTemporary(name)).toBe(true);
  });

  it.each([
    'A.java',
    'Foo.kt',
    'application.properties',
    'logback.xml',
    'swp.java',
    'sedan.java',
    'A.swp.java',
    '.swp',
    '4914',
    '4913.txt',
    '123',
    'build.gradle',
    '#',
    '##',
    'tmp',
    'template.html',
    'icon.svg',
    '.hidden.svg',
  ])('%s is a source', (name) => {
    expect(isEditorTemporary(name)).toBe(false);
  });
});
