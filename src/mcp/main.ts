/**
 * `reclazz-build mcp`: a Model Context Protocol server on stdio (the official SDK), bundled on its
 * own into dist/mcp.cjs and loaded only by this subcommand (cli/commands.ts `addMcp`), so a build's start-up
 * never reads it. stdout carries JSON-RPC only; the log (each call's human report and its build's
 * output) goes to stderr. Like cli/, a face of its own: it touches the process (its streams, its
 * environment) and runs the command line as one child process per call (child.ts says why).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { registerTools } from './tools.js';

/** What the command line hands the server. */
export interface McpStart {
  /** The package's version, told to the client. */
  version: string;
  /** The node binary and the command line's script that each call runs. */
  node: string;
  cli: string;
  /** Aborted on SIGINT or SIGTERM: the server stops as when its client closes stdin. */
  signal: AbortSignal;
}

/**
 * Serves until the client closes stdin (or `start.signal` aborts); then every running call is
 * stopped as Ctrl-C stops a run, and the promise resolves, once they ended, with the exit status
 * (0; 130 or 143 after a signal).
 */
export async function serveMcp(start: McpStart): Promise<number> {
  const running = new Set<Promise<unknown>>();
  const stop = new AbortController();
  const server = new McpServer({ name: 'reclazz-build', version: start.version }, { capabilities: { logging: {} } });
  const log = (chunk: Buffer | string): void => {
    process.stderr.write(chunk);
  };
  registerTools(server, {
    node: start.node,
    cli: start.cli,
    env: process.env,
    log,
    notice: (text) => void server.server.sendLoggingMessage({ level: 'warning', logger: 'reclazz-build', data: text }).catch(() => {}),
    stopping: stop.signal,
    running,
  });
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    // A client that stopped reading (EPIPE) is gone as well.
    process.stdout.on('error', () => resolve());
    start.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(new StdioServerTransport());
  await ended;
  // Every call in progress is stopped as Ctrl-C stops a run, and answered, before the server closes.
  stop.abort();
  await Promise.allSettled([...running]);
  await new Promise((resolve) => setImmediate(resolve));
  await server.close();
  const reason = start.signal.reason as unknown;
  return reason === 'SIGTERM' ? 143 : reason === 'SIGINT' ? 130 : 0;
}
