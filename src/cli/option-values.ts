/**
 * The command line's words that commander does not check itself: parsers of option values (each
 * returns the value or throws commander's InvalidArgumentError naming the option and what it
 * takes, a usage error, exit 2), "did you mean" for a mistyped subcommand or build tool, and
 * reclazz-build's options placed after the tool's name. Loaded at every start: no zod here.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { isToken } from '../agent/limits.js';
import { parsePathMap, PathMapError, type PathMapEntry } from '../agent/path-map.js';

/** A whole number option between `min` and `max`. */
export function integer(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} takes a whole number, ${min} or more, not ${JSON.stringify(value)}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, not ${value}.`);
    return n;
  };
}

/** An owner token (protocol.md "Commands": 1-64 letters, digits, `_` or `-`). */
export function token(value: string): string {
  if (!isToken(value)) throw new InvalidArgumentError(`an owner token is 1-64 letters, digits, '_' or '-', not ${JSON.stringify(value)}.`);
  return value;
}

/** Collects a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** One `--path-map <agent path>=<local path>`, collected; local paths resolve against the working directory. */
export function pathMap(value: string, previous: PathMapEntry[] | undefined): PathMapEntry[] {
  try {
    return [...(previous ?? []), parsePathMap(value, process.cwd())];
  } catch (error) {
    if (error instanceof PathMapError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/**
 * Checks of the command line's words that commander does not make: "did you mean" for a
 * mistyped subcommand or build tool, and reclazz-build's options placed after the tool's name.
 */

/** After the tool's name these still ask for reclazz-build's help: the tools' own help builds nothing. */
const HELP_AFTER_TOOL = new Set(['--help', '-h']);

/** reclazz-build's long options that are the tool's after its name: Maven and Gradle quiet their output with it, as with -q. */
const TOOLS_KEEP = new Set(['--quiet']);

/** The tool's own short form of a long option reclazz-build has too (Maven 4's `--verbose` is `-X`; Gradle has no `--verbose`). */
const TOOL_SHORT_FORM: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  mvn: { '--version': '-v', '--verbose': '-X' },
  gradle: { '--version': '-v' },
};

/**
 * What reclazz-build makes of the words after `gradle`/`mvn`: `help` (a `--help` or `-h` among
 * them), `own` (a long option only `command` takes there: `mvn -q compile --no-verify`, as its name
 * without `=value`, and the tool's `short` form when the tool has an option of that name too), or
 * undefined: all the tool's. Words after a `--` among them are the tool's own business.
 */
export type AfterTool = { kind: 'help' } | { kind: 'own'; option: string; short: string | undefined } | undefined;

/** Reads `args`, the words after `tool` (`gradle` or `mvn`), against `command`'s options (see {@link AfterTool}). */
export function afterToolWords(tool: string, args: readonly string[], command: Command): AfterTool {
  const own = new Set(command.options.flatMap((o) => (o.long === undefined || TOOLS_KEEP.has(o.long) ? [] : [o.long])));
  for (const arg of args) {
    if (arg === '--') return undefined;
    if (HELP_AFTER_TOOL.has(arg)) return { kind: 'help' };
    const name = arg.split('=')[0]!;
    if (own.has(name)) return { kind: 'own', option: name, short: TOOL_SHORT_FORM[tool]?.[name] };
  }
  return undefined;
}

/** Optimal string alignment distance: edits, with a swap of two neighbours counted as one. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j += 1) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate closest to `word` when it is close enough to be a slip (at most 2 edits, and
 * fewer than half the candidate's letters), else undefined.
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name);
    if (distance > 0 && distance <= 2 && distance * 2 < name.length && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}
