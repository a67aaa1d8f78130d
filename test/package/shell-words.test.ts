/**
 * The command lines the scripts print for a reader to paste (`npm run demo`'s `$ reclazz-build
 * ...` lines, scripts/shell-words.mjs): a shell splits each back into exactly the words run.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellLine } from '../../scripts/shell-words.mjs';

/** The words `sh` makes of `line`, one per NUL. */
const wordsOf = (line: string): string[] =>
  execFileSync('sh', ['-c', `for w in ${line}; do printf '%s\\0' "$w"; done`], { encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);

describe('a printed command line', () => {
  it.each([
    [['reclazz-build', '--restart-command', 'kill -HUP 15712', 'mvn', '-q', 'compile']],
    [['reclazz-build', 'mvn', '-q', 'compile']],
    [['reclazz-build', '--restart-command', 'sh -c \'kill $PPID\' && echo "done"', '--', 'make', '']],
    [['reclazz-build', '--path-map', '/app=/home/me/my shop', 'watch', 'mvn', '-Dx=a;b', 'compile']],
  ])('%j reads back as the same words in sh', (words) => {
    expect(wordsOf(shellLine(words))).toEqual(words);
  });

  it('quotes only what a shell would split or expand', () => {
    expect(shellLine(['reclazz-build', '--restart-command', 'kill -HUP 15712', 'mvn', '-q', 'compile'])).toBe(
      "reclazz-build --restart-command 'kill -HUP 15712' mvn -q compile",
    );
  });
});
