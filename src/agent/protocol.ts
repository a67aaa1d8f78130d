/**
 * The status-socket grammar as the agent implements it (`shared/protocol.md`): event
 * schemas, command formatting, token and binary-name rules, and exact receipt parsing.
 * Pure functions only; the connection lives in `connection.ts`.
 */
import { randomUUID } from 'node:crypto';
// zod/mini: the same schemas as `zod`'s, built with functions, so a bundle keeps only what it uses.
import * as z from 'zod/mini';
import { isToken } from './limits.js';
import type { ReloadAction, ReloadState, VerifyReceipt } from '../outcome/facts.js';

/** A fresh request token (a UUID, which fits {@link TOKEN_PATTERN}). */
export function newToken(): string {
  return randomUUID();
}

/**
 * One event line from the agent, after JSON parsing (protocol.md "The stream").
 * Unknown fields and unknown levels are tolerated; `level` and `message` must be strings.
 */
export const agentEventSchema = z.looseObject({
  level: z.string(),
  message: z.string(),
  timestamp: z.optional(z.string()),
});
export type AgentEvent = z.infer<typeof agentEventSchema>;

/** The first line on connect; `agent` absent means an agent too old for owned builds. */
export const connectedSchema = z.looseObject({
  level: z.literal('CONNECTED'),
  version: z.number().check(z.int()),
  agent: z.optional(z.string()),
});
export type ConnectedEvent = z.infer<typeof connectedSchema>;

/** DOCTOR_RESULT JSON when the agent cannot observe itself. */
export const doctorUnavailableSchema = z.looseObject({ requestId: z.string(), status: z.literal('unavailable'), detail: z.string() });

/** VERIFY statuses (protocol.md "VERIFY"). */
const VERIFY_STATUSES = [
  'applied',
  'running',
  'not_observed',
  'failed',
  'mismatch',
  'unverified',
] as const satisfies readonly VerifyReceipt['status'][];

/** VERIFY_RESULT JSON: every field is a string. */
export const verifyResultSchema = z.looseObject({
  requestId: z.string(),
  sessionId: z.string(),
  className: z.string(),
  expectedSha256: z.string(),
  observedSha256: z.string(),
  status: z.enum(VERIFY_STATUSES),
  source: z.string(),
  detail: z.string(),
  completedAt: z.string(),
});

/** BUILD states, lower case as the agent reports them. */
export type BuildState = 'started' | 'ok' | 'failed';

/** A parsed BUILD receipt (protocol.md "BUILD"). `owner` is undefined when the reply carried no owner suffix. */
export interface BuildReceipt {
  kind: 'BUILD_ACK' | 'BUILD_REJECTED';
  request: string;
  state: BuildState;
  owner: string | undefined;
}

/** `BUILD <state> request=<request> owner=<owner>`. Throws on an invalid token (a bug, never user input). */
export function buildLine(state: BuildState, request: string, owner: string): string {
  assertToken(request, 'request token');
  assertToken(owner, 'owner token');
  return `BUILD ${state} request=${request} owner=${owner}`;
}

/** `DOCTOR <token>` with exactly one space. */
export function doctorLine(token: string): string {
  assertToken(token, 'doctor token');
  return `DOCTOR ${token}`;
}

/** `RELOAD <action> request=<token>`. */
export function reloadLine(action: ReloadAction, token: string): string {
  assertToken(token, 'request token');
  return `RELOAD ${action} request=${token}`;
}

/** `DIAGNOSE <binary class name>`; the caller checked the name with {@link isVerifiableClassName}. Throws on another name. */
export function diagnoseLine(className: string): string {
  if (!isVerifiableClassName(className)) throw new Error(`not a verifiable binary class name: ${className}`);
  return `DIAGNOSE ${className}`;
}

/**
 * `VERIFY <token> <binary class name> <sha256>`. The caller must have checked the name with
 * {@link isVerifiableClassName} and the hash with {@link isSha256}: the agent never answers
 * an invalid VERIFY, so sending one would only burn the deadline. Throws on invalid input.
 */
export function verifyLine(token: string, className: string, sha256: string): string {
  assertToken(token, 'request token');
  if (!isVerifiableClassName(className)) throw new Error(`not a verifiable binary class name: ${className}`);
  if (!isSha256(sha256)) throw new Error(`not a lower-case SHA-256: ${sha256}`);
  return `VERIFY ${token} ${className} ${sha256}`;
}

