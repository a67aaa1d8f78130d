/**
 * The last lines a build wrote, bounded: what a failed build's `--json` result carries
 * (`build.output`), so that a script or a coding agent sees the compiler's errors without the log.
 */
import { StringDecoder } from 'node:string_decoder';

/** At most this many lines are kept: the end of a failed build is where its errors are summed up. */
const TAIL_LINES = 40;
/** A longer line is cut to this many characters and an ellipsis. */
const LINE_CHARS = 300;

/** Terminal control sequences (colours, cursor moves) and other control characters but tab: noise outside a terminal. */
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]/g;

/**
 * Keeps the last {@link TAIL_LINES} lines of one or more streams, in the order their lines
 * end; each stream's partial line stays its own until its newline (or the end).
 */
export class OutputTail {
  private readonly lines: string[] = [];
  private readonly partial = new Map<object, { decoder: StringDecoder; text: string }>();

  /** Adds a chunk of `stream`'s bytes. */
  push(stream: object, chunk: Buffer | string): void {
    let state = this.partial.get(stream);
    if (state === undefined) this.partial.set(stream, (state = { decoder: new StringDecoder('utf8'), text: '' }));
    const pieces = (state.text + (typeof chunk === 'string' ? chunk : state.decoder.write(chunk))).split('\n');
    // Only the unfinished line is held, bounded: a line that never ends cannot grow the memory.
    state.text = pieces.pop()!.slice(0, LINE_CHARS * 4);
    for (const piece of pieces) this.add(piece);
  }

  /** The lines kept, oldest first, each stream's unfinished line last; control sequences removed. */
  end(): string[] {
    for (const state of this.partial.values()) if (state.text !== '') this.add(state.text);
    this.partial.clear();
    return [...this.lines];
  }

  private add(raw: string): void {
    // A progress line redraws itself after a carriage return: its last state is what was seen.
    const text = (raw.endsWith('\r') ? raw.slice(0, -1) : raw).split('\r').at(-1)!.replace(CONTROL, '').trimEnd();
    this.lines.push(text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS)}…` : text);
    if (this.lines.length > TAIL_LINES) this.lines.shift();
  }
}
