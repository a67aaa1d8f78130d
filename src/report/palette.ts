/**
 * Colour through kleur, decided per output stream: stderr may be a terminal while stdout is a
 * pipe, or the other way round. kleur's own switch is global, so a {@link Palette} turns it on
 * only for the duration of each call it makes.
 */
import kleur from 'kleur';

/** Colours one piece of text. */
export type Paint = (text: string) => string;

/** The styles reclazz-build uses. */
export interface Palette {
  readonly enabled: boolean;
  bold: Paint;
  dim: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  magenta: Paint;
  cyan: Paint;
  white: Paint;
  /** Bold and coloured, for verdict marks. */
  boldGreen: Paint;
  boldYellow: Paint;
  boldRed: Paint;
}

/**
 * True when colour should be used on `stream`: NO_COLOR (non-empty) turns it off, FORCE_COLOR
 * turns it on (unless `0` or `false`), TERM=dumb turns it off, else the stream's own terminal
 * status decides.
 */
function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** A palette that colours when `enabled`, else returns text unchanged. */
export function palette(enabled: boolean): Palette {
  const style = (apply: (text: string) => string): Paint => {
    if (!enabled) return (text) => text;
    return (text) => {
      const was = kleur.enabled;
      kleur.enabled = true;
      try {
        return apply(text);
      } finally {
        kleur.enabled = was;
      }
    };
  };
  return {
    enabled,
    bold: style((t) => kleur.bold(t)),
    dim: style((t) => kleur.dim(t)),
    red: style((t) => kleur.red(t)),
    green: style((t) => kleur.green(t)),
    yellow: style((t) => kleur.yellow(t)),
    magenta: style((t) => kleur.magenta(t)),
    cyan: style((t) => kleur.cyan(t)),
    white: style((t) => kleur.white(t)),
    boldGreen: style((t) => kleur.green().bold(t)),
    boldYellow: style((t) => kleur.yellow().bold(t)),
    boldRed: style((t) => kleur.red().bold(t)),
  };
}

/** The palette for a stream in this environment. */
export function paletteFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Palette {
  return palette(wantsColor(stream, env));
}

/** Colour per agent event level: the agent's reloads green, structural magenta, compile cyan, warnings yellow, errors red. */
export function levelColour(p: Palette, level: string): Paint {
  switch (level) {
    case 'RELOAD':
    case 'OK':
      return p.green;
    case 'STRUCTURAL_RELOAD':
      return p.magenta;
    case 'COMPILE':
      return p.cyan;
    case 'WARN':
      return p.yellow;
    case 'ERROR':
      return p.red;
    case 'HEARTBEAT':
      return p.dim;
    default:
      return p.white;
  }
}

/**
 * Text from the agent or the file system made safe to show in a terminal. Raw, ESC and CSI run
 * terminal commands, CR and LF could fake a verdict line, and bidirectional controls reorder the
 * line ("Trojan Source"). So C0 controls (but TAB, which build tools indent with), DEL, C1
 * controls, U+202A-U+202E, U+2066-U+2069 and lone surrogates are shown as `\xHH`/`\uHHHH`. A
 * backslash stays, for Windows paths; where the ambiguity matters, `hasControl` sees the raw text.
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

/** `text` with the characters listed above shown as escapes; unchanged text is returned as is. Never throws. */
export function visible(text: string): string {
  return ESCAPED.test(text) ? text.replace(ESCAPED_ALL, escapeOne) : text;
}

/**
 * True when `text` holds a character that `visible` escapes: a class file so named is reported
 * as not verifiable rather than guessed at.
 * @internal for its tests
 */
export function hasControl(text: string): boolean {
  return ESCAPED.test(text);
}

/**
 * `value` with every string in it, at any depth of plain objects and arrays, passed through
 * {@link visible}, so no field of a fact is missed; `value` itself when nothing changed. Never throws.
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
 * `JSON.stringify` output with DEL, C1 and bidirectional controls (which it leaves raw) written
 * as `\u` escapes: the same JSON value, and no byte a terminal would act on.
 */
export function terminalSafeJson(json: string): string {
  return JSON_RAW.test(json) ? json.replace(JSON_RAW_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : json;
}

const JSON_RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const JSON_RAW_ALL = new RegExp(JSON_RAW.source, 'g');

/**
 * One live status line on a terminal, redrawn in place; disabled, it writes nothing (pipes, CI).
 * With colour off (NO_COLOR) it erases with spaces, so nothing it writes holds an ESC byte.
 */

/**
 * True when a live line may be drawn on `stream`: it is a terminal that can erase a line
 * (TERM is not `dumb`) and this is not CI (CI logs keep every carriage return).
 */
export function wantsLive(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.CI ?? '') === '' && env.TERM !== 'dumb';
}

/** How often the elapsed time is redrawn, in ms. */
const LIVE_TICK_MS = 100;

/** Options for {@link LiveLine}. */
export interface LiveLineOptions {
  write: (text: string) => void;
  /** False: every call is a no-op. */
  enabled: boolean;
  /** The terminal width, to keep the line from wrapping (a wrapped line cannot be replaced). */
  columns: () => number | undefined;
  /** Drawn before the text (may hold colour codes; not counted in the width). */
  prefix: string;
  /** Width of the prefix as shown. */
  prefixWidth: number;
  /** Erase with `ESC [ K` (true), or with spaces (false: no escape sequence at all). */
  escapes: boolean;
}

/** The live status line. Call {@link LiveLine.hide} before exiting. */
export class LiveLine {
  private text: string | undefined;
  private since = 0;
  private shown = false;
  /** Columns of the line last drawn (for erasing it with spaces). */
  private width = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LiveLineOptions) {}

  /** Shows `text` with the time elapsed since `sinceMs` (performance.now(); default now). */
  show(text: string, sinceMs: number = performance.now()): void {
    if (!this.options.enabled) return;
    if (text !== this.text) this.since = sinceMs;
    this.text = text;
    this.draw();
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.draw(), LIVE_TICK_MS);
      this.timer.unref();
    }
  }

  /** Erases the line for other output; {@link LiveLine.redraw} puts it back. */
  clear(): void {
    if (!this.shown) return;
    this.options.write(this.options.escapes ? '\r\x1b[K' : `\r${' '.repeat(this.width)}\r`);
    this.shown = false;
    this.width = 0;
  }

  /** Draws the current status again after other output. */
  redraw(): void {
    if (this.text !== undefined && this.timer !== undefined) this.draw();
  }

  /** Erases the line and shows nothing until the next {@link LiveLine.show}; call it when done. */
  hide(): void {
    this.clear();
    this.text = undefined;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private draw(): void {
    if (this.text === undefined) return;
    const elapsed = (performance.now() - this.since) / 1000;
    let body = `${this.text} · ${elapsed.toFixed(1)} s`;
    const width = (this.options.columns() ?? 80) - 1 - this.options.prefixWidth;
    if (width > 1 && body.length > width) body = `${body.slice(0, width - 1)}…`;
    const drawn = this.options.prefixWidth + body.length;
    // Without escapes, spaces cover what a longer line before left.
    const erase = this.options.escapes ? '\r\x1b[K' : '\r';
    const pad = this.options.escapes || !this.shown ? '' : ' '.repeat(Math.max(0, this.width - drawn));
    this.options.write(`${erase}${this.options.prefix}${body}${pad}`);
    this.shown = true;
    this.width = drawn;
  }
}
