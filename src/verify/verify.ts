/**
 * The VERIFY loop (protocol.md "VERIFY"): ask the agent, per changed class, whether the exact
 * bytes (by SHA-256) were applied, polling `running`/`not_observed` and the "not captured yet"
 * mismatch under one deadline, with a bounded number of requests in flight on one connection.
 */
import type { AgentConnection } from '../agent/connection.js';
import { AgentConnectionError } from '../agent/connection.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import { newToken, parseTokenJson, verifyLine, verifyResultSchema, type AgentEvent } from '../agent/protocol.js';
import type { ClassVerdict, VerdictStatus, VerifyReceipt, VerifyReport } from '../outcome/facts.js';

/** Most VERIFY requests in flight at once: far below the agent's 1000-line outbox. */
export const VERIFY_WINDOW = 64;

/** How long one VERIFY reply may take before it is presumed dropped and asked again, in ms. */
const VERIFY_REPLY_TIMEOUT_MS = 1000;

/** Poll interval bounds for a class that is not final yet, in ms (grows by half each poll). */
const POLL_MIN_MS = 20;
const POLL_MAX_MS = 120;

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
  /** Receipt capacity of the agent (default {@link AGENT_RECEIPT_CAPACITY}). */
  capacity?: number;
}

interface Slot {
  target: VerifyTarget;
  index: number;
  delayMs: number;
  last?: VerifyReceipt;
  final?: ClassVerdict;
}

/**
 * Verifies every target; resolves when all are final, the deadline passes, the capacity rule
 * stops the wait, the session changes, the connection closes, or `signal` aborts. Never
 * rejects for the agent's behaviour: every class ends with a verdict.
 *
 * Replies are routed by token from one listener on the connection (a Map lookup per line),
 * not matched by a waiter per request: with thousands of classes, a waiter and a timeout per
 * request made every reply cost as much as the window. Requests sent in the same turn of the
 * event loop go out together (see `pump`). A request without a reply after
 * {@link VERIFY_REPLY_TIMEOUT_MS} is presumed dropped and asked again with a new token; a
 * late reply to the old token is ignored.
 */
