/**
 * Lines for a stream whose reader may stop reading (`events | sleep 30`). The agent's socket must
 * be read all the time (protocol.md "The stream"), so lines wait here, bounded; the oldest are
 * dropped beyond the bound, and the drops are reported once the stream caught up.
 */

/** Where the lines go: a Node writable stream (stdout), or anything with its `write` and `drain`. */
export interface LineSink {
  /** Writes `text`; false when the stream's own buffer is full (then `drain` follows). */
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** How much is held while the sink does not take lines. */
export interface OutboxLimits {
  /** At most this many lines. */
  lines: number;
  /** At most this many bytes (UTF-8) of lines. */
  bytes: number;
}

/** What `events` holds for stdout: 1,000 lines, like the agent's own outbox per client, or 8 MB. */
export const EVENT_OUTBOX_LIMITS: OutboxLimits = { lines: 1000, bytes: 8 * 1024 * 1024 };

/** The lines written to a {@link LineSink}, in order, with at most {@link OutboxLimits} held. */
export class LineOutbox {
  private held: string[] = [];
  /** Index of the oldest held line in `held` (lines before it were taken or dropped). */
  private head = 0;
  private heldBytes = 0;
  private waiting = false;
  /** Dropped since the last report. */
  private dropped = 0;
  private emptied: Array<() => void> = [];

  /**
   * @param onDropped called with the number of lines dropped, once the sink has taken every held
   *   line after a drop (so the report follows the lines that got through).
   */
  constructor(
    private readonly sink: LineSink,
    private readonly limits: OutboxLimits,
    private readonly onDropped: (dropped: number) => void,
  ) {}

  /** Writes `line` (with its newline) now, or holds it while the sink's buffer is full, dropping the oldest held beyond the limits. */
  push(line: string): void {
    if (!this.waiting) {
      this.send(line);
      return;
    }
    this.held.push(line);
    this.heldBytes += Buffer.byteLength(line);
    while (this.count() > 0 && (this.count() > this.limits.lines || this.heldBytes > this.limits.bytes)) {
      this.heldBytes -= Buffer.byteLength(this.take());
      this.dropped += 1;
    }
  }

  /** Lines dropped and not reported yet, plus lines still held: what the sink has not had. */
  missing(): number {
    return this.dropped + this.count();
  }

  /** Resolves once every held line has been handed to the sink (at once when none is held). */
  whenEmpty(): Promise<void> {
    if (!this.waiting && this.count() === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptied.push(resolve));
  }

  private count(): number {
    return this.held.length - this.head;
  }

  /** The oldest held line, removed. */
  private take(): string {
    const line = this.held[this.head]!;
    this.head += 1;
    // Compact now and then, so the array does not keep what was taken.
    if (this.head >= 1024 && this.head * 2 >= this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
    return line;
  }

  private send(line: string): void {
    if (this.sink.write(line)) return;
    this.waiting = true;
    this.sink.once('drain', () => this.drain());
  }

  private drain(): void {
    this.waiting = false;
    while (!this.waiting && this.count() > 0) {
      const line = this.take();
      this.heldBytes -= Buffer.byteLength(line);
      this.send(line);
    }
    if (this.waiting) return;
    if (this.dropped > 0) {
      const dropped = this.dropped;
      this.dropped = 0;
      this.onDropped(dropped);
    }
    for (const resolve of this.emptied.splice(0)) resolve();
  }
}
