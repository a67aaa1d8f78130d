/**
 * A build command of a run: checked before anything is sent to the agent ({@link prepareBuild}),
 * then run with the run's host and told as events ({@link spawnBuild}).
 */
import type { BuildGroup, BuildRun, ToolKind } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { Outcome } from '../outcome/outcome.js';
import type { ProcHost } from './proc.js';
import { type BuildCommand, describeCommand, neverEndingArgument, resolveBuildCommand } from './resolve.js';
import { checkExecutable, type ProcessControl, runBuild } from './spawn.js';

/** The environment variable set for the build command, and refused when already set (no nesting). */
export const NESTED_ENV = 'RECLAZZ_SAFE_BUILD_ACTIVE';

/** What a build needs of the process it runs from (session/options.ts `Host` is one). */
export interface BuildHost extends ProcessControl {
  /** Folder the build runs in (absolute). */
  cwd: string;
  /** The build's environment: it finds its tool on its PATH. */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** True when the user's terminal delivers Ctrl-C to the build itself (stdin is a TTY). */
  sharesTerminal: boolean;
  /** Where the build's processes are looked up (/proc on Linux). */
  proc: ProcHost;
  /** This process: never one of the build's leftovers. */
  pid: number;
}

/** What to build and where its output goes (session/options.ts `CycleOptions` has these). */
export interface BuildOptions {
  /** `gradle`, `mvn`, or `command` (then `args[0]` is the executable). */
  tool: ToolKind;
  /** Arguments passed to the build tool untouched. */
  args: string[];
  /** Where the build tool's stdout goes: `inherit` (default) or `stderr` (with `--json`: stdout carries only JSON lines). */
  buildStdout?: 'inherit' | 'stderr';
  /** Keep the last lines the build writes, for a failed build's result (`build.output`); they pass through pipes of ours. */
  keepBuildOutput?: boolean;
}

/**
 * The build command of a cycle, checked before anything is sent to the agent: not nested in another
 * safe build, resolvable (wrapper script or tool), not never-ending, found and executable; or the refusal.
 */
export async function prepareBuild(
  options: Pick<BuildOptions, 'tool' | 'args'>,
  host: Pick<BuildHost, 'cwd' | 'env' | 'platform'>,
): Promise<{ kind: 'ok'; command: BuildCommand } | { kind: 'refused'; outcome: Outcome; command?: BuildCommand }> {
  if (host.env[NESTED_ENV] === '1') return { kind: 'refused', outcome: { reason: 'nested', variable: NESTED_ENV } };
  let command: BuildCommand;
  try {
    command = resolveBuildCommand(options.tool, options.args, { cwd: host.cwd, platform: host.platform });
  } catch (error) {
    return { kind: 'refused', outcome: { reason: 'usage', problem: { kind: 'input', text: (error as Error).message, forBuild: true } } };
  }
  const never = neverEndingArgument(command);
  if (never !== undefined)
    return { kind: 'refused', outcome: { reason: 'usage', problem: { kind: 'never-ending', argument: never } }, command };
  const executable = await checkExecutable(command, host.platform, host.env);
  if (executable.kind === 'not-executable')
    return { kind: 'refused', outcome: { reason: 'command-not-executable', path: executable.path }, command };
  if (executable.kind === 'missing')
    return { kind: 'refused', outcome: { reason: 'command-not-found', file: command.file, tool: command.kind }, command };
  return { kind: 'ok', command };
}

/** Where a build runs and who hears of it. */
export interface BuildPlace {
  host: BuildHost;
  emit: (event: RunEvent) => void;
  signal: AbortSignal | undefined;
  /** Records the build's process group with the run lock (a session that holds it); false when it could not be written. */
  recordBuild?: ((group: BuildGroup) => boolean) | undefined;
}

/**
 * Runs `command` (tool/spawn.ts) with {@link NESTED_ENV}=1 added (a safe build inside it refuses to
 * start), told as `build-start` and `build-end`; leftovers that had to be stopped are named in a warning.
 * @param held whether it runs under the hold (false: `--allow-no-agent`).
 */
export async function spawnBuild(
  place: BuildPlace,
  command: BuildCommand,
  options: Pick<BuildOptions, 'buildStdout' | 'keepBuildOutput'>,
  classDirs: string[],
  held: boolean,
): Promise<BuildRun> {
  const { host, emit, signal } = place;
  const moved = command.movedFrom === undefined ? {} : { movedFrom: command.movedFrom };
  emit({ type: 'build-start', command: describeCommand(command), wrapper: command.wrapper, cwd: command.cwd, ...moved, classDirs, held });
  const build = await runBuild(command, {
    stdoutToStderr: options.buildStdout === 'stderr',
    keepOutput: options.keepBuildOutput === true,
    env: { ...host.env, [NESTED_ENV]: '1' },
    process: host,
    proc: host.proc,
    sharesTerminal: host.sharesTerminal,
    platform: host.platform,
    self: host.pid,
    onGroup: (group) => {
      if (place.recordBuild?.(group) === false) emit({ type: 'warning', kind: 'group-not-recorded', pgid: group.pgid });
    },
    ...(signal === undefined ? {} : { signal }),
  });
  if (build.stopped !== undefined) emit({ type: 'warning', kind: 'stopped-leftovers', stopped: build.stopped });
  emit({
    type: 'build-end',
    exitCode: build.exitCode,
    durationMs: build.durationMs,
    ...(build.signal === undefined ? {} : { signal: build.signal }),
  });
  return build;
}
