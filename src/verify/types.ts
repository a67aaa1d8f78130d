/** What a VERIFY round is asked about and how (verify.ts). Times in ms. */
/** A class to verify: its binary name and the SHA-256 of its bytes after the build. */
export interface VerifyTarget {
  className: string;
  /** The class file, for reports. */
  path: string;
  sha256: string;
  /** SHA-256 before the build: a `mismatch` naming it means "not captured yet". */
  previousSha256?: string;
  /**
   * For bytes the agent has already had its capture of (built by an earlier run, not proven
   * then): how long to keep polling an answer that is not final, in ms from the call, before
   * the verdict is `timeout`, instead of the whole deadline.
   */
  settleByMs?: number;
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
}
