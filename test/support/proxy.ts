/**
 * A line-level man in the middle between reclazz-build and the fake agent, for faults the fake
 * agent cannot produce itself: a CONNECTED line that is late, cut, garbage or wrong; a listener
 * that never speaks or closes at once; replies the agent really sent, then lost, delayed,
 * rewritten (wrong token, CRLF, hostile bytes) or followed by a closed connection.
 *
 * Client lines pass through unchanged (the fake agent's `received` log stays the truth about
 * what reclazz-build sent). Agent lines pass through {@link ProxyRules.fromAgent}.
 */
import net from 'node:net';

/** What to do with one line from the agent. */
export type LineAction =
  /** Forward it unchanged. */
  | undefined
  /** Forward these instead: strings get `\n` appended, Buffers are written as they are. */
  | Array<string | Buffer>
  /** Forward these lines `delayMs` later; later lines are not held back. */
  | { delayMs: number; lines: Array<string | Buffer> }
  /** Forward these (maybe none), then close the client's connection. */
  | { close: true; lines?: Array<string | Buffer> };

/** One proxied connection, for rules that need state. */
export interface ProxyConnection {
  /** 1, 2, ... in accept order. */
  id: number;
  /** Lines the agent sent on this connection so far (before this one). */
  agentLines: number;
  /** Closes the client side (and the agent side) now. */
  close(): void;
  /**
   * Closes both sides and resolves once the client has closed its end too: by then the client
   * has seen the close (a test can go on knowing it did), not merely been sent it.
   */
  closeSeen(): Promise<void>;
  /** Writes raw bytes to the client now. */
  write(data: string | Buffer): void;
}

/** How the proxy misbehaves. */
export interface ProxyRules {
  /**
   * On accept: `forward` (default) connects to the agent; `silent` never connects and never
   * writes; `close` closes at once (like the agent's sixth client); a Buffer/string is written
   * as a banner and the connection is left open without an agent behind it.
   */
  onAccept?: (id: number) => 'forward' | 'silent' | 'close' | string | Buffer;
  /** Decides per agent line (without its `\n`, a `\r` kept). */
  fromAgent?: (line: string, connection: ProxyConnection) => LineAction;
}

/** A running proxy. */
export interface Proxy {
  port: number;
  /** Client connections accepted so far. */
  readonly accepted: number;
  stop(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 in front of `targetPort`. */
export async function startProxy(targetPort: number, rules: ProxyRules = {}): Promise<Proxy> {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  const track = (socket: net.Socket): net.Socket => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    return socket;
  };
  const server = net.createServer((client) => {
    track(client);
    const id = ++accepted;
    const decision = rules.onAccept?.(id) ?? 'forward';
    if (decision === 'silent') {
      client.resume();
      return;
    }
    if (decision === 'close') {
      client.destroy();
      return;
    }
    if (decision !== 'forward') {
      client.resume();
      client.write(decision);
      return;
    }
    const agent = track(net.createConnection({ host: '127.0.0.1', port: targetPort }));
    const closeBoth = (): void => {
      client.destroy();
      agent.destroy();
    };
    const write = (items: Array<string | Buffer>): void => {
      for (const item of items) if (!client.destroyed) client.write(typeof item === 'string' ? `${item}\n` : item);
    };
    const closeSeen = (): Promise<void> => {
      // The agent side goes when the client's does (below); until then nothing more is forwarded.
      const seen = new Promise<void>((resolve) => client.once('close', () => resolve()));
      agent.pause();
      client.end();
      return seen;
    };
    const connection: ProxyConnection = { id, agentLines: 0, close: closeBoth, closeSeen, write: (data) => write([Buffer.from(data)]) };
    client.on('data', (chunk) => agent.write(chunk));
    client.on('close', () => agent.destroy());
    agent.on('close', () => client.destroy());
    let pending = Buffer.alloc(0);
    agent.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let newline = pending.indexOf(0x0a); newline !== -1; newline = pending.indexOf(0x0a)) {
        const line = pending.subarray(0, newline).toString('utf8');
        pending = pending.subarray(newline + 1);
        const action = rules.fromAgent?.(line, connection);
        connection.agentLines += 1;
        if (action === undefined) write([line]);
        else if (Array.isArray(action)) write(action);
        else if ('close' in action) {
          write(action.lines ?? []);
          client.end();
          agent.destroy();
          return;
        } else {
          const timer = setTimeout(() => {
            timers.delete(timer);
            write(action.lines);
          }, action.delayMs);
          timers.add(timer);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The `message` of an agent event line, or undefined when the line is not such JSON. */
export function messageOf(line: string): string | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string'
      ? (value as { message: string }).message
      : undefined;
  } catch {
    return undefined;
  }
}

/** True for the agent line carrying the requester-only reply `word` (`DOCTOR_RESULT`, `BUILD_ACK`, ...), optionally for BUILD state `state`. */
export function isReply(line: string, word: string, state?: string): boolean {
  const message = messageOf(line);
  if (message === undefined || !message.startsWith(`${word} `)) return false;
  return state === undefined || message.split(' ')[2] === state;
}
