/**
 * A tiny raw status-socket client for the fake agent's tests: connects to 127.0.0.1, splits
 * the stream into lines, and waits for a line matching a predicate. Deliberately independent
 * of the reclazz-build client in src/.
 */
import { connect, type Socket } from 'node:net';
import { sleep } from '../support/wait.js';

/** How long a reply is awaited by default: only a bound on a hang, below the test's own timeout. */
const HANG_MS = 20_000;

/** One parsed status event, plus the raw line it came from. */
export interface Event {
  level: string;
  message: string;
  timestamp: string;
  raw: string;
  [key: string]: unknown;
}

export class LineClient {
  /** Every complete line received, terminator removed (a trailing `\r` is kept, to test CRLF). */
  readonly lines: string[] = [];
  /** Raw received text, for framing checks. */
  rawText = '';
  ended = false;
  private cursor = 0;
  private waiters: Array<() => void> = [];
  private partial = '';
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.rawText += chunk;
      this.partial += chunk;
      let nl: number;
      while ((nl = this.partial.indexOf('\n')) >= 0) {
        this.lines.push(this.partial.slice(0, nl));
        this.partial = this.partial.slice(nl + 1);
      }
      this.wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  /** Connect to the fake agent on 127.0.0.1:port. */
  static connect(port: number): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new LineClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Connect and wait for CONNECTED. */
  static async ready(port: number): Promise<LineClient> {
    const client = await LineClient.connect(port);
    await client.next((e) => e.level === 'CONNECTED');
    return client;
  }

  /** Send one command line; `\n` appended unless `raw`. */
  send(line: string, raw = false): void {
    this.socket.write(raw ? line : line + '\n');
  }

  /** Every line parsed as an event (lines that are not JSON are skipped). */
  events(): Event[] {
    return this.lines.flatMap((line) => {
      try {
        return [{ ...JSON.parse(line), raw: line } as Event];
      } catch {
        return [];
      }
    });
  }

  /** Messages of all INFO events so far. */
  infos(): string[] {
    return this.events()
      .filter((e) => e.level === 'INFO')
      .map((e) => e.message);
  }

  /**
   * Wait for the next line (after the last one `next` returned) whose event matches `pred`;
   * lines before it are skipped. Rejects when the connection closes, or after `timeoutMs`
   * (default 20 s: a bound on a hang, not a margin).
   */
  async next(pred: (e: Event) => boolean, timeoutMs = HANG_MS): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.lines.length) {
        const line = this.lines[this.cursor++];
        let event: Event;
        try {
          event = { ...JSON.parse(line), raw: line } as Event;
        } catch {
          continue;
        }
        if (pred(event)) return event;
      }
      if (this.ended) throw new Error(`connection closed while waiting; lines:\n${this.lines.join('\n')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting; lines:\n${this.lines.join('\n')}`);
      await this.wait(left);
    }
  }

  /** Wait for the requester-only INFO message starting with `${word} ${token} ` (or equal to it). */
  async reply(word: string, token: string, timeoutMs = HANG_MS): Promise<string> {
    const event = await this.next(
      (e) => e.level === 'INFO' && (e.message === `${word} ${token}` || e.message.startsWith(`${word} ${token} `)),
      timeoutMs,
    );
    return event.message;
  }

  /** Send a command and wait for its reply message. */
  async ask(line: string, word: string, token: string, timeoutMs = HANG_MS): Promise<string> {
    this.send(line);
    return this.reply(word, token, timeoutMs);
  }

  /** VERIFY and parse the JSON of VERIFY_RESULT. */
  async verify(token: string, className: string, sha: string): Promise<Record<string, string>> {
    const message = await this.ask(`VERIFY ${token} ${className} ${sha}`, 'VERIFY_RESULT', token);
    return JSON.parse(message.slice(`VERIFY_RESULT ${token} `.length)) as Record<string, string>;
  }

  /** Resolve true if no line matching `pred` arrives within `ms` (checks all lines, not just after the cursor). */
  async never(pred: (e: Event) => boolean, ms: number): Promise<boolean> {
    await sleep(ms);
    return !this.events().some(pred);
  }

  close(): void {
    this.socket.destroy();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const waiter = (): void => done();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(waiter);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
