/**
 * Parsers of option values for commander: each returns the value or throws commander's
 * InvalidArgumentError naming the option and what it takes (a usage error, exit 2).
 */
import { InvalidArgumentError } from 'commander';
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
