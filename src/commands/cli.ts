/**
 * The agent subcommands on the command line: doctor, status, pause, resume, scan, verify,
 * events. Each parses its options, loads the project config, runs its core function (in this
 * folder) and renders the result: human text (what was asked for on stdout, refusals on
 * stderr) or, with `--json`, JSON lines on stdout. `src/cli.ts` supplies signal handling and
 * the exit.
 */
import type { Command } from 'commander';
import { findClassDirs } from '../build/outputs.js';
import { ConfigError, loadConfig, type LoadedConfig } from '../config.js';
import { EXIT_USAGE, type RunEvent, type RunResult } from '../events.js';
import { eventLine, failureText, successText } from '../report/commands.js';
import { HumanReporter } from '../report/human.js';
import { commandResultToJson, eventToJson, finalLines, type JsonAction } from '../report/json.js';
import { LiveLine, wantsLive } from '../report/live.js';
import { paletteFor } from '../report/palette.js';
import { onStdoutBroken, stdoutBroken, writeStdout } from '../report/stdout.js';
import type { AgentTarget } from './connect.js';
import { runDoctor } from './doctor.js';
import { followEvents } from './events.js';
import { runReload } from './reload.js';
import { runScan } from './scan.js';
import { resolveSettings, type AgentFlags, type Settings } from './settings.js';
import type { CommandResult } from './types.js';
import { verifyClassFiles } from './verify.js';

/** What `src/cli.ts` lends the subcommands. */
export interface CommandHost {
  /** Adds the agent-finding and output options (--port, --port-file, --timeout, --config, --json, --quiet, --verbose). */
  addAgentOptions(command: Command): Command;
  /** Runs `body` with SIGINT/SIGTERM as its AbortSignal, then exits with the status it returns. */
  run(body: (signal: AbortSignal) => Promise<number>): Promise<void>;
  /** Collects a repeatable option. */
  collect(value: string, previous: string[] | undefined): string[];
  /** Parses a whole number option. */
  integer(name: string, min: number, max?: number): (value: string) => number;
}

const AGENT_EXIT = `
Exit status:
  0    done: the receipt came and says what was asked
  2    usage error or invalid config; nothing was sent
  69   refused or uncertain: no agent, stale or bad port file, handshake failed, old agent,
       or the receipt did not come (the outcome is then UNCERTAIN, never taken as done)
  130  interrupted (143 for SIGTERM)`;

