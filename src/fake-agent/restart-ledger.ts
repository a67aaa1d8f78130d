/**
 * What PENDING says needs a restart, as the agent keeps it (agent ui/RestartLedger.java, whose
 * text is not stored; its words are taken from the agent's tests, SuperclassReportingVerificationTest
 * and RestartLedgerTest): one entry per (subject, reason), a repeated concern counted, at most 200,
 * kept for the whole agent session: a later save that applies does not take an entry away.
 */

/** Most entries the ledger keeps (RestartLedgerTest). */
const MAX_ENTRIES = 200;

/** The digest's closing lines (exact: a client reads until one of them). */
const NOTHING_NEEDS_RESTART = 'Nothing from this session needs a restart.';
const EVERYTHING_ELSE_LIVE = 'Everything else you changed is already live.';

/** The restart concerns of one agent session. */
export class RestartLedger {
  /** `<subject>\u0000<reason>` -> times noted, in the order first noted. */
  private readonly entries = new Map<string, { subject: string; reason: string; times: number }>();

  /** How many entries there are (HEALTH's "<n> things waiting on a restart"). */
  get size(): number {
    return this.entries.size;
  }

  /** Notes that `subject` (a binary class name) needs a restart for `reason`. */
  note(subject: string, reason: string): void {
    const key = `${subject}\u0000${reason}`;
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.times += 1;
    else if (this.entries.size < MAX_ENTRIES) this.entries.set(key, { subject, reason, times: 1 });
  }

  /** Forgets everything (an application restart). */
  clear(): void {
    this.entries.clear();
  }

  /** PENDING's digest lines: one sentence when empty; else a count, an entry per line, and the closing line. */
  digest(): string[] {
    if (this.entries.size === 0) return [NOTHING_NEEDS_RESTART];
    const count = this.entries.size === 1 ? 'One thing from this session needs' : `${this.entries.size} things from this session need`;
    const lines = [`${count} a restart to take effect:`];
    for (const { subject, reason, times } of this.entries.values()) lines.push(`${subject}: ${reason}${times > 1 ? ` (${times} times)` : ''}`);
    return [...lines, EVERYTHING_ELSE_LIVE];
  }
}
