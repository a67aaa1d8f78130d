/**
 * Text from the agent or the file system made safe to show in a terminal.
 *
 * A peer can put anything in an event message, a DOCTOR field, a VERIFY detail or a file name.
 * Written raw, ESC and the one-character CSI (U+009B) start terminal commands (window title,
 * clear screen, colours), CR and LF let it print a line that looks like reclazz-build's own
 * verdict, and the bidirectional embedding and isolate controls reorder what follows them on
 * the line (the "Trojan Source" characters). These are shown as escapes instead:
 *
 * - C0 controls U+0000-U+001F except TAB, and DEL U+007F: `\x00`..`\x1f`, `\x7f`;
 * - C1 controls U+0080-U+009F: `\u0080`..`\u009f`;
 * - bidirectional controls U+202A-U+202E and U+2066-U+2069: `\u202a`..`\u202e`, `\u2066`..`\u2069`;
 * - a lone surrogate (half of a UTF-16 pair, which no UTF-8 terminal can show): `\ud800` etc.
 *
 * TAB is kept: build tools indent with it and it moves the cursor only forward on its line.
 *
 * A backslash is left as it is. The trade-off: an escape in the output is then not
 * unambiguous (a name that really holds the four characters `\x1b` looks like one that holds
 * ESC), but Windows paths, which hold a backslash in every segment, stay readable. The
 * ambiguity cannot harm the terminal, since no escape is ever undone; where it matters which
 * one it was (a class name that cannot be verified), ask `hasControl`, which sees the raw text.
 */

/** One character to escape; with `u` a well-formed surrogate pair is one code point, so only lone halves match. */
// Matching control characters is the point of this module.
// eslint-disable-next-line no-control-regex
const ESCAPED = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ud800-\udfff]/u;
const ESCAPED_ALL = new RegExp(ESCAPED.source, 'gu');

/** `\xHH` below U+0080, `\uHHHH` above (every escaped character is one UTF-16 code unit). */
function escapeOne(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character, DEL, bidirectional control and lone surrogate shown as
 * an escape (see the module comment for the exact set and format). Text with nothing to
 * escape is returned unchanged without building a new string. Never throws.
 */
export function visible(text: string): string {
  return ESCAPED.test(text) ? text.replace(ESCAPED_ALL, escapeOne) : text;
}

/**
 * True when `text` holds a character that `visible` escapes: a C0 control other than TAB, DEL,
 * a C1 control, a bidirectional control or a lone surrogate. A class file whose name holds one
 * cannot be shown faithfully, so it is reported as not verifiable rather than guessed at.
 * @internal for its tests
 */
export function hasControl(text: string): boolean {
  return ESCAPED.test(text);
}

/**
 * `value` with every string in it, at any depth of plain objects and arrays, passed through
 * {@link visible}; numbers, booleans and null as they are. For the facts a renderer shows (an
 * event, a DOCTOR observation, a verdict), so that no field is missed. Returns `value` itself
 * when nothing in it needs escaping. Never throws (a cycle is not expected: facts are data).
 */
export function visibleFacts<T>(value: T): T {
  return shown(value) as T;
}

function shown(value: unknown): unknown {
  if (typeof value === 'string') return visible(value);
  if (Array.isArray(value)) {
    const items = value.map(shown);
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = shown(item);
    if (next !== item) (copy ??= { ...value })[key] = next;
  }
  return copy ?? value;
}

/**
 * A JSON line's text with DEL, the C1 controls, the bidirectional controls (which
 * `JSON.stringify` leaves raw) written as `\u` escapes: the same JSON value, and no byte a
 * terminal would act on. `json` must be `JSON.stringify` output (those characters then only
 * occur inside strings; lone surrogates and C0 controls it escapes itself).
 */
export function terminalSafeJson(json: string): string {
  return JSON_RAW.test(json) ? json.replace(JSON_RAW_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

const JSON_RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const JSON_RAW_ALL = new RegExp(JSON_RAW.source, 'g');