/** Registers the subcommands on `program`. */
export function addAgentCommands(program: Command, host: CommandHost): void {
  const doctor = program
    .command('doctor')
    .description("show the agent's DOCTOR evidence, and whether it watches this project's class output directories");
  host
    .addAgentOptions(doctor)
    .option('--classes-dir <dir>', 'a class output directory to check besides target/classes and build/classes/*/main (repeatable)', host.collect)
    .addHelpText(
      'after',
      `
Examples:
  $ reclazz-build doctor
  $ reclazz-build doctor --port-file app/.reclazz/agent.port --classes-dir app/build/classes/kotlin/main
  $ reclazz-build doctor --json | jq '.classDirs'
${AGENT_EXIT}`,
    )
    .action((_o, cmd: Command) => host.run((signal) => agentCommand(cmd, signal, 'asking the agent for DOCTOR', (target, s, cwd) => runDoctor({ ...target, classDirs: projectClassDirs(cwd, s) }))));

  const reloadHelp: Record<'status' | 'pause' | 'resume', [string, string]> = {
    status: ["show the agent's reload state (RELOAD status): paused, pending classes and actions, build hold", 'reclazz-build status --json | jq .state.paused'],
    pause: ['pause automatic reload agent-wide (RELOAD pause); changes stay pending until resume', 'reclazz-build pause && ./gradlew classes && reclazz-build resume'],
    resume: ['resume automatic reload (RELOAD resume); pending work is scheduled. It never releases a build hold', 'reclazz-build resume'],
  };
  for (const action of ['status', 'pause', 'resume'] as const) {
    const command = program.command(action).description(reloadHelp[action][0]);
    host
      .addAgentOptions(command)
      .addHelpText(
        'after',
        `
Prints the exact RELOAD_STATE receipt. Without it the outcome is uncertain: exit 69, and
check with \`reclazz-build status\` before retrying.

Examples:
  $ reclazz-build ${action}
  $ ${reloadHelp[action][1]}
${AGENT_EXIT}`,
      )
      .action((_o, cmd: Command) => host.run((signal) => agentCommand(cmd, signal, `waiting for the RELOAD_STATE receipt of RELOAD ${action}`, (target) => runReload(action, target))));
  }

  const scan = program.command('scan').description('ask the agent to scan its watched directories now (SCAN); the agent never answers SCAN');
  host
    .addAgentOptions(scan)
    .addHelpText(
      'after',
      `
SCAN has no reply. To a current agent a DOCTOR follows on the same connection: its answer
shows that the agent read the SCAN line, not what the scan found. A build hold or a manual
pause still keeps class files back.

Examples:
  $ mvn -q compile && reclazz-build scan
${AGENT_EXIT}`,
    )
    .action((_o, cmd: Command) => host.run((signal) => agentCommand(cmd, signal, 'sending SCAN', (target) => runScan(target))));

  const verify = program
    .command('verify')
    .description('VERIFY class files against the running agent by SHA-256 (a directory: every .class below it)')
    .argument('[paths...]', 'class files or directories (default: the class output directories here)');
  host
    .addAgentOptions(verify)
    .option('--verify-timeout <ms>', 'one deadline for all VERIFY polling (default 30000)', host.integer('--verify-timeout', 1))
    .option('--classes-dir <dir>', 'a class output directory: files below it are named relative to it (repeatable)', host.collect)
    .addHelpText(
      'after',
      `
The same VERIFY loop, deadline and 512-class capacity as a build. A point-in-time check:
classes never reloaded in this agent session read not_observed until the deadline.

Examples:
  $ reclazz-build verify target/classes
  $ reclazz-build verify build/classes/java/main/com/acme/Greeter.class --verify-timeout 5000
  $ reclazz-build verify --json target/classes | jq -c 'select(.type=="class" and .status!="applied")'

Exit status:
  0    every class given is proven applied (VERIFY applied, SHA-256 matched)
  2    usage error: no such path, not a class file, no class files, invalid config
  69   refused: no agent, handshake, old agent, agent not ready, VERIFY not supported
  75   not every class was proven applied by the deadline
  130  interrupted (143 for SIGTERM)`,
    )
    .action((paths: string[], _o, cmd: Command) => host.run((signal) => verifyCommand(cmd, paths, signal)));

  const events = program.command('events').description("follow the agent's event stream like tail -f, until Ctrl-C or the agent goes away");
  host
    .addAgentOptions(events)
    .addHelpText(
      'after',
      `
Lines are coloured by level in a terminal; HEARTBEAT lines only with --verbose. With --json,
every line the agent sends (CONNECTED and HEARTBEAT included) is written as it came, one JSON
object per line. The agent serves at most 5 clients; a follower takes one.

Examples:
  $ reclazz-build events
  $ reclazz-build events --json | jq -c 'select(.level=="RELOAD")'
  $ reclazz-build events --json > agent-events.jsonl &

Exit status:
  0    the agent closed the stream (the app stopped or restarted), or stdout's reader went away
  2    usage error or invalid config
  69   no agent, stale or bad port file, handshake failed
  130  stopped with Ctrl-C (143 for SIGTERM)`,
    )
    .action((_o, cmd: Command) => host.run((signal) => eventsCommand(cmd, signal)));
}

/** The project here: config and settings, or a usage error already reported. */
interface Context {
  flags: AgentFlags;
  cwd: string;
  settings: Settings;
  config: LoadedConfig;
}

