/**
 * One VERIFY round on one connection (protocol.md "VERIFY"): a slot per class under one deadline.
 * One listener routes replies by token: a waiter per request made each reply cost the whole window.
 * A reply missing after {@link REPLY_TIMEOUT_MS} is asked again with a new token.
 */
import { type AgentConnection, AgentConnectionError } from '../agent/connection.js';
import { type AgentEvent, newToken, parseTokenJson, verifyLine, verifyResultSchema } from '../agent/protocol.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import type { ClassVerdict, VerdictStatus, VerdictWhy, VerifyReceipt, VerifyReport } from '../outcome/facts.js';

/** How long one VERIFY reply may take before it is presumed dropped and asked again, in ms. */
const REPLY_TIMEOUT_MS = 1000;

/** Poll interval bounds for a class that is not final yet, in ms (grows by half each poll). */
const POLL_MIN_MS = 20;
const POLL_MAX_MS = 120;

interface Slot {
  target: VerifyTarget;
  delayMs: number;
  last?: VerifyReceipt;
  /** When `last` came (`performance.now()`). */
  answeredAt?: number;
  final?: ClassVerdict;
}

/** The round; {@link VerifyRound.run} once. */
class VerifyRound {
  private readonly started = performance.now();
  private readonly slots: Slot[];
  private readonly ready: Slot[];
  private readyHead = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Requests in flight, oldest first: token -> slot and when it was sent. */
  private readonly pending = new Map<string, { slot: Slot; sentAt: number }>();
  private readonly router = new AbortController();
  private pumpQueued = false;
  private finalCount = 0;
  private appliedCount = 0;
  private requests = 0;
  private lostReplies = 0;
  private done = false;
  private sessionChangedTo: string | undefined;
  private capacityLimited = false;
  /** Targets of this build's capture (not asked once), and how many of them are final: the capacity rule counts only those. */
  private readonly awaited: number;
  private awaitedFinal = 0;
  private resolve: (report: VerifyReport) => void = () => undefined;
  private unwatch: () => void = () => undefined;
  private stopRule: StopRule | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private sweep: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => this.finish('interrupted', () => ({ kind: 'interrupted' }));

  constructor(
    private readonly connection: AgentConnection,
    targets: readonly VerifyTarget[],
    private readonly options: VerifyOptions & { window: number; capacity: number },
  ) {
    this.slots = targets.map((target) => ({ target, delayMs: POLL_MIN_MS }));
    this.ready = [...this.slots];
    this.awaited = targets.filter((t) => t.once !== true).length;
  }

  /** Runs the round to its end. */
  run(): Promise<VerifyReport> {
    return new Promise<VerifyReport>((resolve) => {
      this.resolve = resolve;
      const { signal, timeoutMs } = this.options;
      this.sweep = setInterval(() => this.askLostAgain(), REPLY_TIMEOUT_MS / 4);
      this.deadline = setTimeout(
        () =>
          this.finish('timeout', (slot) => (slot.last === undefined ? { kind: 'deadline' } : { kind: 'deadline', last: slot.last.status })),
        timeoutMs,
      );
      if (signal?.aborted) return this.onAbort();
      signal?.addEventListener('abort', this.onAbort, { once: true });
      if (this.options.watch !== undefined) this.unwatch = this.options.watch((rule) => this.stopUnattempted(rule));
      // The router: one listener for all replies, until finish() aborts it. It never "matches".
      this.connection
        .waitFor((event) => this.route(event), 'VERIFY_RESULT replies', timeoutMs + REPLY_TIMEOUT_MS, this.router.signal)
        .catch((error: unknown) => {
          if (this.done) return;
          const kind = error instanceof AgentConnectionError ? error.kind : 'closed';
          if (kind === 'closed') this.connectionLost();
        });
      if (this.slots.length === 0) this.finish('applied', () => ({ kind: 'none' }));
      else this.pump();
    });
  }

  /** Ends the round: every class not final yet gets `rest`. */
  private finish(rest: VerdictStatus, why: (slot: Slot) => VerdictWhy): void {
    if (this.done) return;
    this.done = true;
    for (const timer of this.timers) clearTimeout(timer);
    clearTimeout(this.deadline);
    clearInterval(this.sweep);
    this.router.abort();
    this.pending.clear();
    this.unwatch();
    this.options.signal?.removeEventListener('abort', this.onAbort);
    for (const slot of this.slots) slot.final ??= verdict(slot, rest, why(slot));
    this.resolve({
      verdicts: this.slots.map((slot) => slot.final!),
      ...(this.sessionChangedTo === undefined ? {} : { sessionChangedTo: this.sessionChangedTo }),
      capacityLimited: this.capacityLimited,
      capacity: this.options.capacity,
      requests: this.requests,
      lostReplies: this.lostReplies,
      elapsedMs: Math.round(performance.now() - this.started),
    });
  }

