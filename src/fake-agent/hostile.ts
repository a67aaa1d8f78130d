/**
 * A hostile or broken peer on the agent's port (issue: anything local can listen on a port a
 * stale port file names, and the agent relays text from the app). Each switch taints one kind
 * of field or breaks the connection one way, so a test can turn on exactly one.
 */
import type { DoctorStringField, HostileOptions } from './types.js';
import { formatEvent } from './wire.js';

/**
 * The default text a hostile peer puts into fields: a window-title OSC (ESC ] 0 ; ... BEL), a
 * clear screen (ESC [ 2 J), colour codes, CR, LF followed by a line that mimics a verdict, DEL,
 * the one-character CSI U+009B, and the bidi controls U+202E and U+2066..U+2069.
 */
export const HOSTILE_PAYLOAD =
  '\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u001b[0m\rCR\nreclazz-build: ✔ proven live\u007f\u009b2J\u202eevil\u2066iso\u2069';

/** Bytes of the default oversized line (1 MiB). */
const OVERSIZED_LINE_BYTES = 1024 * 1024;
/** Events of the default flood. */
const FLOOD_EVENTS = 100_000;

/** How one new connection is treated. */
export type ConnectMode = 'normal' | 'silent' | 'half-line';

/** Resolved hostile switches with the transformations the server applies to what it sends. */
export class Hostility {
  private readonly payload: string;

  constructor(private readonly options: HostileOptions = {}) {
    this.payload = options.payload ?? HOSTILE_PAYLOAD;
  }

  /** Level of a broadcast event (switch `levels`). */
  level(level: string): string {
    return this.options.levels ? level + this.payload : level;
  }

  /** Message of a broadcast event, CONNECTED's message and `agent` (switch `messages`). */
  message(message: string): string {
    return this.options.messages ? message + this.payload : message;
  }

  /** One DOCTOR string field (switch `doctor`: every string field but requestId and status, or the listed ones). */
  doctorField(field: DoctorStringField, value: string): string {
    const doctor = this.options.doctor;
    const on = doctor === true || (Array.isArray(doctor) && doctor.includes(field));
    return on ? value + this.payload : value;
  }

  /** VERIFY `detail` or `source` (switch `verify`). */
  verifyText(value: string): string {
    return this.options.verify ? value + this.payload : value;
  }

  /** A RELOAD_STATE reply, or the message of a RELOAD / STRUCTURAL_RELOAD event (switch `reload`). */
  reloadText(value: string): string {
    return this.options.reload ? value + this.payload : value;
  }

  /** A HEALTH, PENDING or DIAGNOSE line (switch `health`). */
  healthText(value: string): string {
    return this.options.health ? value + this.payload : value;
  }

  /** How to treat connection number `connection` (1-based, in accept order). */
  connectMode(connection: number): ConnectMode {
    if (applies(this.options.silentConnect, connection)) return 'silent';
    if (applies(this.options.halfLine, connection)) return 'half-line';
    return 'normal';
  }

  /** Raw text sent right after CONNECTED: an oversized line (switch `oversizedLine`), or ''. */
  oversizedLine(): string {
    const option = this.options.oversizedLine;
    if (!option) return '';
    const bytes = (option === true ? undefined : option.bytes) ?? OVERSIZED_LINE_BYTES;
    const head = '{"level":"INFO","message":"';
    return head + 'x'.repeat(Math.max(0, bytes - head.length)) + (option !== true && option.newline ? '\n' : '');
  }

  /** Events of the flood sent right after CONNECTED (switch `flood`); 0 when off. */
  floodEvents(): number {
    const option = this.options.flood;
    if (!option) return 0;
    return (option === true ? undefined : option.events) ?? FLOOD_EVENTS;
  }
}

/** The first half of a CONNECTED line, for a peer that stalls mid-line. */
export function halfConnectedLine(): string {
  const line = formatEvent('CONNECTED', 'Agent status server connected', { version: 1 });
  return line.slice(0, Math.floor(line.length / 2));
}

function applies(option: boolean | ((connection: number) => boolean) | undefined, connection: number): boolean {
  return typeof option === 'function' ? option(connection) : option === true;
}
