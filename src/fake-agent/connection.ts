/**
 * One status-socket connection: command line framing in, and a bounded outbox out
 * (protocol.md, "The stream" and "Commands").
 */
import type { Socket } from 'node:net';
import { MAX_COMMAND_CHARS } from './wire.js';

/** Callbacks and limits of one {@link StatusClient}. */
export interface ConnectionHooks {
  /** Lines queued while the socket is not draining; beyond this, lines are dropped. */
  outboxLimit: number;
  /** Terminate sent lines with `\r\n` instead of `\n`. */
  crlf: boolean;
  /** A complete command line (no `\n`, every `\r` removed). Called synchronously, in order. */
  onLine(client: StatusClient, line: string): void;
  /** The outbox just started dropping lines (once per stall, until it drains again). */
  onOverflow(client: StatusClient): void;
  /** The socket closed, for whatever reason. */
  onClose(client: StatusClient): void;
}

/**
 * A connected client. Incoming bytes are decoded as UTF-8 and split on `\n`; `\r` is ignored;
 * a line (or an unterminated partial line) of 513+ characters closes the connection.
 * Outgoing lines are written directly while the socket drains; once `write()` returns false
 * they wait in an outbox of `outboxLimit` lines, and past that limit they are dropped
 * (receipts included), reported once per stall through `onOverflow`.
 */
export class StatusClient {
  /** Lines dropped because the outbox was full. */
  dropped = 0;
  private closed = false;
  private pending = '';
  private readonly outbox: string[] = [];
  private blocked = false;
  private overflowing = false;
  private readonly eol: string;

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly hooks: ConnectionHooks,
  ) {
    this.eol = hooks.crlf ? '\r\n' : '\n';
    socket.setEncoding('utf8');
    socket.setNoDelay(true);
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('drain', () => this.flush());
    socket.on('error', () => {
      /* a reset peer is just a closed client */
    });
    socket.on('close', () => {
      this.closed = true;
      this.outbox.length = 0;
      hooks.onClose(this);
    });
  }

  /** True once the connection is closed or closing. */
  get isClosed(): boolean {
    return this.closed || this.socket.destroyed;
  }

  /** Lines waiting in the outbox (not yet handed to the socket). */
  get queued(): number {
    return this.outbox.length;
  }

  /** Queue one line (JSON text without terminator) for sending; dropped when the outbox is full. */
  send(line: string): void {
    if (this.isClosed) return;
    const framed = line + this.eol;
    if (this.blocked || this.outbox.length > 0) {
      if (this.outbox.length >= this.hooks.outboxLimit) {
        this.dropped++;
        if (!this.overflowing) {
          this.overflowing = true;
          this.hooks.onOverflow(this);
        }
        return;
      }
      this.outbox.push(framed);
      return;
    }
    if (!this.socket.write(framed)) this.blocked = true;
  }

  /** Close the connection at once; unsent lines are discarded. */
  close(): void {
    this.closed = true;
    this.outbox.length = 0;
    this.socket.destroy();
  }

  private flush(): void {
    this.blocked = false;
    while (this.outbox.length > 0 && !this.isClosed) {
      const framed = this.outbox.shift() as string;
      if (!this.socket.write(framed)) {
        this.blocked = true;
        return;
      }
    }
    this.overflowing = false;
  }

  private receive(chunk: string): void {
    this.pending += chunk;
    let newline: number;
    while (!this.isClosed && (newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline).replace(/\r/g, '');
      this.pending = this.pending.slice(newline + 1);
      if (line.length > MAX_COMMAND_CHARS) {
        this.close();
        return;
      }
      this.hooks.onLine(this, line);
    }
    if (!this.isClosed && this.pending.replace(/\r/g, '').length > MAX_COMMAND_CHARS) this.close();
  }
}