  private connectionLost(): void {
    this.finish('connection-lost', () => ({ kind: 'connection-closed' }));
  }

  private settle(slot: Slot, status: VerdictStatus, why: VerdictWhy, agentDetail?: string): void {
    slot.final = verdict(slot, status, why, agentDetail);
    this.finalCount += 1;
    if (status === 'applied') this.appliedCount += 1;
    if (slot.target.once !== true) this.awaitedFinal += 1;
    const total = this.slots.length;
    this.options.onProgress?.({ final: this.finalCount, applied: this.appliedCount, total });
    const capacity = this.options.capacity;
    if (this.finalCount === total) this.finish('applied', () => ({ kind: 'none' }));
    // The capacity rule is about receipts of this build's capture: classes asked once do not count.
    else if (this.awaited > capacity && this.awaitedFinal >= capacity) {
      this.capacityLimited = true;
      this.finish('beyond-capacity', () => ({ kind: 'beyond-capacity', capacity }));
    }
  }

  /** Stops the wait by `rule` (see VerifyOptions.watch): for every class already answered since `sinceMs`, and every later answer. */
  private stopUnattempted(rule: StopRule): void {
    this.stopRule = rule;
    for (const slot of this.slots) {
      if (this.done) return;
      this.stopIfUnattempted(slot);
    }
  }

  /** Settles `slot` by the stop rule when its latest answer (since the rule's time) shows no attempt of its bytes. */
  private stopIfUnattempted(slot: Slot): boolean {
    const rule = this.stopRule;
    const last = slot.last;
    if (rule === undefined || last === undefined || slot.final !== undefined) return false;
    if ((!rule.all && slot.target.once === true) || (slot.answeredAt ?? 0) < rule.sinceMs) return false;
    // A mismatch naming earlier bytes is "not captured yet": no attempt with these bytes either.
    const unattempted = last.status === 'not_observed' || (last.status === 'mismatch' && judge(last, slot.target) === 'poll');
    if (unattempted) this.settle(slot, rule.status, rule.why);
    return unattempted;
  }

  /** Asks `slot` again after its poll delay, unless its settle time has passed. */
  private later(slot: Slot): void {
    const settleBy = slot.target.settleByMs;
    if (settleBy !== undefined && performance.now() - this.started >= settleBy) {
      const last = slot.last?.status ?? 'unanswered';
      this.settle(slot, 'timeout', { kind: 'settle-by', last, settleByMs: settleBy });
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ready.push(slot);
      this.pump();
    }, slot.delayMs);
    this.timers.add(timer);
    slot.delayMs = Math.min(POLL_MAX_MS, Math.ceil(slot.delayMs * 1.5));
  }

  private handle(slot: Slot, receipt: VerifyReceipt): void {
    slot.last = receipt;
    slot.answeredAt = performance.now();
    if (receipt.sessionId !== this.options.sessionId) {
      this.sessionChangedTo = receipt.sessionId;
      const was = this.options.sessionId;
      this.finish('session-changed', () => ({ kind: 'session-changed', from: was, to: receipt.sessionId }));
      return;
    }
    const next = judge(receipt, slot.target);
    if (next === 'poll' && this.stopIfUnattempted(slot)) return;
    if (next === 'poll') this.later(slot);
    else if (next === 'mismatch')
      this.settle(slot, 'mismatch', { kind: 'mismatch', observedSha256: receipt.observedSha256, source: receipt.source }, receipt.detail);
    else this.settle(slot, next, { kind: 'receipt', status: receipt.status }, receipt.detail);
  }

  /** Routes a line to the request whose token it answers; anything else is ignored. */
  private route(event: AgentEvent): boolean {
    if (this.done || event.level !== 'INFO' || !event.message.startsWith(REPLY_PREFIX)) return false;
    const end = event.message.indexOf(' ', REPLY_PREFIX.length);
    const token = end === -1 ? '' : event.message.slice(REPLY_PREFIX.length, end);
    const request = this.pending.get(token);
    if (request === undefined) return false; // another token's reply, or a late one
    const receipt = matchReceipt(event.message, token, request.slot.target);
    if (receipt === undefined) return false; // malformed: presumed lost when it times out
    this.pending.delete(token);
    if (request.slot.final !== undefined) return false; // settled meanwhile from outside the round
    try {
      this.handle(request.slot, receipt);
    } catch (error) {
      // The connection swallows a listener's exceptions; a bug here must not pass silently.
      queueMicrotask(() => {
        throw error;
      });
    }
    this.queuePump();
    return false;
  }

  private send(slot: Slot): void {
    const token = newToken();
    try {
      this.connection.send(verifyLine(token, slot.target.className, slot.target.sha256));
    } catch (error) {
      if (error instanceof AgentConnectionError) return this.connectionLost();
      throw error;
    }
    this.pending.set(token, { slot, sentAt: performance.now() });
    this.requests += 1;
  }

  private pump(): void {
    while (!this.done && this.pending.size < this.options.window && this.readyHead < this.ready.length) {
      const slot = this.ready[this.readyHead]!;
      this.readyHead += 1;
      if (slot.final === undefined) this.send(slot);
    }
    if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
      this.ready.splice(0, this.readyHead);
      this.readyHead = 0;
    }
  }

  /** One pump after all the replies that arrived together have been routed. */
  private queuePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Replies that did not come within {@link REPLY_TIMEOUT_MS}: asked again (oldest first). */
  private askLostAgain(): void {
    const now = performance.now();
    for (const [token, request] of this.pending) {
      if (now - request.sentAt < REPLY_TIMEOUT_MS) break;
      this.pending.delete(token);
      this.lostReplies += 1;
      this.ready.push(request.slot);
    }
    this.pump();
  }
}

