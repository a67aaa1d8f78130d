/**
 * The VERIFY loop (protocol.md "VERIFY"): ask the agent, per changed class, whether the exact
 * bytes (by SHA-256) were applied, polling `running`/`not_observed` and the "not captured yet"
 * mismatch under one deadline, with a bounded number of requests in flight on one connection.
 */
import type { AgentConnection } from '../agent/connection.js';
import { AgentConnectionError } from '../agent/connection.js';
import {
  AGENT_RECEIPT_CAPACITY,
  newToken,
  parseTokenJson,
  verifyCommand,
  verifyResultSchema,
  type VerifyResult,
} from '../agent/protocol.js';

/** Most VERIFY requests in flight at once: far below the agent's 1000-line outbox. */
export const VERIFY_WINDOW = 64;

/** How long one VERIFY reply may take before it is presumed dropped and asked again, in ms. */
export const VERIFY_REPLY_TIMEOUT_MS = 1000;

/** Poll interval bounds for a class that is not final yet, in ms (grows by half each poll). */
export const POLL_MIN_MS = 20;
export const POLL_MAX_MS = 120;

/** A class to verify: its binary name and the SHA-256 of its bytes after the build. */
export interface VerifyTarget {
  className: string;
  /** The class file, for reports. */
  path: string;
  sha256: string;
  /** SHA-256 before the build: a `mismatch` naming it means "not captured yet". */
  previousSha256?: string;
}

/**
 * A class's final verdict. Only `applied` is proof. `timeout`: still not final at the
 * deadline; `beyond-capacity`: not awaited because more classes changed than the agent keeps
 * receipts for; `session-changed`: the app restarted; `connection-lost`; `interrupted`.
 */
export type VerdictStatus =
  | 'applied'
  | 'failed'
  | 'mismatch'
  | 'unverified'
  | 'timeout'
  | 'beyond-capacity'
  | 'session-changed'
  | 'connection-lost'
  | 'interrupted';

/** The verdict for one class. */
export interface ClassVerdict {
  className: string;
  path: string;
  sha256: string;
  status: VerdictStatus;
  /** Human detail: the agent's detail, or why there is no proof. */
  detail: string;
  /** The last receipt seen for this class, if any. */
  receipt?: VerifyResult;
}

/** Options for {@link verifyClasses}. */
export interface VerifyOptions {
  /** The agent session the receipts must come from (DOCTOR's sessionId). */
  sessionId: string;
  /** One deadline for all polling, in ms from the call. */
  timeoutMs: number;
  /** Called after every final verdict. */
  onProgress?: (progress: { final: number; applied: number; total: number }) => void;
  signal?: AbortSignal;
  /** Requests in flight (default {@link VERIFY_WINDOW}). */
  window?: number;
  /** Receipt capacity of the agent (default 512). */
  capacity?: number;
}

/** The outcome of a VERIFY round. `verdicts` is in the order of the targets. */
export interface VerifyReport {
  verdicts: ClassVerdict[];
  /** Set when a receipt named another session: the app restarted. */
  sessionChangedTo?: string;
  /** True when more classes changed than the agent keeps receipts for and the rest were not awaited. */
  capacityLimited: boolean;
  /** VERIFY requests sent, including re-asks. */
  requests: number;
  /** Replies presumed lost (asked again). */
  lostReplies: number;
  elapsedMs: number;
}

interface Slot {
  target: VerifyTarget;
  index: number;
  delayMs: number;
  last?: VerifyResult;
  final?: ClassVerdict;
}

/**
 * Verifies every target; resolves when all are final, the deadline passes, the capacity rule
 * stops the wait, the session changes, the connection closes, or `signal` aborts. Never
 * rejects for the agent's behaviour: every class ends with a verdict.
 */
