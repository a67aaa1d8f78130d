/**
 * One status-socket connection: command line framing in, and a bounded outbox out
 * (protocol.md, "The stream" and "Commands"; "A client that stops reading harms others";
 * "Slots linger").
 */
import { createServer, type Socket } from 'node:net';
import { formatEvent, MAX_COMMAND_CHARS } from './wire.js';

/** Callbacks and limits of one {@link StatusClient}. */
export interface ConnectionHooks {
  /** Lines queued while the socket is not draining; beyond this, lines are dropped. */
  outboxLimit: number;
  /** Terminate sent lines with `\r\n` instead of `\n`. */
  crlf: boolean;
  /** A complete command line (no `\n`, every `\r` removed). Called synchronously, in order. */
  onLine(client: StatusClient, line: string): void;
  /**
   * A line was dropped because the outbox was full; `dropped` counts every drop on this
   * connection so far. Called for each drop: the caller decides when to warn.
   */
  onDrop(client: StatusClient, dropped: number): void;
  /** The socket closed, for whatever reason. */
  onClose(client: StatusClient): void;
}

/**
 * Writes to a closed peer before one fails: the first lands in the kernel and draws a reset,
 * the second fails (protocol.md, "Slots linger").
 */
const WRITES_UNTIL_FAILURE = 2;

/**
 * A connected client: lines split on `\n` (`\r` ignored); one of 513+ characters closes the
 * connection. Lines the socket does not take wait in an outbox of `outboxLimit` lines; beyond
 * it they are dropped, receipts included (`onDrop`).
 */
export class StatusClient {
  /** Lines dropped because the outbox was full, over the connection's life. */
  dropped = 0;
  private closed = false;
  private writesAfterClose = 0;
  private pending = '';
  private readonly outbox: string[] = [];
  private blocked = false;
  private readonly eol: string;

  constructor(
    readonly id: number,
    readonly socket: Socket,
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

  /**
   * Queue one line (JSON text without terminator) for sending; dropped when the outbox is full.
   * Returns false when this write "failed": the connection is closed and this is the second
   * write since (the first one after a peer's close still succeeds on a real socket).
   */
  send(line: string): boolean {
    if (this.isClosed) return ++this.writesAfterClose < WRITES_UNTIL_FAILURE;
    const framed = line + this.eol;
    if (this.blocked || this.outbox.length > 0) {
      if (this.outbox.length >= this.hooks.outboxLimit) {
        this.dropped++;
        this.hooks.onDrop(this, this.dropped);
        return true;
      }
      this.outbox.push(framed);
      return true;
    }
    if (!this.socket.write(framed)) this.blocked = true;
    return true;
  }

  /** Write raw text straight to the socket, bypassing the outbox (hostile-peer switches). */
  writeRaw(text: string): boolean {
    return this.isClosed ? false : this.socket.write(text);
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


/** Bind `port` (0: any) on 127.0.0.1 for a moment and return the port it got. */
export function reservePort(port: number): Promise<number> {
  return new Promise((resolvePort, rejectPort) => {
    const probe = createServer();
    probe.once('error', rejectPort);
    probe.listen({ host: '127.0.0.1', port }, () => {
      const address = probe.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(bound));
    });
  });
}

/** Lines of a flood between two turns of the event loop. */
const FLOOD_SLICE = 1000;

/**
 * Send `events` INFO events to `client` as fast as its socket drains, bypassing the outbox.
 * A turn of the event loop every {@link FLOOD_SLICE} lines: a reader as fast as the flood never
 * makes a write wait, and the loop would otherwise starve this agent's timers and replies.
 */
export async function floodClient(client: StatusClient, events: number, eol: string): Promise<void> {
  for (let i = 1; i <= events && !client.isClosed; i++) {
    if (i % FLOOD_SLICE === 0) await new Promise((resolveTurn) => setImmediate(resolveTurn));
    if (!client.writeRaw(formatEvent('INFO', `flood ${i} of ${events}`) + eol)) {
      await new Promise<void>((resolveDrain) => {
        const done = (): void => {
          client.socket.off('drain', done);
          client.socket.off('close', done);
          resolveDrain();
        };
        client.socket.on('drain', done);
        client.socket.on('close', done);
      });
    }
  }
}
