/**
 * The agent subcommands' work, loaded by `commands.ts` (this folder) only when one of them runs, so
 * that `--help`, `--version` and the build command do not load it: loading the config and
 * settings, running the core function and rendering the result (human text, or `--json` lines).
 */
import type { Command } from 'commander';
import { findClassDirs } from '../classes/dirs.js';
import { ConfigError, loadConfig, type LoadedConfig } from './config.js';
import type { AgentTarget } from '../agent/handshake.js';
import type { RunEvent } from '../outcome/events.js';
import type { CommandResult } from '../outcome/result.js';
import { droppedText, eventLine, failureText, followingText, successText } from '../report/commands.js';
import { HumanReporter } from '../report/human.js';
import { commandResultToJson, eventToJson, finalLines, jsonLine } from '../report/json.js';
import { LiveLine, paletteFor, wantsLive } from '../report/palette.js';
import { EVENT_OUTBOX_LIMITS, LineOutbox } from '../report/outbox.js';
import { onStdoutBroken, stdoutBroken, writeStdout } from './stdout.js';
import { configFailure } from './usage.js';
import { runDoctor } from '../commands/doctor.js';
import { followEvents } from '../commands/events.js';
import { runReload } from '../commands/reload.js';
import { runScan } from '../commands/scan.js';
import { type AgentFlags, resolveSettings, type Settings } from './options.js';
import { verifyClassFiles } from '../commands/verify.js';

/** doctor: DOCTOR and the watch coverage of the class output directories here. Returns the exit status. */
export function doctorAction(cmd: Command, signal: AbortSignal): Promise<number> {
  return agentCommand(cmd, signal, 'asking the agent for DOCTOR', (target, s) =>
    runDoctor({ ...target, classDirs: s.classDirs, pathMap: s.pathMap }),
  );
}

/** status, pause, resume: one RELOAD request and its receipt. Returns the exit status. */
export function reloadAction(action: 'status' | 'pause' | 'resume', cmd: Command, signal: AbortSignal): Promise<number> {
  return agentCommand(cmd, signal, `waiting for the RELOAD_STATE receipt of RELOAD ${action}`, (target) => runReload(action, target));
}

/** scan: SCAN, then a DOCTOR on the same connection. Returns the exit status. */
export function scanAction(cmd: Command, signal: AbortSignal): Promise<number> {
  return agentCommand(cmd, signal, 'sending SCAN', (target) => runScan(target));
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
    ...(ctx.settings.portFiles === undefined ? {} : { portFiles: ctx.settings.portFiles }),
  };
}

/** The class output directories of the project here: found ones plus --classes-dir or the config's. */
function projectClassDirs(cwd: string, settings: Settings): string[] {
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
    escapes: p.enabled,
  });
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
    writeStdout(`${jsonLine(commandResultToJson(result))}\n`);
  } else {
    const text = successText(result, paletteFor(process.stdout, process.env), flags.verbose === true);
    if (text !== undefined) writeStdout(text);
  }
  const failure = failureText(result, err);
  if (failure !== undefined && !(flags.quiet && result.exitCode === 0)) stderr(failure);
}

/** verify: the build's VERIFY rules and report. Returns the exit status. */
export async function verifyAction(cmd: Command, paths: string[], signal: AbortSignal): Promise<number> {
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
  const result = await verifyClassFiles({
    ...target(ctx, signal),
    paths: paths.length > 0 ? paths : roots,
    roots,
    verifyTimeoutMs: ctx.settings.verifyTimeoutMs,
    onEvent,
  });
  if (flags.json) for (const line of finalLines(result, 'verify')) writeStdout(`${line}\n`);
  human.result(result);
  return result.exitCode;
}

/**
 * events: follow until Ctrl-C, the agent closing the stream, or stdout's reader going away.
 * The socket is read the whole time; what stdout does not take is held, bounded (see
 * report/outbox.ts), and the lines dropped are counted on stderr. Returns the exit status.
 */
export async function eventsAction(cmd: Command, signal: AbortSignal): Promise<number> {
  const ctx = context(cmd);
  if (ctx instanceof ConfigError) return configFailure(ctx, cmd.optsWithGlobals<AgentFlags>().json, 'events');
  const { flags } = ctx;
  const out = paletteFor(process.stdout, process.env);
  const err = paletteFor(process.stderr, process.env);
  const stop = new AbortController();
  signal.addEventListener('abort', () => stop.abort(signal.reason), { once: true });
  const unlisten = onStdoutBroken(() => stop.abort('EPIPE'));
  const stdout = { write: (text: string) => stdoutBroken() || process.stdout.write(text), once: process.stdout.once.bind(process.stdout) };
  const outbox = new LineOutbox(stdout, EVENT_OUTBOX_LIMITS, (dropped) => stderr(droppedText(dropped, err)));
  const result = await followEvents({
    ...target(ctx, stop.signal),
    onConnected: (connected, endpoint) => {
      if (flags.json) outbox.push(`${jsonLine(connected)}\n`);
      else if (!flags.quiet) stderr(followingText(endpoint, err));
    },
    onEvent: (event) => {
      if (flags.json) outbox.push(`${jsonLine(event)}\n`);
      else if (event.level !== 'HEARTBEAT' || flags.verbose) outbox.push(eventLine(event, out));
    },
  });
  // The stream ended: what is held still goes out, unless a signal comes or stdout's reader goes first.
  if (result.reason !== 'interrupted' && !stop.signal.aborted) {
    await Promise.race([outbox.whenEmpty(), new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))]);
  }
  unlisten();
  if (stdoutBroken()) return 0;
  // Say what stdout never had.
  if (outbox.missing() > 0) stderr(droppedText(outbox.missing(), err));
  if (!flags.json || result.exitCode !== 0 || result.reason === 'stream-ended') {
    const failure = failureText(result, err);
    if (failure !== undefined) stderr(failure);
  }
  return result.exitCode;
}
