import { describe, expect, it } from 'vitest';
import { sameBinaryNames } from '../../src/classes/changes.js';
import { emptyIndex } from '../../src/classes/columns.js';

/** An index over `dirs` with rows `[dir position, path, gone]`. */
function indexOf(dirs: string[], rows: Array<[number, string, number?]>) {
  return {
    ...emptyIndex('s'),
    dirs,
    paths: rows.map((r) => r[1]),
    dirOf: Uint32Array.from(rows.map((r) => r[0])),
    gone: Uint8Array.from(rows.map((r) => r[2] ?? 0)),
  };
}

describe('sameBinaryNames', () => {
  it('finds a binary name in two class output directories, with both paths', () => {
    const index = indexOf(
      ['/p/target/classes', '/p/build/classes/java/main'],
      [
        [0, '/p/target/classes/a/B.class'],
        [0, '/p/target/classes/a/C.class'],
        [1, '/p/build/classes/java/main/a/B.class'],
        [1, '/p/build/classes/java/main/a/D$E.class'],
      ],
    );
    expect(sameBinaryNames(index, index.dirs)).toEqual([
      { className: 'a.B', paths: ['/p/target/classes/a/B.class', '/p/build/classes/java/main/a/B.class'] },
    ]);
  });

  it('skips removed rows, and costs nothing with one directory', () => {
    const two = indexOf(
      ['/x', '/y'],
      [
        [0, '/x/A.class'],
        [1, '/y/A.class', 1],
      ],
    );
    expect(sameBinaryNames(two, two.dirs)).toEqual([]);
    expect(
      sameBinaryNames(
        indexOf(
          ['/x'],
          [
            [0, '/x/A.class'],
            [0, '/x/A.class'],
          ],
        ),
        ['/x'],
      ),
    ).toEqual([]);
  });

  it('leaves out a directory not found now: its copy went with it (the index keeps its rows until a scan)', () => {
    const index = indexOf(
      ['/p/target/classes', '/p/build/classes/java/main'],
      [
        [0, '/p/target/classes/a/B.class'],
        [1, '/p/build/classes/java/main/a/B.class'],
      ],
    );
    expect(sameBinaryNames(index, ['/p/target/classes'])).toEqual([]);
  });
});