export function verifyClasses(
  connection: AgentConnection,
  targets: readonly VerifyTarget[],
  options: VerifyOptions,
): Promise<VerifyReport> {
  const started = performance.now();
  const window = options.window ?? VERIFY_WINDOW;
  const capacity = options.capacity ?? AGENT_RECEIPT_CAPACITY;
  const slots: Slot[] = targets.map((target, index) => ({ target, index, delayMs: POLL_MIN_MS }));
  // The capacity rule is about receipts of this build's capture: classes asked once do not count.
  const awaited = slots.filter((slot) => slot.target.once !== true).length;
  let awaitedFinal = 0;
  const ready: Slot[] = [...slots];
  let readyHead = 0;
  const timers = new Set<NodeJS.Timeout>();
  /** Requests in flight, oldest first: token -> slot and when it was sent. */
  const pending = new Map<string, { slot: Slot; sentAt: number }>();
  const router = new AbortController();
  let pumpQueued = false;
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
      clearInterval(sweep);
      router.abort();
      pending.clear();
      options.signal?.removeEventListener('abort', onAbort);
      for (const slot of slots) {
        slot.final ??= verdict(slot, rest, detail(slot));
      }
      resolve({
        verdicts: slots.map((slot) => slot.final!),
        ...(sessionChangedTo === undefined ? {} : { sessionChangedTo }),
        capacityLimited,
        capacity,
        requests,
        lostReplies,
        elapsedMs: Math.round(performance.now() - started),
      });
    };

    const settle = (slot: Slot, status: VerdictStatus, detail: string): void => {
      slot.final = verdict(slot, status, detail);
      finalCount += 1;
      if (status === 'applied') appliedCount += 1;
      if (slot.target.once !== true) awaitedFinal += 1;
      options.onProgress?.({ final: finalCount, applied: appliedCount, total: slots.length });
      if (finalCount === slots.length) finish('applied', () => '');
      else if (awaited > capacity && awaitedFinal >= capacity) {
        capacityLimited = true;
        finish('beyond-capacity', () => `more than ${capacity} classes changed; the agent keeps receipts for only ${capacity}`);
      }
    };

    const later = (slot: Slot): void => {
      const settleBy = slot.target.settleByMs;
      if (settleBy !== undefined && performance.now() - started >= settleBy) {
        settle(
          slot,
          'timeout',
          `still ${slot.last?.status ?? 'unanswered'} ${settleBy} ms after asking; these bytes were there before this build, so the agent has had its capture of them`,
        );
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        ready.push(slot);
        pump();
      }, slot.delayMs);
      timers.add(timer);
      slot.delayMs = Math.min(POLL_MAX_MS, Math.ceil(slot.delayMs * 1.5));
    };

    const handle = (slot: Slot, receipt: VerifyReceipt): void => {
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
          later(slot);
          return;
        case 'not_observed':
          if (slot.target.notObservedFinal === true)
            settle(slot, 'not-observed', receipt.detail || 'no receipt for this class in this agent session');
          else later(slot);
          return;
        case 'mismatch':
          if (receipt.observedSha256 === '' || slot.target.previousSha256s?.includes(receipt.observedSha256) === true) later(slot);
          else settle(slot, 'mismatch', mismatchDetail(receipt));
          return;
        case 'failed':
        case 'unverified':
          settle(slot, receipt.status, receipt.detail || receipt.status);
          return;
      }
    };

    /** Routes a line to the request whose token it answers; anything else is ignored. */
    const route = (event: AgentEvent): boolean => {
      if (done || event.level !== 'INFO' || !event.message.startsWith(REPLY_PREFIX)) return false;
      const end = event.message.indexOf(' ', REPLY_PREFIX.length);
      const token = end === -1 ? '' : event.message.slice(REPLY_PREFIX.length, end);
      const request = pending.get(token);
      if (request === undefined) return false; // another token's reply, or a late one
      const receipt = matchReceipt(event.message, token, request.slot.target);
      if (receipt === undefined) return false; // malformed: presumed lost when it times out
      pending.delete(token);
      try {
        handle(request.slot, receipt);
      } catch (error) {
        // The connection swallows a listener's exceptions; a bug here must not pass silently.
        queueMicrotask(() => {
          throw error;
        });
      }
      queuePump();
      return false;
    };

    const send = (slot: Slot): void => {
      const token = newToken();
      try {
        connection.send(verifyLine(token, slot.target.className, slot.target.sha256));
      } catch (error) {
        if (error instanceof AgentConnectionError) finish('connection-lost', () => 'the agent connection closed before a final receipt');
        else throw error;
        return;
      }
      pending.set(token, { slot, sentAt: performance.now() });
      requests += 1;
    };

    const pump = (): void => {
      while (!done && pending.size < window && readyHead < ready.length) {
        const slot = ready[readyHead]!;
        readyHead += 1;
        if (slot.final === undefined) send(slot);
      }
      if (readyHead > 1024 && readyHead * 2 > ready.length) {
        ready.splice(0, readyHead);
        readyHead = 0;
      }
    };

    /** One pump after all the replies that arrived together have been routed. */
    const queuePump = (): void => {
      if (pumpQueued) return;
      pumpQueued = true;
      queueMicrotask(() => {
        pumpQueued = false;
        pump();
      });
    };

    // Replies that did not come within VERIFY_REPLY_TIMEOUT_MS: asked again (oldest first).
    const sweep = setInterval(() => {
      const now = performance.now();
      for (const [token, request] of pending) {
        if (now - request.sentAt < VERIFY_REPLY_TIMEOUT_MS) break;
        pending.delete(token);
        lostReplies += 1;
        ready.push(request.slot);
      }
      pump();
    }, VERIFY_REPLY_TIMEOUT_MS / 4);

    const onAbort = (): void => finish('interrupted', () => 'interrupted before a final receipt');
    const deadline = setTimeout(
      () =>
        finish('timeout', (slot) =>
          slot.last === undefined ? 'no receipt before the deadline' : `still ${slot.last.status} at the deadline`,
        ),
      options.timeoutMs,
    );
    if (options.signal?.aborted) {
      onAbort();
      return;
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // The router: one listener for all replies, until finish() aborts it. It never "matches".
    connection
      .waitFor(route, 'VERIFY_RESULT replies', options.timeoutMs + VERIFY_REPLY_TIMEOUT_MS, router.signal)
      .catch((error: unknown) => {
        if (done) return;
        const kind = error instanceof AgentConnectionError ? error.kind : 'closed';
        if (kind === 'closed') finish('connection-lost', () => 'the agent connection closed before a final receipt');
      });
    if (slots.length === 0) finish('applied', () => '');
    else pump();
  });
}

/** Replies to VERIFY start with this. */
const REPLY_PREFIX = 'VERIFY_RESULT ';

function matchReceipt(message: string, token: string, target: VerifyTarget): VerifyReceipt | undefined {
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

function mismatchDetail(receipt: VerifyReceipt): string {
  const base = `the agent applied other bytes (${receipt.observedSha256.slice(0, 12)}…, ${receipt.source || 'unknown source'})`;
  return receipt.detail ? `${base}: ${receipt.detail}` : base;
}
