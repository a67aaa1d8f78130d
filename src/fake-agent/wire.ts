/**
 * Wire-level facts of the agent's status socket (protocol.md, "The stream" and "Commands"):
 * event framing, timestamps, message truncation, token / class-name / hash validation.
 *
 * Independent of the client code in src/ on purpose: a shared bug would hide from tests.
 */


/** Longest event message before truncation (protocol.md, "The stream"). Characters. */
export const MAX_MESSAGE_CHARS = 4096;
/** Suffix appended to a truncated message (protocol.md, "The stream"). */
export const TRUNCATION_SUFFIX = '...(truncated)';
/** Longest accepted command line, without its terminator; 513+ closes the connection (protocol.md, "Commands"). */
export const MAX_COMMAND_CHARS = 512;
/** Request, owner and doctor tokens (protocol.md, "Commands"). */
const TOKEN_RE = /^[A-Za-z0-9_-]{1,64}$/;
/** SHA-256 of class file bytes: exactly 64 lower-case hex digits (protocol.md, "VERIFY"). */
const SHA256_RE = /^[0-9a-f]{64}$/;
/** Longest binary class name VERIFY accepts (protocol.md, "VERIFY"). Characters. */
const MAX_CLASS_NAME_CHARS = 256;

/** Current time as ISO-8601 UTC with 3 fraction digits and a `Z`, e.g. `2026-09-08T09:12:44.120Z`. */
function isoNow(): string {
  return new Date().toISOString();
}

/**
 * Cut a message longer than 4096 characters to its first 4096 plus `...(truncated)`
 * (protocol.md, "The stream"). Shorter messages are returned unchanged.
 */
function truncateMessage(message: string): string {
  return message.length > MAX_MESSAGE_CHARS
    ? message.slice(0, MAX_MESSAGE_CHARS) + TRUNCATION_SUFFIX
    : message;
}

/**
 * One status event as one line of JSON without its terminator (protocol.md, "The stream"):
 * `{"level","message","timestamp",...extra}`; `extra` cannot override the three. For `reply` intercepts.
 */
export function formatEvent(level: string, message: string, extra?: Record<string, unknown>): string {
  const event: Record<string, unknown> = {
    level,
    message: truncateMessage(message),
    timestamp: isoNow(),
  };
  if (extra) {
    for (const [key, value] of Object.entries(extra)) {
      if (!(key in event)) event[key] = value;
    }
  }
  return JSON.stringify(event);
}

/** True when `token` is a valid request/owner/doctor token: `^[A-Za-z0-9_-]{1,64}$`. */
export function isToken(token: string): boolean {
  return TOKEN_RE.test(token);
}

/** True when `sha` is exactly 64 lower-case hex digits. */
export function isSha256(sha: string): boolean {
  return SHA256_RE.test(sha);
}

// Java identifiers (Character.isJavaIdentifierStart / isJavaIdentifierPart) without the
// identifier-ignorable format/control characters, which the agent rejects.
const JAVA_IDENTIFIER_RE = /^[\p{L}\p{Nl}\p{Sc}\p{Pc}][\p{L}\p{Nl}\p{Sc}\p{Pc}\p{Mn}\p{Mc}\p{Nd}]*$/u;

/**
 * True when `name` is a binary class name VERIFY accepts (protocol.md, "VERIFY"): at most 256
 * characters, dot-separated Java identifiers (`$` allowed, e.g. `com.acme.Outer$Inner`), no
 * format/control characters, and not `module-info` / `package-info`.
 */
export function isBinaryClassName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_CLASS_NAME_CHARS) return false;
  const segments = name.split('.');
  const last = segments[segments.length - 1];
  if (last === 'module-info' || last === 'package-info') return false;
  return segments.every((segment) => JAVA_IDENTIFIER_RE.test(segment));
}

/**
 * Command grammar of the status socket (protocol.md, "Commands", "BUILD", "VERIFY", "DOCTOR",
 * "RELOAD", "SCAN, PENDING, HEALTH, DIAGNOSE"). Parsing only: a line that does not parse is
 * ignored by the agent without any answer.
 */

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