export function verifyClasses(connection: AgentConnection, targets: readonly VerifyTarget[], options: VerifyOptions): Promise<VerifyReport> {
  const started = performance.now();
  const window = options.window ?? VERIFY_WINDOW;
  const capacity = options.capacity ?? AGENT_RECEIPT_CAPACITY;
  const slots: Slot[] = targets.map((target, index) => ({ target, index, delayMs: POLL_MIN_MS }));
  const ready: Slot[] = [...slots];
  let readyHead = 0;
  const timers = new Set<NodeJS.Timeout>();
  let inFlight = 0;
  let finalCount = 0;
  let appliedCount = 0;
  let requests = 0;
  let lostReplies = 0;
  let done = false;
  let sessionChangedTo: string | undefined;
  let capacityLimited = false;

  return new Promise<VerifyReport>((resolve) => {
    const finish = (rest: VerdictStatus, detail: (slot: Slot) => string): void => {
      if (done) return;
      done = true;
      for (const timer of timers) clearTimeout(timer);
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', onAbort);
      for (const slot of slots) {
        slot.final ??= verdict(slot, rest, detail(slot));
      }
      resolve({
        verdicts: slots.map((slot) => slot.final!),
        ...(sessionChangedTo === undefined ? {} : { sessionChangedTo }),
        capacityLimited,
        requests,
        lostReplies,
        elapsedMs: Math.round(performance.now() - started),
      });
    };

    const settle = (slot: Slot, status: VerdictStatus, detail: string): void => {
      slot.final = verdict(slot, status, detail);
      finalCount += 1;
      if (status === 'applied') appliedCount += 1;
      options.onProgress?.({ final: finalCount, applied: appliedCount, total: slots.length });
      if (finalCount === slots.length) finish('applied', () => '');
      else if (slots.length > capacity && finalCount >= capacity) {
        capacityLimited = true;
        finish('beyond-capacity', () => `more than ${capacity} classes changed; the agent keeps receipts for only ${capacity}`);
      }
    };

    const later = (slot: Slot): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        ready.push(slot);
        pump();
      }, slot.delayMs);
      timers.add(timer);
      slot.delayMs = Math.min(POLL_MAX_MS, Math.ceil(slot.delayMs * 1.5));
    };

    const handle = (slot: Slot, receipt: VerifyResult): void => {
      slot.last = receipt;
      if (receipt.sessionId !== options.sessionId) {
        sessionChangedTo = receipt.sessionId;
        finish('session-changed', () => `the agent session changed (${options.sessionId} -> ${receipt.sessionId}): the app restarted`);
        return;
      }
      const sha = slot.target.sha256;
      switch (receipt.status) {
        case 'applied':
          if (receipt.observedSha256 === sha && receipt.completedAt !== '') settle(slot, 'applied', receipt.detail);
          else later(slot);
          return;
        case 'running':
        case 'not_observed':
          later(slot);
          return;
        case 'mismatch':
          if (receipt.observedSha256 === slot.target.previousSha256 || receipt.observedSha256 === '') later(slot);
          else settle(slot, 'mismatch', mismatchDetail(receipt));
          return;
        case 'failed':
        case 'unverified':
          settle(slot, receipt.status, receipt.detail || receipt.status);
          return;
      }
    };

    const send = (slot: Slot): void => {
      const token = newToken();
      const remaining = options.timeoutMs - (performance.now() - started);
      inFlight += 1;
      requests += 1;
      connection
        .request(
          verifyCommand(token, slot.target.className, slot.target.sha256),
          (event) => (event.level === 'INFO' ? matchReceipt(event.message, token, slot.target) : undefined),
          `VERIFY_RESULT for ${slot.target.className}`,
          Math.max(1, Math.min(VERIFY_REPLY_TIMEOUT_MS, remaining)),
          options.signal,
        )
        .then(
          (receipt) => {
            inFlight -= 1;
            if (!done) handle(slot, receipt);
          },
          (error: unknown) => {
            inFlight -= 1;
            if (done) return;
            const kind = error instanceof AgentConnectionError ? error.kind : 'closed';
            if (kind === 'timeout') {
              lostReplies += 1;
              ready.push(slot);
            } else if (kind === 'aborted') finish('interrupted', () => 'interrupted before a final receipt');
            else finish('connection-lost', () => 'the agent connection closed before a final receipt');
          },
        )
        .finally(() => {
          if (!done) pump();
        });
    };

    const pump = (): void => {
      while (!done && inFlight < window && readyHead < ready.length) {
        const slot = ready[readyHead]!;
        readyHead += 1;
        if (slot.final === undefined) send(slot);
      }
      if (readyHead > 1024 && readyHead * 2 > ready.length) {
        ready.splice(0, readyHead);
        readyHead = 0;
      }
    };

    const onAbort = (): void => finish('interrupted', () => 'interrupted before a final receipt');
    const deadline = setTimeout(
      () =>
        finish('timeout', (slot) =>
          slot.last === undefined ? 'no receipt before the deadline' : `still ${slot.last.status} at the deadline`,
        ),
      options.timeoutMs,
    );
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    if (slots.length === 0) finish('applied', () => '');
    else pump();
  });
}

function matchReceipt(message: string, token: string, target: VerifyTarget): VerifyResult | undefined {
  const json = parseTokenJson(message, 'VERIFY_RESULT', token);
  if (json === undefined) return undefined;
  const parsed = verifyResultSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const receipt = parsed.data;
  return receipt.className === target.className && receipt.expectedSha256 === target.sha256 ? receipt : undefined;
}

function verdict(slot: Slot, status: VerdictStatus, detail: string): ClassVerdict {
  return {
    className: slot.target.className,
    path: slot.target.path,
    sha256: slot.target.sha256,
    status,
    detail,
    ...(slot.last === undefined ? {} : { receipt: slot.last }),
  };
}

function mismatchDetail(receipt: VerifyResult): string {
  const base = `the agent applied other bytes (${receipt.observedSha256.slice(0, 12)}…, ${receipt.source || 'unknown source'})`;
  return receipt.detail ? `${base}: ${receipt.detail}` : base;
}
