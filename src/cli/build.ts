/**
 * The build command behind the command line (`main.ts` loads this module only to run a build):
 * reads the config, resolves the settings, renders the run's events (human on stderr, or JSON
 * lines on stdout with --json) and runs the core (`run.ts`).
 */
import type { ToolKind } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import { configFailure } from './usage.js';
import { type AgentFlags, type ReclazzConfig, resolveSettings } from './options.js';
import { ConfigError, loadConfig } from './config.js';
import type { RunResult } from '../outcome/result.js';
import { HumanReporter } from '../report/human.js';
import { eventToJson, finalLines } from '../report/json.js';
import { paletteFor, wantsLive } from '../report/palette.js';
import { processHost } from './host.js';
import { writeStdout } from './stdout.js';
import { withSmallYoungGeneration } from './memory.js';
import { runSafeBuild, type SafeBuildOptions } from '../run.js';

/** The main command's options (parsed by commander); unset ones come from the config or the defaults. */
export interface CliOptions extends AgentFlags {
  owner?: string;
  verify: boolean;
  allowNoAgent?: boolean;
  awaitRestart?: boolean;
}

/** SIGINT/SIGTERM as an AbortSignal while a run lasts (`main.ts` supplies it); `owner` names the hold in its last words. */
export type Interrupts = (owner: () => string | undefined) => { signal: AbortSignal; dispose: () => void };

/**
 * Runs one build from the command line: its events and result are rendered as they come.
 * @returns the exit status (an invalid config is reported here and gives 2).
 */
export async function buildAction(tool: ToolKind, args: string[], opts: CliOptions, interruptController: Interrupts): Promise<number> {
  const read = readBuildOptions(tool, args, opts);
  if (typeof read === 'number') return read;
  const options: SafeBuildOptions = { ...read.options, allowNoAgent: opts.allowNoAgent === true };
  const output = makeOutput(opts);
  const signals = interruptController(() => output.owner);
  // The young generation kept at its size while the run reads, scans and verifies (memory.ts).
  const result = await withSmallYoungGeneration(() =>
    runSafeBuild(options, { onEvent: output.event, signal: signals.signal }, processHost()),
  );
  signals.dispose();
  output.result(result);
  return result.exitCode;
}

/** The options a build and a watch share, from the flags, the config file and the defaults. */
type SharedBuildOptions = Omit<SafeBuildOptions, 'allowNoAgent'>;

/**
 * One home for turning the command line and the config file into a build's options (a single
 * run and every watch cycle read them alike).
 * @returns the options and the config, or the exit status of an invalid config (2, reported).
 */
export function readBuildOptions(
  tool: ToolKind,
  args: string[],
  opts: CliOptions,
): { options: SharedBuildOptions; config: ReclazzConfig } | number {
  const cwd = process.cwd();
  let loaded;
  try {
    loaded = loadConfig(cwd, opts.config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return configFailure(error, opts.json, 'build');
  }
  const { config } = loaded;
  const { port, portFiles, classDirs, ...plain } = resolveSettings(opts, config, cwd, process.env);
  const restartCommand = opts.restartCommand ?? config.restartCommand;
  const defaultArgs = tool === 'gradle' ? config.gradleArgs : tool === 'mvn' ? config.mvnArgs : undefined;
  const options: SharedBuildOptions = {
    tool,
    args: args.length === 0 && defaultArgs !== undefined ? defaultArgs : args,
    cwd,
    // The options with a default (options.ts) carry the names a session and a cycle take.
    ...plain,
    verify: opts.verify,
    classDirs,
    // With --json, stdout carries only JSON lines: the build's own stdout goes to stderr.
    buildStdout: opts.json ? 'stderr' : 'inherit',
    // A failed build's JSON result carries the build's last lines; kept only off a terminal, where a
    // pipe of ours changes nothing the build can see (colours, progress bars).
    keepBuildOutput: opts.json === true && process.stderr.isTTY !== true,
    ...(port === undefined ? {} : { port }),
    ...(portFiles === undefined ? {} : { portFiles }),
    ...(opts.owner === undefined ? {} : { owner: opts.owner }),
    ...(restartCommand === undefined ? {} : { restartCommand }),
    ...(opts.awaitRestart === true ? { awaitRestart: true } : {}),
  };
  return { options, config };
}

interface Output {
  event: (event: RunEvent) => void;
  result: (result: RunResult) => void;
  owner: string | undefined;
}

function makeOutput(opts: CliOptions): Output {
  const human = new HumanReporter({
    write: (text) => process.stderr.write(text),
    live: wantsLive(process.stderr, process.env),
    quiet: opts.quiet === true,
    verbose: opts.verbose === true,
    paint: paletteFor(process.stderr, process.env),
    columns: () => process.stderr.columns,
  });
  human.status('connecting to the agent');
  const output: Output = {
    owner: undefined,
    event: (event) => {
      if (event.type === 'hold') output.owner = event.owner;
      if (opts.json) writeStdout(`${eventToJson(event)}\n`);
      human.event(event);
    },
    result: (result) => {
      // Line by line: with thousands of classes, one joined string was megabytes more at the run's peak.
      if (opts.json) for (const line of finalLines(result)) writeStdout(`${line}\n`);
      human.result(result);
    },
  };
  return output;
}
