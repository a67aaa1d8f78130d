/**
 * Running the build command of a cycle (tool/spawn.ts), told as `build-start` and `build-end`
 * events; its process group is recorded with the run lock, and processes of it that outlived
 * the command and had to be stopped are named in a warning.
 */
import type { BuildGroup, BuildRun, RunEvent } from '../outcome/facts.js';
import { warningText } from '../report/step-words.js';
import { type BuildCommand, describeCommand } from '../tool/resolve.js';
import { runBuild } from '../tool/spawn.js';
import { type CycleOptions, type Host, NESTED_ENV } from './options.js';

/** Where a build runs and who hears of it. */
export interface BuildPlace {
  host: Host;
  emit: (event: RunEvent) => void;
  signal: AbortSignal | undefined;
  /** Records the build's process group with the run lock (a session that holds it); false when it could not be written. */
  recordBuild?: ((group: BuildGroup) => boolean) | undefined;
}

/**
 * Runs `command` with the host's environment plus {@link NESTED_ENV}=1 (a safe build inside it
 * refuses to start), its stdout where `options.buildStdout` says.
 * @param held whether it runs under the hold (false: `--allow-no-agent`).
 */
export async function spawnBuild(
  place: BuildPlace,
  command: BuildCommand,
  options: CycleOptions,
  classDirs: string[],
  held: boolean,
): Promise<BuildRun> {
  const { host, emit, signal } = place;
  const moved = command.movedFrom === undefined ? {} : { movedFrom: command.movedFrom };
  emit({ type: 'build-start', command: describeCommand(command), wrapper: command.wrapper, cwd: command.cwd, ...moved, classDirs, held });
  const build = await runBuild(command, {
    stdoutToStderr: options.buildStdout === 'stderr',
    env: { ...host.env, [NESTED_ENV]: '1' },
    process: host,
    sharesTerminal: host.sharesTerminal,
    platform: host.platform,
    self: host.pid,
    onGroup: (group) => {
      if (place.recordBuild?.(group) === false) emit({ type: 'warning', message: warningText.groupNotRecorded(group.pgid) });
    },
    ...(signal === undefined ? {} : { signal }),
  });
  if (build.stopped !== undefined) emit({ type: 'warning', message: warningText.stoppedLeftovers(build.stopped) });
  emit({
    type: 'build-end',
    exitCode: build.exitCode,
    durationMs: build.durationMs,
    ...(build.signal === undefined ? {} : { signal: build.signal }),
  });
  return build;
}
