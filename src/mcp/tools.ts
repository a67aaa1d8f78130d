/**
 * The tools of `reclazz-build mcp`: build, verify, doctor and status, each one run of the command
 * line with `--json` (child.ts), its `result` line returned as `structuredContent` under the
 * schema of that line (report/schema.ts) as `outputSchema`, `isError` whenever its exit status
 * is not 0, and a short text (report/mcp-words.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { OPTIONS } from '../cli/options.js';
import { commandResultLineSchemas, runResultLineSchema } from '../report/schema.js';
import { CALL_REFUSALS, commandResultText, INPUT_WORDS, progressText, runResultText, TOOL_DESCRIPTIONS } from '../report/mcp-words.js';
import { runCli } from './child.js';

type Key = keyof typeof OPTIONS;
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The configuration file's keys each tool takes: those of the command line's flags of its command (and a build's default arguments). */
const KEYS = {
  build: [
    'port',
    'portFile',
    'timeoutMs',
    'verifyTimeoutMs',
    'waitMs',
    'waitForAgentMs',
    'classesDirs',
    'pathMap',
    'gradleArgs',
    'mvnArgs',
    'restartCommand',
    'restartTimeoutMs',
  ],
  verify: ['port', 'portFile', 'timeoutMs', 'verifyTimeoutMs', 'classesDirs', 'pathMap'],
  doctor: ['port', 'portFile', 'timeoutMs', 'classesDirs', 'pathMap'],
  status: ['port', 'portFile', 'timeoutMs', 'pathMap'],
} as const satisfies Record<string, readonly Key[]>;

/** A tool's `options`: the configuration file's schema of each of its keys (cli/options.ts), unknown keys refused. */
function optionsSchema(keys: readonly Key[]) {
  return z
    .strictObject(Object.fromEntries(keys.map((key) => [key, z.optional(OPTIONS[key].schema()).describe(OPTIONS[key].expected)])))
    .optional()
    .describe(INPUT_WORDS.options);
}

const cwd = z.string().describe(INPUT_WORDS.cwd);

/**
 * The command line's flags for `options`, as `--name=value` (a value that starts with `-` stays a
 * value). Keys without a flag (gradleArgs, mvnArgs) are the build command's business.
 */
function flags(options: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(options ?? {})) {
    const spec = OPTIONS[key as Key];
    if (value === undefined || !('flag' in spec)) continue;
    const flag = `--${spec.flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    if (key === 'pathMap')
      for (const [agent, local] of Object.entries(value as Record<string, string>)) out.push(`${flag}=${agent}=${local}`);
    else for (const one of Array.isArray(value) ? value : [value]) out.push(`${flag}=${String(one)}`);
  }
  return out;
}

/** The build command's words: `gradleArgs` or `mvnArgs` when the tool is given no arguments, as the config file's are. */
function buildWords(command: string[], options: Record<string, unknown> | undefined): string[] {
  const defaults = command[0] === 'gradle' ? options?.gradleArgs : command[0] === 'mvn' ? options?.mvnArgs : undefined;
  return command.length === 1 && Array.isArray(defaults) ? [...command, ...(defaults as string[])] : command;
}

/** Where the server runs the command line from, and what it tells the client of a call that cannot answer. */
export interface ToolHost {
  node: string;
  cli: string;
  env: NodeJS.ProcessEnv;
  /** This server's log (stderr). */
  log: (chunk: Buffer | string) => void;
  /** Tells the client a result it will not receive as an answer (a cancelled call's). */
  notice: (text: string) => void;
  /** Aborted when the server stops (its client closed stdin, or a signal): every call's run is stopped as by Ctrl-C. */
  stopping: AbortSignal;
  /** Each call while it lasts: the server answers them before it exits. */
  running: Set<Promise<unknown>>;
}

/** Registers the four tools on `server`. */
export function registerTools(server: McpServer, host: ToolHost): void {
  const annotations = { destructiveHint: false, openWorldHint: false };
  server.registerTool(
    'build',
    {
      title: 'Build and prove live',
      description: TOOL_DESCRIPTIONS.build,
      inputSchema: { cwd, command: z.array(z.string()).min(1).describe(INPUT_WORDS.command), options: optionsSchema(KEYS.build) },
      outputSchema: runResultLineSchema,
      annotations: { ...annotations, readOnlyHint: false, idempotentHint: false },
    },
    (args, extra) => {
      const [first, second] = args.command;
      if (!(first === 'mvn' || first === 'gradle' || (first === '--' && second !== undefined))) return refused(CALL_REFUSALS.command);
      return call(host, extra, args.cwd, ['--json', ...flags(args.options), ...buildWords(args.command, args.options)], 'run');
    },
  );
  server.registerTool(
    'verify',
    {
      title: 'Verify class files live',
      description: TOOL_DESCRIPTIONS.verify,
      inputSchema: { cwd, paths: z.array(z.string()).optional().describe(INPUT_WORDS.paths), options: optionsSchema(KEYS.verify) },
      outputSchema: runResultLineSchema,
      annotations: { ...annotations, readOnlyHint: true },
    },
    (args, extra) => call(host, extra, args.cwd, ['verify', '--json', ...flags(args.options), '--', ...(args.paths ?? [])], 'run'),
  );
  for (const [name, title, schema] of [
    ['doctor', 'Check the set-up', commandResultLineSchemas.doctor],
    ['status', 'Reload state and hold', commandResultLineSchemas.reload],
  ] as const)
    server.registerTool(
      name,
      {
        title,
        description: TOOL_DESCRIPTIONS[name],
        inputSchema: { cwd, options: optionsSchema(KEYS[name]) },
        outputSchema: schema,
        annotations: { ...annotations, readOnlyHint: true },
      },
      (args, extra) => call(host, extra, args.cwd, [name, '--json', ...flags(args.options)], 'command'),
    );
}

function refused(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs one call's command line in `cwd` (see {@link answer}), counted in `host.running` until it is answered. */
function call(host: ToolHost, extra: Extra, cwd: string, args: string[], kind: 'run' | 'command'): Promise<CallToolResult> {
  const answered = answer(host, extra, cwd, args, kind);
  const tracked = answered.finally(() => host.running.delete(tracked));
  host.running.add(tracked);
  return answered;
}

/** Runs the command line in `cwd`, its events as progress when the client asked for it; its result as the answer. */
async function answer(host: ToolHost, extra: Extra, cwd: string, args: string[], kind: 'run' | 'command'): Promise<CallToolResult> {
  if (!path.isAbsolute(cwd) || !fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) return refused(CALL_REFUSALS.cwd(cwd));
  const token = extra._meta?.progressToken;
  let progress = 0;
  const { exitCode, result } = await runCli({
    node: host.node,
    cli: host.cli,
    cwd,
    args,
    env: host.env,
    signal: AbortSignal.any([extra.signal, host.stopping]),
    onLog: host.log,
    onLine: (line) => {
      const message = progressText(line);
      if (token === undefined || message === undefined) return;
      progress += 1;
      void extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
        .catch(() => {});
    },
  });
  if (result === undefined) return refused(CALL_REFUSALS.noResult(exitCode));
  const text =
    kind === 'run'
      ? runResultText(result as unknown as Parameters<typeof runResultText>[0])
      : commandResultText(result as { message: string; hint: string | null });
  // A cancelled call gets no answer (the protocol drops it): its result goes to the log and the client as a notice.
  if (extra.signal.aborted) {
    host.log(`${text}\n`);
    host.notice(CALL_REFUSALS.cancelled(text));
  }
  return { content: [{ type: 'text', text }], structuredContent: result, isError: exitCode !== 0 };
}
