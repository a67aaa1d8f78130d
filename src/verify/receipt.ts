/** Reading one VERIFY_RESULT receipt (protocol.md "VERIFY"): which request it answers, and what it means for its class. */
import { parseTokenJson, verifyResultSchema } from '../agent/protocol.js';
import type { VerifyReceipt } from '../outcome/facts.js';
import type { VerifyTarget } from './types.js';

/** Replies to VERIFY start with this. */
export const REPLY_PREFIX = 'VERIFY_RESULT ';

/** The receipt in `message` for request `token` about `target`, or undefined when it is anything else or malformed. */
export function matchReceipt(message: string, token: string, target: VerifyTarget): VerifyReceipt | undefined {
  const json = parseTokenJson(message, 'VERIFY_RESULT', token);
  if (json === undefined) return undefined;
  const parsed = verifyResultSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const receipt = parsed.data;
  return receipt.className === target.className && receipt.expectedSha256 === target.sha256 ? receipt : undefined;
}

/**
 * What a receipt means for its class: `applied` only with the exact bytes and a completion
 * time; `poll` again while it is running, not observed, or a mismatch naming the bytes from
 * before this build (not captured yet); else final.
 */
export function judge(receipt: VerifyReceipt, target: VerifyTarget): 'applied' | 'poll' | 'mismatch' | 'failed' | 'unverified' {
  switch (receipt.status) {
    case 'applied':
      return receipt.observedSha256 === target.sha256 && receipt.completedAt !== '' ? 'applied' : 'poll';
    case 'running':
    case 'not_observed':
      return 'poll';
    case 'mismatch':
      return receipt.observedSha256 === target.previousSha256 || receipt.observedSha256 === '' ? 'poll' : 'mismatch';
    case 'failed':
    case 'unverified':
      return receipt.status;
  }
}

/** The detail of a final mismatch: which bytes the agent applied instead, and why. */
export function mismatchDetail(receipt: VerifyReceipt): string {
  const base = `the agent applied other bytes (${receipt.observedSha256.slice(0, 12)}…, ${receipt.source || 'unknown source'})`;
  return receipt.detail ? `${base}: ${receipt.detail}` : base;
}
