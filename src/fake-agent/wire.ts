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
 * One status event as the JSON text of one line, WITHOUT the line terminator:
 * `{"level":L,"message":M,"timestamp":T,...extra}` (protocol.md, "The stream").
 * The message is truncated per {@link truncateMessage}; `extra` fields follow the three
 * standard ones in insertion order and cannot override them.
 * Useful for building raw lines for `InterceptAction` `reply`.
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
