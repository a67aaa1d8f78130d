/** Which class files `verify` checks and under which binary names. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { declaredClassName } from '../../src/classes/scan.js';
import { ClassPathError, collectClassFiles } from '../../src/commands/verify.js';
import { watchCoverage, type AgentView } from '../../src/classes/coverage.js';
import { tempDir, writeClass } from '../support/cli.js';

/** A minimal class file declaring `internalName`, with a long constant first (it takes two slots). */
function classBytes(internalName: string): Buffer {
  const utf8 = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    return Buffer.concat([Buffer.from([1, bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  const u2 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
  const pool = Buffer.concat([
    Buffer.from([5, 0, 0, 0, 0, 0, 0, 0, 42]), // #1-#2 Long
    utf8(internalName), // #3
    Buffer.concat([Buffer.from([7]), u2(3)]), // #4 Class -> #3
    utf8('java/lang/Object'), // #5
    Buffer.concat([Buffer.from([7]), u2(5)]), // #6 Class -> #5
  ]);
  return Buffer.concat([
    Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61]),
    u2(7),
    pool,
    u2(0x21),
    u2(4),
    u2(6),
    u2(0),
    u2(0),
    u2(0),
    u2(0),
  ]);
}

describe('declaredClassName', () => {
  it('reads this_class from the constant pool', () => {
    expect(declaredClassName(classBytes('com/acme/Outer$Inner'))).toBe('com.acme.Outer$Inner');
    expect(declaredClassName(classBytes('module-info'))).toBe('module-info');
  });

  it('returns undefined for anything that is not a whole class file', () => {
    expect(declaredClassName(Buffer.from('greeter-v1'))).toBeUndefined();
    const whole = classBytes('com/acme/A');
    expect(declaredClassName(whole.subarray(0, whole.length - 14))).toBeUndefined();
    expect(declaredClassName(new Uint8Array())).toBeUndefined();
  });
});

describe('collectClassFiles', () => {
  it('names files by the innermost known class output directory, a directory outside them by itself', () => {
    const dir = tempDir();
    const root = path.join(dir, 'target', 'classes');
    writeClass(root, 'com.acme.A', 'a');
    writeClass(root, 'com.acme.sub.B$C', 'b');
    writeClass(root, 'com.acme.package-info', 'pi');
    const loose = path.join(dir, 'loose');
    writeClass(loose, 'x.Y', 'y');
    const files = collectClassFiles(
      ['target/classes/com/acme/sub', 'target/classes/com/acme/A.class', 'loose', 'target/classes'],
      [root],
      dir,
    );
    expect(files.map((f) => [f.className, f.verifiable])).toEqual([
      ['com.acme.A', true],
      ['com.acme.package-info', false],
      ['com.acme.sub.B$C', true],
      ['x.Y', true],
    ]);
    expect(files[0]!.after).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names a class file outside every known directory by the class it declares', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'Greeter.class'), classBytes('com/acme/Greeter'));
    expect(collectClassFiles(['Greeter.class'], [], dir).map((f) => f.className)).toEqual(['com.acme.Greeter']);
    fs.writeFileSync(path.join(dir, 'Fake.class'), 'not a class');
    expect(() => collectClassFiles(['Fake.class'], [], dir)).toThrow(ClassPathError);
    expect(() => collectClassFiles(['Fake.class'], [], dir)).toThrow(/cannot tell the binary class name/);
  });
});

describe('watchCoverage', () => {
  it('is true for the directory, an ancestor or a descendant; false, or unknown when the sample is incomplete', () => {
    const dirs = ['/p/target/classes', '/p/build/classes/java/main', '/q/out'];
    const view = (locals: string[], complete: boolean): AgentView => ({
      watched: locals.map((local) => ({ reported: local, local, real: local, here: 'missing' as const })),
      complete,
      from: complete ? 'options' : 'sample',
      sample: [],
      excludePatterns: [],
      autoCompile: false,
      debounceMs: 500,
      refused: 0,
      classPath: [],
      workingDirectory: '/p',
      map: [],
    });
    expect(watchCoverage(dirs, view(['/p/target/classes', '/p/build'], true)).map((c) => c.watched)).toEqual([true, true, false]);
    expect(watchCoverage(dirs, view(['/p/target/classes/com'], false)).map((c) => c.watched)).toEqual([true, null, null]);
  });
});
