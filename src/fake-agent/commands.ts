/**
 * Command grammar of the status socket (protocol.md, "Commands", "BUILD", "VERIFY", "DOCTOR",
 * "RELOAD", "SCAN, PENDING, HEALTH, DIAGNOSE"). Parsing only: a line that does not parse is
 * ignored by the agent without any answer.
 */
import { isBinaryClassName, isSha256, isToken } from './wire.js';

/** BUILD state, always lower case after parsing. */
export type BuildState = 'started' | 'ok' | 'failed';
/** RELOAD action (case-sensitive on the wire). */
export type ReloadAction = 'pause' | 'resume' | 'status';

/** A command the agent understands. */
export type ParsedCommand =
  | { kind: 'build'; state: BuildState; request?: string; owner?: string }
  | { kind: 'verify'; token: string; className: string; sha256: string }
  | { kind: 'doctor'; token: string }
  | { kind: 'reload'; action: ReloadAction; token: string }
  | { kind: 'scan' }
  | { kind: 'pending' }
  | { kind: 'health' }
  | { kind: 'diagnose'; className: string };

const BUILD_STATES: readonly string[] = ['started', 'ok', 'failed'];
const RELOAD_ACTIONS: readonly string[] = ['pause', 'resume', 'status'];

/**
 * Parse one command line (already without `\n`/`\r`). Words are separated by single spaces,
 * so doubled, leading or trailing spaces make an empty word and the line invalid.
 * Returns null for anything unknown or invalid (the agent then sends nothing).
 */
export function parseCommand(line: string): ParsedCommand | null {
  const words = line.split(' ');
  const verb = words[0] ?? '';
  switch (verb.toUpperCase()) {
    case 'BUILD':
      return parseBuild(words);
    case 'SCAN':
      return words.length === 1 ? { kind: 'scan' } : null;
    case 'PENDING':
      return words.length === 1 ? { kind: 'pending' } : null;
    case 'HEALTH':
      return words.length === 1 ? { kind: 'health' } : null;
    case 'DIAGNOSE':
      return words.length === 2 && isBinaryClassName(words[1]) ? { kind: 'diagnose', className: words[1] } : null;
  }
  // VERIFY, DOCTOR, RELOAD: case-sensitive verbs.
  if (verb === 'VERIFY') {
    if (words.length !== 4) return null;
    const [, token, className, sha256] = words;
    return isToken(token) && isBinaryClassName(className) && isSha256(sha256)
      ? { kind: 'verify', token, className, sha256 }
      : null;
  }
  if (verb === 'DOCTOR') {
    return words.length === 2 && isToken(words[1]) ? { kind: 'doctor', token: words[1] } : null;
  }
  if (verb === 'RELOAD') {
    if (words.length !== 3 || !RELOAD_ACTIONS.includes(words[1])) return null;
    const token = words[2].startsWith('request=') ? words[2].slice('request='.length) : '';
    return isToken(token) ? { kind: 'reload', action: words[1] as ReloadAction, token } : null;
  }
  return null;
}

/**
 * `BUILD <started|ok|failed> [request=<token>] [owner=<token>]` (protocol.md, "BUILD"):
 * verb and state case-insensitive; options in either order, at most two, no duplicates;
 * an invalid option, or `owner=` without `request=`, invalidates the whole line.
 */
export function parseBuild(words: string[]): ParsedCommand | null {
  if (words.length < 2 || words.length > 4 || words[0].toUpperCase() !== 'BUILD') return null;
  const state = words[1].toLowerCase();
  if (!BUILD_STATES.includes(state)) return null;
  const options: { request?: string; owner?: string } = {};
  for (const option of words.slice(2)) {
    const eq = option.indexOf('=');
    const key = eq < 0 ? option : option.slice(0, eq);
    const value = eq < 0 ? '' : option.slice(eq + 1);
    if (key !== 'request' && key !== 'owner') return null;
    if (options[key] !== undefined || !isToken(value)) return null;
    options[key] = value;
  }
  if (options.owner !== undefined && options.request === undefined) return null;
  return { kind: 'build', state: state as BuildState, ...options };
}
