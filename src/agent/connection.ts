/**
 * One TCP connection to the agent's status socket (protocol.md "The stream", "Commands"). It is
 * read all the time: the agent drops lines, receipts included, for a client that does not read.
 */
import net from 'node:net';
import pTimeout from 'p-timeout';
import { type AgentEvent, agentEventSchema, type ConnectedEvent, connectedSchema } from './protocol.js';
import { MAX_COMMAND_CHARS } from './limits.js';

/**
 * The longest line from the agent we buffer, in bytes; longer lines are discarded whole.
 * @internal for its tests
 */
export const MAX_LINE_BYTES = 64 * 1024;

/** Options for {@link AgentConnection.open}. */
export interface OpenOptions {
  /** Bound for the TCP connect and for the CONNECTED line, in ms. */
  timeoutMs: number;
  /** Called for every well-formed event after CONNECTED, in arrival order. */
  onEvent?: (event: AgentEvent) => void;
  /** Aborts the connect/handshake wait. */
  signal?: AbortSignal;
}

interface Waiter {
  match: (event: AgentEvent) => boolean;
  resolve: (event: AgentEvent) => void;
  reject: (error: Error) => void;
}

/** An open status-socket connection whose first line was a valid CONNECTED event. */
export class AgentConnection {
  /** Lines that were too long, not UTF-8, not JSON objects or missing `level`/`message`. */
  malformedLines = 0;
  private waiters = new Set<Waiter>();
  private isClosed = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private onEvent: ((event: AgentEvent) => void) | undefined;
  private closeListeners: (() => void)[] = [];
  private listeners = new Set<(event: AgentEvent) => void>();

