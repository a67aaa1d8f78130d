/**
 * The VERIFY ledger: the latest reload receipt per class (protocol.md, "VERIFY").
 */
import type { HoldKind, VerifyStatus } from './types.js';
import type { BuildState } from './wire.js';

/** Longest VERIFY `detail` and `source` (protocol.md, "Batch-wide verdicts"). Characters. */
const MAX_RECEIPT_TEXT_CHARS = 200;

/** `text` cut to {@link MAX_RECEIPT_TEXT_CHARS}. */
export function receiptText(text: string): string {
  return text.slice(0, MAX_RECEIPT_TEXT_CHARS);
}

/** The latest reload attempt of one class. */
export interface Receipt {
  /** SHA-256 of the bytes the attempt used (observedSha256). */
  sha256: string;
  status: 'running' | 'applied' | 'failed' | 'unverified';
  /** The class file the batch read, as the agent reports its path. */
  source: string;
  detail: string;
  /** ISO-8601 UTC completion time; `''` while running. */
  completedAt: string;
  /** Number of the batch that made the attempt, so a late completion cannot overwrite a newer attempt. */
  batch: number;
}

/**
 * Body of `VERIFY_RESULT <token> <json>`: all string fields, in this order (protocol.md, "VERIFY").
 */
export interface VerifyResult {
  requestId: string;
  sessionId: string;
  className: string;
  expectedSha256: string;
  /** The receipt's sha; `''` for not_observed. */
  observedSha256: string;
  status: VerifyStatus;
  source: string;
  detail: string;
  /** `''` unless the receipt's attempt completed. */
  completedAt: string;
}

/**
 * Latest receipts of at most `limit` classes; recording a receipt makes its class the most
 * recently updated, and the least recently updated class is evicted beyond the limit.
 */
export class VerifyLedger {
  private readonly receipts = new Map<string, Receipt>();

  constructor(private readonly limit: number) {}

  /** Classes with a receipt. */
  get size(): number {
    return this.receipts.size;
  }

  /** The receipt of `className`, if retained. Reading does not refresh its age. */
  get(className: string): Receipt | undefined {
    return this.receipts.get(className);
  }

  /**
   * Store `receipt` as the latest for `className` (its source and detail cut to 200 characters),
   * evicting the least recently updated beyond the limit.
   */
  record(className: string, receipt: Receipt): void {
    this.receipts.delete(className);
    this.receipts.set(className, { ...receipt, source: receiptText(receipt.source), detail: receiptText(receipt.detail) });
    while (this.receipts.size > this.limit) {
      const oldest = this.receipts.keys().next().value as string;
      this.receipts.delete(oldest);
    }
  }

  /** Forget every receipt whose source is `source` (cut as recorded): a new batch read that file again. */
  forgetSource(source: string): void {
    const cut = receiptText(source);
    for (const [className, receipt] of this.receipts) if (receipt.source === cut) this.receipts.delete(className);
  }

  /** Forget everything (an application restart). */
  clear(): void {
    this.receipts.clear();
  }

  /**
   * Answer VERIFY: no receipt -> `not_observed`; a receipt for other bytes -> `mismatch` with
   * that receipt's sha as observedSha256; otherwise the receipt's own status.
   */
  verify(requestId: string, sessionId: string, className: string, expectedSha256: string): VerifyResult {
    const receipt = this.receipts.get(className);
    const base = { requestId, sessionId, className, expectedSha256 };
    if (!receipt) {
      return {
        ...base,
        observedSha256: '',
        status: 'not_observed',
        source: '',
        detail: 'no retained receipt for this class in this session',
        completedAt: '',
      };
    }
    if (receipt.sha256 !== expectedSha256) {
      return {
        ...base,
        observedSha256: receipt.sha256,
        status: 'mismatch',
        source: receipt.source,
        detail: `latest attempt used different bytes (that attempt is ${receipt.status})`,
        completedAt: receipt.completedAt,
      };
    }
    return {
      ...base,
      observedSha256: receipt.sha256,
      status: receipt.status,
      source: receipt.source,
      detail: receipt.detail,
      completedAt: receipt.completedAt,
    };
  }
}

/**
 * The build hold's rules (protocol.md, "BUILD" hold rules), as a pure decision function.
 * Side effects (capture scheduling, broadcasts, receipts) live in the server.
 */

/** The hold the agent currently has. `sinceMs` is epoch ms of the first acquisition. */
export interface HoldState {
  kind: HoldKind;
  owner?: string;
  sinceMs: number;
}

/** No hold. */
export const NO_HOLD: HoldState = { kind: 'none', sinceMs: 0 };

/**
 * Outcome of one BUILD command against the current hold: rejected (nothing changes; `BUILD_REJECTED`
 * when a request token was given), or accepted with the hold afterwards. `reacquired` and `failed`
 * cancel a pending capture; after `capture-scheduled` (ok) the hold stays until the capture runs.
 */
export type BuildDecision =
  | { accepted: false }
  | { accepted: true; event: 'acquired' | 'reacquired' | 'failed' | 'capture-scheduled'; hold: HoldState };

/**
 * Apply the hold rules:
 * - named (`owner` given): only `started` acquires a free hold; the same owner (compared
 *   case-sensitively) may send started/failed/ok; another owner, or any named command against a
 *   legacy hold, is rejected; named ok/failed with no hold are rejected.
 * - unowned (`owner` undefined): rejected while a named hold exists; otherwise legacy rules:
 *   started or failed take/keep a legacy hold, ok schedules a capture (which releases it).
 * `nowMs` (epoch ms) stamps a newly acquired hold.
 */
export function decideBuild(
  current: HoldState,
  state: BuildState,
  owner: string | undefined,
  nowMs: number,
): BuildDecision {
  if (owner !== undefined) {
    if (current.kind === 'none') {
      return state === 'started'
        ? { accepted: true, event: 'acquired', hold: { kind: 'named', owner, sinceMs: nowMs } }
        : { accepted: false };
    }
    if (current.kind === 'legacy' || current.owner !== owner) return { accepted: false };
    return { accepted: true, event: continuing(state), hold: current };
  }
  if (current.kind === 'named') return { accepted: false };
  if (current.kind === 'none') {
    if (state === 'ok') return { accepted: true, event: 'capture-scheduled', hold: current };
    return {
      accepted: true,
      event: state === 'started' ? 'acquired' : 'failed',
      hold: { kind: 'legacy', sinceMs: nowMs },
    };
  }
  return { accepted: true, event: continuing(state), hold: current };
}

function continuing(state: BuildState): 'reacquired' | 'failed' | 'capture-scheduled' {
  return state === 'started' ? 'reacquired' : state === 'failed' ? 'failed' : 'capture-scheduled';
}

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
