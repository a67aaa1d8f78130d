/**
 * The VERIFY ledger: the latest reload receipt per class (protocol.md, "VERIFY").
 */
import type { VerifyStatus } from './types.js';

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