function context(cmd: Command): Context | ConfigError {
  const flags = cmd.optsWithGlobals<AgentFlags>();
  const cwd = process.cwd();
  try {
    const config = loadConfig(cwd, flags.config);
    return { flags, cwd, config, settings: resolveSettings(flags, config.config, cwd, process.env) };
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

function target(ctx: Context, signal: AbortSignal): AgentTarget {
  return {
    cwd: ctx.cwd,
    env: process.env,
    timeoutMs: ctx.settings.timeoutMs,
    signal,
    ...(ctx.settings.port === undefined ? {} : { port: ctx.settings.port }),
    ...(ctx.settings.portFile === undefined ? {} : { portFile: ctx.settings.portFile }),
  };
}

/** The class output directories of the project here: found ones plus --classes-dir or the config's. */
export function projectClassDirs(cwd: string, settings: Settings): string[] {
  return [...new Set([...findClassDirs(cwd, 'command'), ...settings.classDirs])];
}

function stderr(text: string): void {
  process.stderr.write(text);
}

function isLive(): boolean {
  return wantsLive(process.stderr, process.env);
}

function liveLine(): LiveLine {
  const p = paletteFor(process.stderr, process.env);
  return new LiveLine({
    write: stderr,
    enabled: isLive(),
    columns: () => process.stderr.columns,
    prefix: `${p.dim('reclazz-build:')} `,
    prefixWidth: 'reclazz-build: '.length,
  });
}

/**
 * Reports an invalid config: the error on stderr and, with --json, the `result` line of
 * `action` with reason `usage`. Returns the exit status (2).
 */
export function configFailure(error: ConfigError, json: boolean | undefined, action: JsonAction): number {
  stderr(`${paletteFor(process.stderr, process.env).red(`error: ${error.message}`)}\n`);
  if (json) {
    const lines = action === 'build' || action === 'verify' ? finalLines(usageResult(error.message), action) : [JSON.stringify(commandResultToJson(usageCommandResult(action, error.message)))];
    writeStdout(`${lines.join('\n')}\n`);
  }
  return EXIT_USAGE;
}

function usageResult(message: string): RunResult {
  return { reason: 'usage', exitCode: EXIT_USAGE, message, verdicts: [], hold: 'none', provenLive: false, durationMs: 0 };
}

function usageCommandResult(action: CommandResult['action'], message: string): CommandResult {
  const base = { reason: 'usage', exitCode: EXIT_USAGE, message, durationMs: 0 } as const;
  switch (action) {
    case 'doctor':
      return { ...base, action, classDirs: [] };
    case 'scan':
      return { ...base, action, sent: false, delivered: false };
    case 'events':
      return { ...base, action, events: 0 };
    default:
      return { ...base, action };
  }
}

/** doctor, status, pause, resume, scan: one request, one result. */
async function agentCommand(
  cmd: Command,
  signal: AbortSignal,
  waiting: string,
  run: (target: AgentTarget, settings: Settings, cwd: string) => Promise<CommandResult>,
): Promise<number> {
  const action = cmd.name() as CommandResult['action'];
  const ctx = context(cmd);
  if (ctx instanceof ConfigError) return configFailure(ctx, cmd.optsWithGlobals<AgentFlags>().json, action);
  const live = liveLine();
  live.show(waiting);
  const result = await run(target(ctx, signal), ctx.settings, ctx.cwd);
  live.hide();
  renderCommandResult(result, ctx.flags);
  return result.exitCode;
}

function renderCommandResult(result: CommandResult, flags: AgentFlags): void {
  const err = paletteFor(process.stderr, process.env);
  if (flags.json) {
    writeStdout(`${JSON.stringify(commandResultToJson(result))}\n`);
  } else {
    const text = successText(result, paletteFor(process.stdout, process.env), flags.verbose === true);
    if (text !== undefined) writeStdout(text);
  }
  const failure = failureText(result, err);
  if (failure !== undefined && !(flags.quiet && result.exitCode === 0)) stderr(failure);
}

/** verify: the build's VERIFY rules and report. */
async function verifyCommand(cmd: Command, paths: string[], signal: AbortSignal): Promise<number> {
  const ctx = context(cmd);
  const flags = cmd.optsWithGlobals<AgentFlags>();
  if (ctx instanceof ConfigError) return configFailure(ctx, flags.json, 'verify');
  const roots = projectClassDirs(ctx.cwd, ctx.settings);
  const human = new HumanReporter({
    write: stderr,
    live: isLive(),
    quiet: flags.quiet === true,
    verbose: flags.verbose === true,
    paint: paletteFor(process.stderr, process.env),
    columns: () => process.stderr.columns,
  });
  human.status('connecting to the agent');
  const onEvent = (event: RunEvent): void => {
    if (flags.json) writeStdout(`${eventToJson(event)}\n`);
    human.event(event);
  };
  const result = await verifyClassFiles({ ...target(ctx, signal), paths: paths.length > 0 ? paths : roots, roots, verifyTimeoutMs: ctx.settings.verifyTimeoutMs, onEvent });
  if (flags.json) writeStdout(`${finalLines(result, 'verify').join('\n')}\n`);
  human.result(result);
  return result.exitCode;
}

/** events: follow until Ctrl-C, the agent closing the stream, or stdout's reader going away. */
async function eventsCommand(cmd: Command, signal: AbortSignal): Promise<number> {
  const ctx = context(cmd);
  if (ctx instanceof ConfigError) return configFailure(ctx, cmd.optsWithGlobals<AgentFlags>().json, 'events');
  const { flags } = ctx;
  const out = paletteFor(process.stdout, process.env);
  const err = paletteFor(process.stderr, process.env);
  const stop = new AbortController();
  signal.addEventListener('abort', () => stop.abort(signal.reason), { once: true });
  const unlisten = onStdoutBroken(() => stop.abort('EPIPE'));
  const result = await followEvents({
    ...target(ctx, stop.signal),
    onConnected: (connected, endpoint) => {
      if (flags.json) writeStdout(`${JSON.stringify(connected)}\n`);
      else if (!flags.quiet) {
        stderr(`${err.dim('reclazz-build:')} following agent ${endpoint.agentVersion ?? '(old, no version)'} on 127.0.0.1:${endpoint.port} (${endpoint.source}); Ctrl-C to stop\n`);
      }
    },
    onEvent: (event) => {
      if (flags.json) writeStdout(`${JSON.stringify(event)}\n`);
      else if (event.level !== 'HEARTBEAT' || flags.verbose) writeStdout(eventLine(event, out));
    },
  });
  unlisten();
  if (stdoutBroken()) return 0;
  if (!flags.json || result.exitCode !== 0 || result.reason === 'agent-closed') {
    const failure = failureText(result, err);
    if (failure !== undefined) stderr(failure);
  }
  return result.exitCode;
}
