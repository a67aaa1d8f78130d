/**
 * One live status line on a terminal: what is awaited and for how long, redrawn in place
 * (carriage return, erase line) and never scrolled. Disabled, it writes nothing at all, so
 * pipes, files and CI logs get no animation. Without escape sequences (colour off: NO_COLOR)
 * it erases by writing spaces over what it drew, so that nothing it writes holds an ESC byte.
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
