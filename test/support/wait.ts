/**
 * Waiting in tests: for an event, never for a guessed time. A test awaits what it needs (a line,
 * a connection, a file, a process exit); where the event has no hook it polls a condition, and
 * the deadline only bounds a hang: long enough for a loaded 2-core machine running several test
 * files at once, short enough to fail with a message naming what never came before the test's
 * own timeout (60 s) cuts it off without one.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** The default deadline of {@link waitFor}, in ms: half a test's timeout. */
const HANG_MS = 30_000;

/** Options of {@link waitFor}. */
interface WaitOptions {
  /** Give up after this many ms (default 30 s): a bound on a hang, not a margin. */
  timeoutMs?: number;
  /** Check this often, in ms (default 10). */
  pollMs?: number;
}

/**
 * Resolves once `check()` returns true, checking at once and then every `pollMs`.
 *
 * @throws Error `timed out waiting for <what>` after `timeoutMs` (`what` may be a function: the state by then).
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string),
  options: WaitOptions = {},
): Promise<void> {
  const { timeoutMs = HANG_MS, pollMs = 10 } = options;
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(pollMs);
  }
}

/** Waits `ms`: only for a window in which something must NOT happen, or to let a real clock pass. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Collects the lines a child writes to `stream` and lets a test await the first one that matches:
 * the event itself, not a poll.
 */
export class Lines {
  /** Every complete line so far, without its `\n`. */
  readonly all: string[] = [];
  private partial = '';
  private ended = false;
  private waiters = new Set<() => void>();

  constructor(stream: Readable) {
    // Decoded here, not with setEncoding: whoever else reads the stream keeps getting its bytes.
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer | string) => {
      const lines = (this.partial + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split('\n');
      this.partial = lines.pop()!;
      this.all.push(...lines);
      this.wake();
    });
    stream.on('end', () => {
      this.ended = true;
      this.wake();
    });
  }

  /** Everything so far, lines joined with `\n` (the unfinished last line included). */
  text(): string {
    return [...this.all, this.partial].join('\n');
  }

  /**
   * The first line (from the start) that matches `pattern`, once it has come.
   *
   * @throws Error when the stream ends first, or after `timeoutMs` (default 30 s, a bound on a hang).
   */
  async line(pattern: RegExp, timeoutMs = HANG_MS): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const found = this.all.find((line) => pattern.test(line));
      if (found !== undefined) return found;
      if (this.ended) throw new Error(`the stream ended without a line matching ${pattern}:\n${this.text()}`);
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for a line matching ${pattern}:\n${this.text()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, left);
        const waiter = (): void => done();
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.waiters.add(waiter);
      });
    }
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const waiter of waiters) waiter();
  }
}
