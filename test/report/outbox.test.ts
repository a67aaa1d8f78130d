/**
 * The bounded outbox `events` writes stdout through: lines go straight through while the stream
 * takes them, are held in order while it does not, at most the limits (the oldest dropped), and
 * the drops are reported once, after every held line has been taken.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LineOutbox } from '../../src/report/outbox.js';

/** A stream that takes `room` lines, then reports full until `drain()`. */
class FakeStream extends EventEmitter {
  written: string[] = [];
  constructor(private room: number) {
    super();
  }
  write(text: string): boolean {
    this.written.push(text);
    this.room -= 1;
    return this.room > 0;
  }
  drain(room: number): void {
    this.room = room;
    this.emit('drain');
  }
}

const line = (n: number) => `line ${n}\n`;

describe('LineOutbox', () => {
  it('writes straight through while the stream takes lines', async () => {
    const stream = new FakeStream(100);
    const dropped: number[] = [];
    const outbox = new LineOutbox(stream, { lines: 3, bytes: 1000 }, (n) => dropped.push(n));
    for (let i = 1; i <= 5; i++) outbox.push(line(i));
    expect(stream.written).toEqual([1, 2, 3, 4, 5].map(line));
    expect(outbox.missing()).toBe(0);
    await outbox.whenEmpty();
    expect(dropped).toEqual([]);
  });

  it('holds the newest lines while the stream is full, drops the oldest beyond the line limit, reports the drops once after the drain', async () => {
    const stream = new FakeStream(2);
    const dropped: number[] = [];
    const outbox = new LineOutbox(stream, { lines: 3, bytes: 1000 }, (n) => dropped.push(n));
    for (let i = 1; i <= 10; i++) outbox.push(line(i));
    // 1 and 2 went to the stream (the second filled it); 3..10 were held, 3 at most: 8, 9, 10.
    expect(stream.written).toEqual([1, 2].map(line));
    expect(outbox.missing()).toBe(5 + 3);
    let empty = false;
    void outbox.whenEmpty().then(() => (empty = true));
    stream.drain(100);
    await Promise.resolve();
    expect(stream.written).toEqual([1, 2, 8, 9, 10].map(line));
    expect(dropped).toEqual([5]);
    expect(empty).toBe(true);
    // Flowing again: no further report without further drops.
    outbox.push(line(11));
    expect(stream.written.at(-1)).toBe(line(11));
    expect(dropped).toEqual([5]);
  });

  it('keeps to the byte limit too', () => {
    const stream = new FakeStream(1);
    const outbox = new LineOutbox(stream, { lines: 1000, bytes: 25 }, () => undefined);
    outbox.push('first\n');
    for (let i = 0; i < 10; i++) outbox.push(`${'x'.repeat(9)}${i}\n`); // 11 bytes each
    stream.drain(100);
    expect(stream.written).toEqual(['first\n', 'xxxxxxxxx8\n', 'xxxxxxxxx9\n']);
  });

  it('a drain that fills the stream again keeps the rest held, in order, and reports only when all are out', () => {
    const stream = new FakeStream(1);
    const dropped: number[] = [];
    const outbox = new LineOutbox(stream, { lines: 4, bytes: 1000 }, (n) => dropped.push(n));
    for (let i = 1; i <= 7; i++) outbox.push(line(i));
    stream.drain(2);
    expect(stream.written).toEqual([1, 4, 5].map(line));
    expect(dropped).toEqual([]);
    stream.drain(100);
    expect(stream.written).toEqual([1, 4, 5, 6, 7].map(line));
    expect(dropped).toEqual([2]);
  });
});