  private constructor(
    private readonly socket: net.Socket,
    /** The TCP port this connection goes to. */
    readonly port: number,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => this.markClosed());
    socket.on('close', () => this.markClosed());
  }

  /**
   * Connects to `127.0.0.1:<port>` (never `localhost`) and waits for the CONNECTED line.
   * @returns the connection and the parsed CONNECTED event.
   * @throws AgentConnectionError with kind refused, connect-timeout, closed-before-connected,
   *   handshake-timeout, bad-handshake or aborted.
   */
  static async open(port: number, options: OpenOptions): Promise<{ connection: AgentConnection; connected: ConnectedEvent }> {
    const socket = net.createConnection({ host: '127.0.0.1', port });
    const connection = new AgentConnection(socket, port);
    // Set before the handshake: a line that arrives in the same chunk as CONNECTED is
    // dispatched before open() resumes, and must reach the listener too.
    connection.onEvent = options.onEvent;
    const connectedTcp = new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'ECONNREFUSED'
            ? new AgentConnectionError('refused', `nothing is listening on 127.0.0.1:${port} (connection refused)`)
            : new AgentConnectionError('closed', `cannot connect to 127.0.0.1:${port}: ${error.message}`),
        ),
      );
    });
    try {
      await within(
        connectedTcp,
        options.timeoutMs,
        options.signal,
        new AgentConnectionError('connect-timeout', `no connection to 127.0.0.1:${port} within ${options.timeoutMs} ms`),
      );
      const first = await connection.nextEvent(options.timeoutMs, options.signal);
      const parsed = connectedSchema.safeParse(first);
      if (!parsed.success) {
        throw new AgentConnectionError(
          'bad-handshake',
          `127.0.0.1:${port} did not start with a valid CONNECTED line (got ${describeFirstLine(first)})`,
        );
      }
      return { connection, connected: parsed.data };
    } catch (error) {
      connection.close();
      throw normaliseAbort(error, `connecting to 127.0.0.1:${port}`, options.signal);
    }
  }

  /** True once the socket has closed, from either side. */
  get closed(): boolean {
    return this.isClosed;
  }

  /**
   * Sends one command line (the newline is added here).
   * @throws Error when the line would make the agent close the connection (513+ characters)
   *   or holds a line break; AgentConnectionError kind closed when the socket is gone.
   */
  send(line: string): void {
    if (line.length >= MAX_COMMAND_CHARS || /[\r\n]/.test(line)) {
      throw new Error(`refusing to send an invalid command line (${line.length} characters)`);
    }
    if (this.isClosed) throw new AgentConnectionError('closed', `the agent on port ${this.port} closed the connection`);
    this.socket.write(`${line}\n`);
  }

  /**
   * Sends `line` and waits for the first event for which `parse` returns a value. The waiter
   * is registered before the line is written, so a fast reply is never missed; replies that
   * `parse` rejects (other tokens, broadcasts) are ignored.
   * @param timeoutMs bound for the reply, in ms.
   * @throws AgentConnectionError kind timeout, closed or aborted (also when `signal` was
   *   already aborted: then nothing is sent); Error for an invalid command line (see {@link send}).
   */
  async request<T>(
    line: string,
    parse: (event: AgentEvent) => T | undefined,
    what: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<T> {
    // An interrupt that came before the request must not put a command on the wire.
    if (signal?.aborted) throw new AgentConnectionError('aborted', `interrupted before sending ${what.split(' ')[0]}`);
    let result: T | undefined;
    const waiting = this.waitFor(
      (event) => {
        result = parse(event);
        return result !== undefined;
      },
      what,
      timeoutMs,
      signal,
    );
    try {
      this.send(line);
    } catch (error) {
      // The wait is abandoned: keep its rejection (closed) from surfacing as an unhandled one.
      waiting.catch(() => undefined);
      throw error;
    }
    await waiting;
    return result as T;
  }

  /**
   * Waits for the first event `match` accepts.
   * @throws AgentConnectionError kind timeout (after `timeoutMs` ms), closed or aborted.
   */
  waitFor(match: (event: AgentEvent) => boolean, what: string, timeoutMs: number, signal?: AbortSignal): Promise<AgentEvent> {
    if (this.isClosed) {
      return Promise.reject(new AgentConnectionError('closed', `the agent on port ${this.port} closed the connection before ${what}`));
    }
    let waiter!: Waiter;
    const promise = new Promise<AgentEvent>((resolve, reject) => {
      waiter = { match, resolve, reject };
      this.waiters.add(waiter);
    });
    return within(
      promise,
      timeoutMs,
      signal,
      new AgentConnectionError('timeout', `no ${what} from the agent on port ${this.port} within ${timeoutMs} ms`),
    )
      .catch((error: unknown) => {
        throw normaliseAbort(error, `waiting for ${what}`, signal);
      })
      .finally(() => this.waiters.delete(waiter));
  }

  /** Calls `listener` with every event from now on, until the returned function is called. */
  listen(listener: (event: AgentEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` once the socket has closed, from either side (at once when it already has). */
  onClose(listener: () => void): void {
    if (this.isClosed) listener();
    else this.closeListeners.push(listener);
  }

  /** Closes the connection; pending waits fail with kind closed. Safe to call twice. */
  close(): void {
    this.socket.destroy();
    this.markClosed();
  }

  private nextEvent(timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    if (this.isClosed) {
      return Promise.reject(
        new AgentConnectionError('closed-before-connected', `127.0.0.1:${this.port} closed the connection before CONNECTED`),
      );
    }
    const first = new Promise<unknown>((resolve, reject) => {
      this.firstLine = resolve;
      this.firstLineFailed = reject;
    });
    return within(
      first,
      timeoutMs,
      signal,
      new AgentConnectionError(
        'handshake-timeout',
        `127.0.0.1:${this.port} accepted the connection but sent no CONNECTED line within ${timeoutMs} ms`,
      ),
    );
  }

  private firstLine: ((value: unknown) => void) | undefined;
  private firstLineFailed: ((error: Error) => void) | undefined;
  private sawFirstLine = false;

  private receive(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      this.appendPart(chunk.subarray(start, newline));
      this.finishLine();
      start = newline + 1;
    }
    if (start < chunk.length) this.appendPart(chunk.subarray(start));
  }

  private appendPart(part: Buffer): void {
    if (this.discarding) return;
    if (this.pendingBytes + part.length > MAX_LINE_BYTES) {
      this.discarding = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private finishLine(): void {
    const bytes = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const wasDiscarding = this.discarding;
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
    if (wasDiscarding) {
      this.malformed();
      return;
    }
    let text: string;
    try {
      text = this.decoder.decode(bytes);
    } catch {
      this.malformed();
      return;
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.malformed();
      return;
    }
    if (!this.sawFirstLine) {
      this.sawFirstLine = true;
      this.firstLine?.(value);
      return;
    }
    const parsed = agentEventSchema.safeParse(value);
    if (!parsed.success) {
      this.malformed();
      return;
    }
    this.dispatch(parsed.data);
  }

  private malformed(): void {
    this.malformedLines += 1;
    if (!this.sawFirstLine) {
      this.sawFirstLine = true;
      this.firstLine?.(undefined);
    }
  }

  private dispatch(event: AgentEvent): void {
    this.onEvent?.(event);
    for (const listener of [...this.listeners]) listener(event);
    for (const waiter of [...this.waiters]) {
      let matched = false;
      try {
        matched = waiter.match(event);
      } catch {
        matched = false;
      }
      if (matched) {
        this.waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  }

  private markClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    if (!this.sawFirstLine) {
      this.firstLineFailed?.(
        new AgentConnectionError(
          'closed-before-connected',
          `127.0.0.1:${this.port} closed the connection before CONNECTED (the agent already has its 5 clients, or this is not the agent)`,
        ),
      );
    }
    for (const waiter of this.waiters) {
      waiter.reject(new AgentConnectionError('closed', `the agent on port ${this.port} closed the connection`));
    }
    this.waiters.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

/** `promise`, or a rejection with `timedOut` after `ms`, or with the signal's reason when it aborts first. */
function within<T>(promise: Promise<T>, ms: number, signal: AbortSignal | undefined, timedOut: AgentConnectionError): Promise<T> {
  return pTimeout(promise, { milliseconds: ms, message: timedOut, ...(signal === undefined ? {} : { signal }) });
}

/** How a status-socket operation fails (connection.ts), and the words of the failure's own account. */

/** Why a connection-level operation failed. */
export type ConnectionFailure =
  | 'refused' // nothing listens on the port (a stale port file)
  | 'connect-timeout' // no TCP connection within the timeout
  | 'closed-before-connected' // accepted then closed before CONNECTED (the agent's sixth client)
  | 'handshake-timeout' // connected, but no first line within the timeout
  | 'bad-handshake' // the first line was not a valid CONNECTED event
  | 'closed' // the agent closed the connection while we waited
  | 'timeout' // a reply did not arrive within the timeout
  | 'aborted'; // the caller's AbortSignal fired

/** A failure on the status socket. `kind` says which; `message` names the port and what we waited for. */
export class AgentConnectionError extends Error {
  override readonly name = 'AgentConnectionError';
  constructor(
    readonly kind: ConnectionFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a failed request came to: `aborted` when `signal` has (it may surface as the signal's
 * reason), `timeout`, else `closed`.
 * @throws `error` itself when it is neither an abort nor an AgentConnectionError (a bug).
 */
export function requestFailure(error: unknown, signal: AbortSignal | undefined): 'aborted' | 'timeout' | 'closed' {
  if (signal?.aborted) return 'aborted';
  if (!(error instanceof AgentConnectionError)) throw error;
  return error.kind === 'timeout' ? 'timeout' : 'closed';
}

/** A short, printable description of a first line that was not CONNECTED (undefined: not UTF-8 or not JSON). */
function describeFirstLine(first: unknown): string {
  if (first === undefined) return 'a line that is not UTF-8 JSON, or longer than 64 KiB';
  return (JSON.stringify(first) ?? String(first)).slice(0, 200);
}

/**
 * Maps what p-timeout rejects with to an AgentConnectionError. An aborted signal rejects with
 * the signal's *reason* (for the CLI the string 'SIGINT' or 'SIGTERM', not an Error), so the
 * signal itself is checked, not only the error's name.
 */
function normaliseAbort(error: unknown, what: string, signal?: AbortSignal): unknown {
  if (error instanceof AgentConnectionError) return error;
  if (signal?.aborted) return new AgentConnectionError('aborted', `interrupted while ${what}`);
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new AgentConnectionError(error.name === 'AbortError' ? 'aborted' : 'timeout', `interrupted while ${what}`);
  }
  return error;
}
