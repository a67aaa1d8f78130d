/** The last lines of a build's output (tool/build.ts `OutputTail`): per stream, bounded, as a reader of a log would see them. */
import { describe, expect, it } from 'vitest';
import { OutputTail } from '../../src/tool/build.js';

describe('OutputTail', () => {
  it("keeps each stream's unfinished line its own, and ends lines in the order they end", () => {
    const tail = new OutputTail();
    const out = {};
    const err = {};
    tail.push(out, 'compil');
    tail.push(err, 'error: x\n');
    tail.push(out, 'ing\nlast without newline');
    expect(tail.end()).toEqual(['error: x', 'compiling', 'last without newline']);
  });

  it('shows a redrawn line as it was last drawn, without colours, and cuts a long one', () => {
    const tail = new OutputTail();
    const out = {};
    tail.push(out, '10%\r50%\r100%\r\n\x1b[1;31mERROR\x1b[0m done\r\n');
    tail.push(out, Buffer.from(`${'x'.repeat(1000)}\n`));
    const lines = tail.end();
    expect(lines.slice(0, 2)).toEqual(['100%', 'ERROR done']);
    expect(lines[2]).toBe(`${'x'.repeat(300)}…`);
  });

  it('keeps only the last 40 lines, and a character split between chunks whole', () => {
    const tail = new OutputTail();
    const out = {};
    for (let i = 1; i <= 100; i++) tail.push(out, `line ${i}\n`);
    const euro = Buffer.from('€\n');
    tail.push(out, euro.subarray(0, 1));
    tail.push(out, euro.subarray(1));
    const lines = tail.end();
    expect(lines).toHaveLength(40);
    expect(lines[0]).toBe('line 62');
    expect(lines.at(-1)).toBe('€');
  });
});
