/**
 * The build command of a cycle, checked before anything is sent to the agent: not inside
 * another safe build, resolvable (wrapper script or tool), not one that never finishes, found
 * and executable.
 */
import type { Outcome } from '../outcome/outcome.js';
import { neverEndingArgument, resolveBuildCommand, type BuildCommand } from '../tool/resolve.js';
import { checkExecutable } from '../tool/spawn.js';

export type { BuildCommand };
import { NESTED_ENV, type CycleOptions, type Host } from './options.js';

/** The command to run, or the outcome that refuses it (nothing was sent). */
export async function prepareBuild(
  options: CycleOptions,
  host: Host,
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
