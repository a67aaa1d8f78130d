/**
 * Where the JVM loads a class file from, against its start (src/classes/placement.ts): on real
 * folders, renamed, swapped, linked and written into as the measurements in its header found.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COARSE_CLOCK_MS } from '../../src/classes/evidence.js';
import { Placement, type JvmPaths } from '../../src/classes/placement.js';
import { tempDir, writeClass } from '../support/cli.js';
import { writeJar } from '../support/zip.js';

/** Until what was just written is older than the file system's coarse clock, and than a start time taken now. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2 * COARSE_CLOCK_MS + 5));
const entry = (local: string) => ({ local, real: local });

/** A checkout with target/classes/com/acme/A.class, then the JVM "starts" (class path: target/classes). */
async function started(): Promise<{ top: string; classes: string; file: string; placement: () => Placement; paths: JvmPaths }> {
  const top = tempDir();
  const classes = path.join(top, 'target', 'classes');
  const file = writeClass(classes, 'com.acme.A', 'a-1');
  await settle();
  const start = { startMs: Date.now(), errorMs: 1 };
  await settle();
  const paths = { top, classPath: [entry(classes)], watched: () => true };
  return { top, classes, file, placement: () => new Placement(start, paths), paths };
}

describe('placed since the start', () => {
  it('an unchanged path is; a class added beside it and a log file the app writes in the checkout root do not change that', async () => {
    const { top, classes, file, placement } = await started();
    expect(placement().placed(file)).toBe(true);
    fs.writeFileSync(path.join(top, 'app.log'), 'started');
    writeClass(classes, 'com.acme.B', 'b-1');
    fs.appendFileSync(path.join(top, 'app.log'), ' and running');
    expect(placement().placed(file)).toBe(true);
  });

  it("a folder whose entries and whose parent's entries both changed since the start cannot be told from one moved there: not placed", async () => {
    const { classes, file, placement } = await started();
    writeClass(classes, 'com.acme.B', 'b-1');
    writeClass(classes, 'com.other.C', 'c-1');
    expect(placement().placed(file)).toBe(false);
    // The same one level up: a log in the checkout root and a jar in target/.
    const other = await started();
    fs.writeFileSync(path.join(other.top, 'app.log'), 'started');
    fs.writeFileSync(path.join(other.top, 'target', 'app.jar'), '');
    expect(other.placement().placed(other.file)).toBe(false);
  });

  it('a folder between the class output directory and the checkout root swapped after the start is not', async () => {
    const { top, file, placement } = await started();
    writeClass(path.join(top, 'target-old', 'classes'), 'com.acme.A', 'a-1');
    fs.renameSync(path.join(top, 'target'), path.join(top, 'target-new'));
    fs.renameSync(path.join(top, 'target-old'), path.join(top, 'target'));
    expect(placement().placed(file)).toBe(false);
    // Swapped back: target's own ctime says it moved.
    fs.renameSync(path.join(top, 'target'), path.join(top, 'target-old'));
    fs.renameSync(path.join(top, 'target-new'), path.join(top, 'target'));
    expect(placement().placed(file)).toBe(false);
  });

  it('a class output directory renamed into place after the start, then changed in its entries, is not', async () => {
    const { top, classes, file, placement } = await started();
    fs.renameSync(classes, path.join(top, 'target', 'old'));
    fs.renameSync(path.join(top, 'target', 'old'), classes);
    writeClass(classes, 'com.acme.B', 'b-1');
    fs.rmSync(path.join(classes, 'com', 'acme', 'B.class'));
    expect(placement().placed(file)).toBe(false);
  });

  it('a symbolic link on the path flipped after the start is not; one unchanged since before it is', async () => {
    const top = tempDir();
    const real = path.join(top, 'out', 'v1');
    const file = writeClass(real, 'com.acme.A', 'a-1');
    writeClass(path.join(top, 'out', 'v2'), 'com.acme.A', 'a-1');
    fs.mkdirSync(path.join(top, 'target'));
    fs.symlinkSync(real, path.join(top, 'target', 'classes'));
    await settle();
    const start = { startMs: Date.now(), errorMs: 1 };
    await settle();
    const linked = path.join(top, 'target', 'classes', 'com', 'acme', 'A.class');
    const paths = { top, classPath: [entry(path.join(top, 'target', 'classes'))], watched: () => true };
    expect(new Placement(start, paths).placed(linked)).toBe(true);
    expect(new Placement(start, paths).placed(file)).toBe(true);
    fs.symlinkSync(path.join(top, 'out', 'v2'), path.join(top, 'target', 'next'));
    fs.renameSync(path.join(top, 'target', 'next'), path.join(top, 'target', 'classes'));
    expect(new Placement(start, paths).placed(linked)).toBe(false);
  });

  it('the sight of a class file: its class path entry, its path through it, and what earlier entries hold', async () => {
    const { top, classes, file, paths } = await started();
    const start = { startMs: Date.now() - 1, errorMs: 1 };
    const sight = (classPath: JvmPaths['classPath']) => new Placement(start, { ...paths, classPath }).sight(file, classes, 0);
    expect(sight([entry(classes)])).toMatchObject({ onClassPath: true, earlier: 'none' });
    // Another folder beside it (an IDE's out/production) is not on the class path; not watched either, it is not the app's.
    expect(sight([entry(path.join(top, 'out', 'production'))])).toMatchObject({ onClassPath: false, elsewhere: false });
    expect(
      new Placement(start, { ...paths, classPath: [entry(path.join(top, 'out'))], watched: () => false }).sight(file, classes, 0),
    ).toMatchObject({
      onClassPath: false,
      elsewhere: true,
    });
    const jar = path.join(top, 'old.jar');
    writeJar(jar, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\n', 'com/acme/A.class': 'a-0' });
    expect(sight([entry(jar), entry(classes)])).toMatchObject({ onClassPath: true, earlier: 'held' });
    const other = path.join(top, 'other.jar');
    writeJar(other, { 'com/other/B.class': 'b' });
    // Written after the start: it may have held the class when the JVM looked.
    expect(sight([entry(other), entry(classes)])).toMatchObject({ earlier: 'unknown' });
    writeJar(other, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\nClass-Path: more.jar\r\n' });
    expect(sight([entry(other), entry(classes)])).toMatchObject({ earlier: 'unknown' });
    const before = path.join(top, 'before');
    writeClass(before, 'com.acme.A', 'a-0');
    expect(sight([entry(before), entry(classes)])).toMatchObject({ earlier: 'held' });
    expect(sight([entry(path.join(top, 'lib', '*')), entry(classes)])).toMatchObject({ earlier: 'unknown' });
  });

  it('an earlier entry that has held nothing since the start does not shadow the class', async () => {
    const top = tempDir();
    const classes = path.join(top, 'target', 'classes');
    const file = writeClass(classes, 'com.acme.A', 'a-1');
    const jar = path.join(top, 'lib.jar');
    writeJar(jar, { 'com/other/B.class': 'b' });
    fs.mkdirSync(path.join(top, 'res'));
    await settle();
    const start = { startMs: Date.now(), errorMs: 1 };
    await settle();
    const classPath = [entry(jar), entry(path.join(top, 'res')), entry(path.join(top, 'gone')), entry(classes)];
    expect(new Placement(start, { top, classPath, watched: () => true }).sight(file, classes, 0)).toMatchObject({
      onClassPath: true,
      earlier: 'none',
      placed: true,
    });
  });
});

describe("a jar's manifest Class-Path: its entries are opened right after it", () => {
  /** A checkout whose lib/a.jar's manifest lists `classPath` (before target/classes on the class path); lib/b.jar holds com.other.Y. */
  async function manifested(classPath: string, more: (top: string) => void = () => undefined) {
    const top = tempDir();
    const classes = path.join(top, 'target', 'classes');
    const file = writeClass(classes, 'com.acme.A', 'a-1');
    const a = path.join(top, 'lib', 'a.jar');
    fs.mkdirSync(path.dirname(a));
    writeJar(a, { 'META-INF/MANIFEST.MF': `Manifest-Version: 1.0\r\nClass-Path: ${classPath}\r\nCreated-By: test\r\n\r\n` });
    writeJar(path.join(top, 'lib', 'b.jar'), { 'com/other/Y.class': 'y' });
    more(top);
    await settle();
    const start = { startMs: Date.now(), errorMs: 1 };
    await settle();
    const paths = { top, classPath: [entry(a), entry(classes)], watched: () => true };
    return { top, classes, file, placement: () => new Placement(start, paths) };
  }

  it('entries that do not hold the class (a jar beside it, one missing, itself again) do not shadow it: the JVM loads it from the folder', async () => {
    const { classes, file, placement } = await manifested('b.jar missing.jar a.jar');
    expect(placement().sight(file, classes, 0)).toMatchObject({ onClassPath: true, earlier: 'none', placed: true });
    expect(placement().loadsFrom(file, classes)).toMatchObject({ onClassPath: true, earlier: 'none' });
    expect(placement().loadedFrom(file, classes)).toBe(true);
    expect(placement().jarInstead(file, classes)).toBeUndefined();
  });

  it("a listed jar or folder holding the class shadows it, relative to the jar's folder, through a continued line or a file: URL", async () => {
    const holding = (top: string) => writeJar(path.join(top, 'lib', 'c.jar'), { 'com/acme/A.class': 'a-0' });
    const jarred = await manifested('b.jar\r\n  c.jar', holding);
    expect(jarred.placement().sight(jarred.file, jarred.classes, 0)).toMatchObject({ earlier: 'held' });
    expect(jarred.placement().loadedFrom(jarred.file, jarred.classes)).toBe(false);
    expect(jarred.placement().jarInstead(jarred.file, jarred.classes)).toBe(path.join(jarred.top, 'lib', 'c.jar'));
    const folder = await manifested('../old/', (top) => writeClass(path.join(top, 'old'), 'com.acme.A', 'a-0'));
    expect(folder.placement().loadsFrom(folder.file, folder.classes)).toMatchObject({ earlier: 'held' });
    const elsewhere = path.join(tempDir(), 'c.jar');
    writeJar(elsewhere, { 'com/acme/A.class': 'a-0' });
    const url = await manifested(pathToFileURL(elsewhere).href);
    expect(url.placement().jarInstead(url.file, url.classes)).toBe(elsewhere);
  });

  it('a manifest that cannot be read may list anything: unknown', async () => {
    const { top, classes, file } = await manifested('b.jar');
    const a = path.join(top, 'lib', 'a.jar');
    const bytes = fs.readFileSync(a);
    // Its compression method (at 8 of the local header, 10 of the central entry) one no jar uses.
    bytes.writeUInt16LE(99, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 10);
    fs.writeFileSync(a, bytes);
    const paths = { top, classPath: [entry(a), entry(classes)], watched: () => true };
    expect(new Placement(undefined, paths).loadsFrom(file, classes)).toMatchObject({ earlier: 'unknown' });
  });
});

describe('a jar the JVM loads a class from instead of its class output directory', () => {
  it('java -jar (at its name or in a fat jar), a jar before the folder; not a jar after it, a folder, or a jar without the class', async () => {
    const { top, classes, file, paths } = await started();
    const instead = (classPath: JvmPaths['classPath']) => new Placement(undefined, { ...paths, classPath }).jarInstead(file, classes);
    const jar = (name: string, entries: Record<string, string>) => {
      const at = path.join(top, name);
      writeJar(at, { 'META-INF/MANIFEST.MF': 'Manifest-Version: 1.0\r\n', ...entries });
      return at;
    };
    const plain = jar('app.jar', { 'com/acme/A.class': 'a-0' });
    const fat = jar('boot.jar', { 'BOOT-INF/classes/com/acme/A.class': 'a-0' });
    const other = jar('other.jar', { 'com/other/B.class': 'b' });
    expect(instead([entry(plain)])).toBe(plain);
    expect(instead([entry(fat)])).toBe(fat);
    expect(instead([entry(plain), entry(classes)])).toBe(plain);
    // A fat jar on a -cp is no fat jar run: the JVM's own loader never looks in BOOT-INF/classes/.
    expect(instead([entry(fat), entry(classes)])).toBeUndefined();
    expect(instead([entry(classes), entry(plain)])).toBeUndefined();
    expect(instead([entry(other)])).toBeUndefined();
    const before = path.join(top, 'before');
    writeClass(before, 'com.acme.A', 'a-0');
    expect(instead([entry(before), entry(classes)])).toBeUndefined();
    expect(instead([])).toBeUndefined();
  });
});
