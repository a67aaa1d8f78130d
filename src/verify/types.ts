/** What a VERIFY round is asked about and how (verify.ts). Times in ms. */
import type { VerdictStatus } from '../outcome/facts.js';

/** A class to verify: its binary name and the SHA-256 of its bytes after the build. */
export interface VerifyTarget {
  className: string;
  /** The class file, for reports. */
  path: string;
  sha256: string;
  /** Earlier bytes of this class file in this agent session: a `mismatch` naming one of them means "not captured yet". */
  previousSha256s?: readonly string[];
  /**
   * For bytes the agent has already had its capture of (there before this build): how long to
   * keep polling an answer that is not final, in ms from the call, before the verdict is
   * `timeout`, instead of the whole deadline.
   */
  settleByMs?: number;
  /** Bytes there before this build: the capacity rule (receipts of this build's capture) does not count this class. */
  once?: boolean;
  /** `not_observed` ends the ask: verdict `not-observed`, for the caller to judge. */
  notObservedFinal?: boolean;
}

/** Options for a VERIFY round. */
export interface VerifyOptions {
  /** The agent session the receipts must come from (DOCTOR's sessionId). */
  sessionId: string;
  /** One deadline for all polling, in ms from the call. */
  timeoutMs: number;
  /** Called after every final verdict. */
  onProgress?: (progress: { final: number; applied: number; total: number }) => void;
  signal?: AbortSignal;
  /** Requests in flight (default 64: far below the agent's 1000-line outbox). */
  window?: number;
  /** Receipt capacity of the agent (default 512, the agent's: agent/limits.ts). */
  capacity?: number;
  /**
   * Ends the wait for the classes the agent has not attempted, from outside the round (what the
   * agent's state shows: paused, or its capture over): called once at the start with `stop`.
   * From then on, a class not final whose receipt, answered at `sinceMs` (`performance.now()`)
   * or later, shows no attempt of its bytes (`not_observed`, or a mismatch naming earlier bytes)
   * gets the verdict `status` with `detail`; only the classes of this build's capture (not those
   * asked once) unless `all`. Returns what ends the watching.
   */
  watch?: (stop: (rule: StopRule) => void) => () => void;
}

/** When a VERIFY round stops waiting for unattempted classes (see {@link VerifyOptions.watch}). */
export interface StopRule {
  status: VerdictStatus;
  detail: string;
  /** Classes asked once too. */
  all: boolean;
  /** Only answers from this `performance.now()` on count. */
  sinceMs: number;
}