const ASCII_JAVA_IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
// Built on first use: its Unicode classes take about 1 ms to build and compile, and almost every
// name is ASCII.
let javaIdentifier: RegExp | undefined;

/**
 * A Java identifier as the agent reads one (Character.isJavaIdentifierStart, then
 * isJavaIdentifierPart): a letter, letter number, currency symbol (`$`, `€`) or connector
 * punctuation (`_`, `‿`) first, then those, digits and combining marks; never an
 * identifier-ignorable format or control character, which the agent refuses.
 */
function isJavaIdentifier(part: string): boolean {
  if (ASCII_JAVA_IDENTIFIER.test(part)) return true;
  javaIdentifier ??= /^[\p{L}\p{Nl}\p{Sc}\p{Pc}][\p{L}\p{Nl}\p{Sc}\p{Pc}\p{Nd}\p{Mn}\p{Mc}]*$/u;
  return javaIdentifier.test(part);
}
const RESERVED_FILE_NAMES = new Set(['module-info', 'package-info']);

/** True for `package-info` and `module-info` (in any package): descriptors the JVM never reloads, and VERIFY refuses. */
export function isDescriptorClassName(name: string): boolean {
  return RESERVED_FILE_NAMES.has(name.slice(name.lastIndexOf('.') + 1));
}

/**
 * True when `name` is a binary class name the agent's VERIFY accepts (protocol.md "VERIFY"):
 * at most 256 characters, dot-separated Java identifiers (`$` allowed), no format or control
 * characters, and not `module-info` or `package-info`.
 */
export function isVerifiableClassName(name: string): boolean {
  if (name.length === 0 || name.length > 256) return false;
  const parts = name.split('.');
  if (!parts.every(isJavaIdentifier)) return false;
  return !isDescriptorClassName(name);
}

/** True for exactly 64 lower-case hex digits. */
function isSha256(value: string): boolean {
  return /^[0-9a-f]{64}$/.test(value);
}

function assertToken(token: string, what: string): void {
  if (!isToken(token)) throw new Error(`invalid ${what}: ${JSON.stringify(token)}`);
}

/**
 * Parses the message of an INFO event as a BUILD receipt for `request`, or returns undefined
 * when it is anything else (another token's reply, a broadcast, malformed). Matching is exact
 * and case-sensitive on the token and owner (protocol.md "BUILD").
 */
export function parseBuildReceipt(message: string, request: string): BuildReceipt | undefined {
  const words = message.split(' ');
  const [kind, token, state, ownerWord, ...rest] = words;
  if (kind !== 'BUILD_ACK' && kind !== 'BUILD_REJECTED') return undefined;
  if (token !== request || rest.length > 0) return undefined;
  if (state !== 'started' && state !== 'ok' && state !== 'failed') return undefined;
  if (ownerWord === undefined) return { kind, request: token, state, owner: undefined };
  if (!ownerWord.startsWith('owner=')) return undefined;
  const owner = ownerWord.slice('owner='.length);
  return isToken(owner) ? { kind, request: token, state, owner } : undefined;
}

/**
 * Splits `<WORD> <token> <json>` messages (VERIFY_RESULT, DOCTOR_RESULT) and returns the
 * parsed JSON object, or undefined when the word or token differ or the JSON is not an object.
 */
export function parseTokenJson(message: string, word: string, token: string): unknown {
  const prefix = `${word} ${token} `;
  if (!message.startsWith(prefix)) return undefined;
  try {
    const value: unknown = JSON.parse(message.slice(prefix.length));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Parses `RELOAD_STATE <token> <action> paused=.. pendingClasses=.. pendingActions=.. buildHold=..` for `token`. */
export function parseReloadState(message: string, token: string): ReloadState | undefined {
  const match =
    /^RELOAD_STATE (\S+) (pause|resume|status) paused=(true|false) pendingClasses=(\d+) pendingActions=(\d+) buildHold=(none|named|legacy)$/.exec(
      message,
    );
  if (!match || match[1] !== token) return undefined;
  return {
    action: match[2] as ReloadAction,
    paused: match[3] === 'true',
    pendingClasses: Number(match[4]),
    pendingActions: Number(match[5]),
    buildHold: match[6] as ReloadState['buildHold'],
  };
}
