/**
 * Argument parsing and start-up of the `reclazz-fake-agent` command (cli.ts runs it with
 * process.argv and signal handling; tests call it directly).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Writable } from 'node:stream';
import { parseBuild } from './commands.js';
import { startFakeAgent } from './server.js';
import type { FakeAgent, FakeAgentOptions, FinalStatus, InterceptAction, InterceptCommand } from './types.js';
import { formatEvent } from './wire.js';

interface CliOptions {
  portFile: string;
  port?: number;
  watch: string[];
  heartbeatMs?: number;
  captureDelayMs?: number;
  reloadMs?: number;
  oldAgent?: boolean;
  notReady?: boolean;
  crlf?: boolean;
  verifyStatus?: FinalStatus;
  rejectStarted?: boolean;
  silent: string[];
  log?: boolean;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function createProgram(): Command {
  return new Command('reclazz-fake-agent')
    .version(packageVersion(), '-V, --version')
    .description(
      "A fake of the reclazz agent's loopback status socket (protocol.md): heartbeats, BUILD hold rules with " +
        'receipts, capture of changed class files, VERIFY, DOCTOR, RELOAD.',
    )
    .option('--port-file <path>', 'where to write the port (deleted on exit)', '.reclazz/agent.port')
    .option('--port <n>', 'TCP port on 127.0.0.1 (default: ephemeral)', nonNegativeInt)
    .option('--watch <dir...>', 'class output directories to watch (snapshotted at start as loaded)', collect, [])
    .option('--heartbeat-ms <n>', 'HEARTBEAT period in ms (default 10000; 0 disables)', nonNegativeInt)
    .option('--capture-delay-ms <n>', 'delay from BUILD ok / SCAN to the capture, in ms (default 100)', nonNegativeInt)
    .option('--reload-ms <n>', 'how long a captured class reads running, in ms (default 50)', nonNegativeInt)
    .option('--old-agent', 'act as an agent from before build ownership (no "agent" in CONNECTED, no VERIFY/DOCTOR/RELOAD)')
    .option('--not-ready', 'handlers not wired: BUILD, VERIFY, DOCTOR, RELOAD get no reply')
    .option('--crlf', 'end sent lines with \\r\\n')
    .addOption(
      new Option('--verify-status <status>', 'final status of every reload attempt').choices(['applied', 'failed', 'unverified']),
    )
    .option('--reject-started', 'answer every "BUILD started request=..." with BUILD_REJECTED (the hold is not taken)')
    .option('--silent <verb>', 'act on commands with this verb but never reply (lost receipts); repeatable', collect, [])
    .option('--log', 'print each received command line to stderr')
    .addHelpText(
      'after',
      `
Examples:
  $ reclazz-fake-agent --watch target/classes
  $ reclazz-fake-agent --port-file .reclazz/agent.port --watch build/classes/java/main --log
  $ reclazz-fake-agent --watch target/classes --verify-status failed
  $ reclazz-fake-agent --silent VERIFY          # receipts for VERIFY never arrive
  $ reclazz-fake-agent --old-agent              # client must refuse an owned build

Talk to it by hand (bash's /dev/tcp, no extra tools):
  $ exec 3<>/dev/tcp/127.0.0.1/"$(cat .reclazz/agent.port)"; printf 'DOCTOR d1\\n' >&3; head -2 <&3`,
    );
}

/** The version of the reclazz-build package this file belongs to (found upward), or `unknown`. */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'reclazz-build' && pkg.version !== undefined) return pkg.version;
    } catch {
      // no package.json here
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

/** Build the intercept hook for --reject-started, --silent and --log, or undefined. */
function interceptFor(options: CliOptions): FakeAgentOptions['intercept'] {
  const silent = new Set(options.silent.map((verb) => verb.toUpperCase()));
  if (!options.rejectStarted && silent.size === 0 && !options.log) return undefined;
  return (cmd: InterceptCommand): InterceptAction | undefined => {
    if (options.log) process.stderr.write(`[client ${cmd.client}] ${cmd.line}\n`);
    if (silent.has(cmd.verb)) return { kind: 'drop' };
    if (options.rejectStarted && !options.notReady) {
      const build = parseBuild(cmd.words);
      if (build?.kind === 'build' && build.state === 'started' && build.request) {
        const owner = build.owner === undefined || options.oldAgent ? '' : ` owner=${build.owner}`;
        return { kind: 'reply', lines: [formatEvent('INFO', `BUILD_REJECTED ${build.request} started${owner}`)] };
      }
    }
    return undefined;
  };
}

/**
 * Parse `argv` (user arguments only, without node and script path), start the fake agent and
 * write the ready line `fake agent listening on 127.0.0.1:<port> (port file <path>)` to `out`.
 * Relative `--port-file` / `--watch` paths resolve against process.cwd(). Throws on bad
 * arguments (commander's own messages go to stderr) or when the port cannot be bound.
 */
export async function runFakeAgentCli(argv: string[], out: Writable = process.stdout): Promise<FakeAgent> {
  const program = createProgram().exitOverride();
  program.parse(argv, { from: 'user' });
  const options = program.opts<CliOptions>();
  const portFile = resolve(options.portFile);
  const agent = await startFakeAgent({
    portFile,
    port: options.port,
    watchDirs: options.watch.map((dir) => resolve(dir)),
    heartbeatMs: options.heartbeatMs,
    captureDelayMs: options.captureDelayMs,
    reloadMs: options.reloadMs,
    agentVersion: options.oldAgent ? null : undefined,
    notReady: options.notReady,
    crlf: options.crlf,
    verifyStatus: options.verifyStatus ? () => options.verifyStatus : undefined,
    intercept: interceptFor(options),
  });
  out.write(`fake agent listening on 127.0.0.1:${agent.port} (port file ${portFile})\n`);
  return agent;
}