function verdict(slot: Slot, status: VerdictStatus, why: VerdictWhy, agentDetail?: string): ClassVerdict {
  const { className, path, sha256 } = slot.target;
  return {
    className,
    path,
    sha256,
    status,
    why,
    ...(agentDetail === undefined ? {} : { agentDetail }),
    ...(slot.last === undefined ? {} : { receipt: slot.last }),
  };
}

/**
 * The VERIFY loop (protocol.md "VERIFY"): ask the agent, per changed class, whether the exact
 * bytes (by SHA-256) were applied, polling `running`/`not_observed` and the "not captured yet"
 * mismatch under one deadline, with a bounded number of requests in flight on one connection.
 */

/**
 * Most VERIFY requests in flight at once: far below the agent's 1000-line outbox.
 * @internal for its tests
 */
export const VERIFY_WINDOW = 64;

/**
 * Verifies every target until all are final, the deadline, the capacity rule, a session change,
 * a closed connection or `signal`. Never rejects for the agent's behaviour: every class gets a verdict.
 */
export function verifyClasses(
  connection: AgentConnection,
  targets: readonly VerifyTarget[],
  options: VerifyOptions,
): Promise<VerifyReport> {
  return new VerifyRound(connection, targets, {
    ...options,
    window: options.window ?? VERIFY_WINDOW,
    capacity: options.capacity ?? AGENT_RECEIPT_CAPACITY,
  }).run();
}

/** What a VERIFY round is asked about and how (`verify` below). Times in ms. */

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
   * Ends the wait for classes the agent has not attempted (paused, or its capture over): called
   * once with `stop`; then a class whose receipt since `sinceMs` shows no attempt of its bytes gets
   * `status`. Returns what ends the watching.
   */
  watch?: (stop: (rule: StopRule) => void) => () => void;
}

/** When a VERIFY round stops waiting for unattempted classes (see {@link VerifyOptions.watch}). */
interface StopRule {
  status: VerdictStatus;
  why: VerdictWhy;
  /** Classes asked once too. */
  all: boolean;
  /** Only answers from this `performance.now()` on count. */
  sinceMs: number;
}

/** Reading one VERIFY_RESULT receipt (protocol.md "VERIFY"): which request it answers, and what it means for its class. */

/** Replies to VERIFY start with this. */
const REPLY_PREFIX = 'VERIFY_RESULT ';

/** The receipt in `message` for request `token` about `target`, or undefined when it is anything else or malformed. */
function matchReceipt(message: string, token: string, target: VerifyTarget): VerifyReceipt | undefined {
  const json = parseTokenJson(message, 'VERIFY_RESULT', token);
  if (json === undefined) return undefined;
  const parsed = verifyResultSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const receipt = parsed.data;
  return receipt.className === target.className && receipt.expectedSha256 === target.sha256 ? receipt : undefined;
}

/**
 * What a receipt means for its class: `applied` only with the exact bytes and a completion
 * time; `poll` again while it is running, not observed (unless the target makes that final:
 * `not-observed`), or a mismatch naming earlier bytes of this session (not captured yet); else final.
 */
function judge(receipt: VerifyReceipt, target: VerifyTarget): 'applied' | 'poll' | 'mismatch' | 'failed' | 'unverified' | 'not-observed' {
  switch (receipt.status) {
    case 'applied':
      return receipt.observedSha256 === target.sha256 && receipt.completedAt !== '' ? 'applied' : 'poll';
    case 'running':
      return 'poll';
    case 'not_observed':
      return target.notObservedFinal === true ? 'not-observed' : 'poll';
    case 'mismatch':
      return receipt.observedSha256 === '' || target.previousSha256s?.includes(receipt.observedSha256) === true ? 'poll' : 'mismatch';
    case 'failed':
    case 'unverified':
      return receipt.status;
  }
}
