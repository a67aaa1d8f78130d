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
 */
export function hasControl(text: string): boolean {
  return ESCAPED.test(text);
}
