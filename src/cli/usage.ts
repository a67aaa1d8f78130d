/**
 * How a usage error is reported, for the build, the watch and every subcommand: the error on
 * stderr and, with `--json`, the `result` line with reason `usage` on stdout. Its own module so
 * that a build, which reports an invalid config too, loads none of the subcommands' work.
 */
import type { ConfigError } from './config.js';
import { EXIT_USAGE } from '../outcome/exit.js';
import type { UsageProblem } from '../outcome/outcome.js';
import type { JsonAction } from '../outcome/result.js';
import { usageLines } from '../report/json.js';
import { paletteFor, visible } from '../report/palette.js';
import { writeStdout } from './stdout.js';

/** The line after every usage error, ours and commander's (an unknown option, a missing value). */
export function usageHint(subcommand?: string): string {
  return `Run reclazz-build ${subcommand === undefined ? '' : `${subcommand} `}--help for usage.`;
}

/** Reports a usage error of the command line in `process.argv` and exits 2. */
export function usageError(message: string): never {
  process.stderr.write(`${paletteFor(process.stderr, process.env).red(`error: ${message}`)}\n${usageHint()}\n`);
  writeUsageJson(process.argv, [], message);
  process.exit(EXIT_USAGE);
}

/**
 * With `--json` before any `--`, writes the `result` line of a usage error: of the first of
 * `subcommands` named in `argv` (gradle and mvn are builds), else of a build.
 */
export function writeUsageJson(argv: string[], subcommands: readonly string[], problem: string | UsageProblem): void {
  const at = argv.indexOf('--', 2);
  const own = argv.slice(2, at === -1 ? undefined : at);
  if (!own.includes('--json')) return;
  const named = own.find((w) => subcommands.includes(w) && w !== 'gradle' && w !== 'mvn');
  writeStdout(`${usageLines((named ?? 'build') as JsonAction, problem).join('\n')}\n`);
}

/**
 * Reports an invalid config: the error on stderr and, with --json, the `result` line of
 * `action` with reason `usage`. Returns the exit status (2).
 */
export function configFailure(error: ConfigError, json: boolean | undefined, action: JsonAction): number {
  // The message quotes the file's path and content: made visible, like every fact shown.
  process.stderr.write(`${paletteFor(process.stderr, process.env).red(`error: ${visible(error.message)}`)}\n`);
  if (json) writeStdout(`${usageLines(action, { kind: 'config', text: error.message }).join('\n')}\n`);
  return EXIT_USAGE;
}
