/**
 * The proof step of a build: VERIFY what the rule (classes/evidence.ts) says needs asking, read
 * each answer by that rule, and record in the class index the evidence the answers give. What
 * VERIFY cannot prove is named: a change PENDING lists as needing a restart, a file that moved
 * again after its check.
 */
import fs from 'node:fs';
import type { AgentConnection } from '../agent/connection.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import { askRestartRequired } from '../agent/requests.js';
import { EVIDENCE, judgeOnce } from '../classes/evidence.js';
import type { ClassIndex } from '../classes/columns.js';
import { sameStampAsRow } from '../classes/columns.js';
import type { ChangeSet } from '../classes/snapshot.js';
import type { ClassChange, ClassVerdict, VerifyReport } from '../outcome/facts.js';
import type { VerifyOptions, VerifyTarget } from '../verify/types.js';
import { verifyClasses } from '../verify/verify.js';

/**
 * How long a single ask keeps polling an answer that is not final (`running`, or a `mismatch`
 * naming earlier bytes: the capture this build's ok scheduled may still read them), in ms.
 */
const ASK_ONCE_MS = 3000;

/** What {@link proveClasses} needs. Times in ms. */
export interface ProofInput {
  connection: AgentConnection;
  sessionId: string;
  /** One deadline for all VERIFY polling. */
  verifyTimeoutMs: number;
  /** Bound for the PENDING round trip. */
  receiptTimeoutMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: { final: number; applied: number; total: number }) => void;
  /** What the post-build scan found: `changed` are polled, `checks` asked once. */
  changes: Pick<ChangeSet, 'changed' | 'checks'>;
  /** The post-build index: the evidence of each class proven is recorded in it, in place. */
  index: ClassIndex;
  /** True when the agent watches the class output directory of `file` (unknown counts as not). */
  watched: (file: string) => boolean;
  /** Why the agent never reloads `file` (its folder is not watched, its name is excluded), when that is known, else undefined. */
  unwatched: (file: string) => string | undefined;
  /** RELOAD status before the build found nothing pending and no earlier hold, at `atMs` (epoch ms). */
  quiet?: { atMs: number };
  /** What ends the wait for unattempted classes early (paused, capture over: capture-watch.ts). */
  watch?: VerifyOptions['watch'];
}

/** What the VERIFY round gave, each verdict read by the rule, in the order changed, then checks. */
export interface Proof extends VerifyReport {
  /** How many verdicts answer a single ask. */
  checked: number;
}

/**
 * Asks VERIFY for every verifiable class of `changed` (polled) and `checks` (asked once), turns
 * a single ask's `not_observed` into `unchanged` where {@link judgeOnce} allows, names the classes
 * PENDING lists as restart-required, re-stats every class found live (a stamp that moved since
 * the scan is `rewritten`, never live), and records `proven` / `unchanged` in `index`. A class in
 * a directory the agent is known not to watch never reloads, so it is asked once, briefly, not
 * polled to the deadline: an `applied` for its bytes is still proof (DOCTOR's list may name the
 * folder otherwise than here), anything else is `not-watched`. Verdicts come in the order
 * changed, then checks, then not watched. Never rejects for the agent's behaviour.
 */
export async function proveClasses(input: ProofInput): Promise<Proof> {
  const { index } = input;
  const asking = (c: ClassChange) => c.verifiable && input.unwatched(c.path) === undefined;
  const polled = input.changes.changed.filter(asking);
  const once = input.changes.checks.filter(asking);
  const notWatched = [...input.changes.changed, ...input.changes.checks].filter((c) => c.verifiable && !asking(c));
  // Every receipt the agent holds for us counts against its 512: beyond that, `not_observed` may be an eviction.
  let receipts = polled.length;
  for (const evidence of index.evidence) if (evidence === EVIDENCE.proven) receipts += 1;
  const unchangedIfUnseen = (change: ClassChange, evicted: boolean) =>
    judgeOnce({
      liveUnknown: change.liveUnknown === true,
      watched: input.watched(change.path),
      ctimeMs: change.ctimeMs ?? Number.POSITIVE_INFINITY,
      receiptsMayBeEvicted: evicted,
      ...(input.quiet === undefined ? {} : { quiet: input.quiet }),
    }) === 'unchanged';
  const targets: VerifyTarget[] = [
    ...polled.map((c) => target(c, {})),
    // A not_observed that would mean "unchanged" ends the ask; any other is polled briefly, since
    // the capture this build's ok scheduled may still attempt these bytes.
    ...once.map((c) =>
      target(c, { once: true, settleByMs: ASK_ONCE_MS, notObservedFinal: unchangedIfUnseen(c, receipts >= AGENT_RECEIPT_CAPACITY) }),
    ),
    ...notWatched.map((c) => target(c, { once: true, settleByMs: ASK_ONCE_MS, notObservedFinal: false })),
  ];
  const report = await verifyClasses(input.connection, targets, {
    sessionId: input.sessionId,
    timeoutMs: input.verifyTimeoutMs,
    ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
    ...(input.signal === undefined ? {} : { signal: input.signal }),
    ...(input.watch === undefined ? {} : { watch: input.watch }),
  });
  const asked = [...polled, ...once, ...notWatched];
  const rows = rowsOf(index, new Set(asked.map((c) => c.path)));
  receipts += report.verdicts.filter((v, i) => i >= polled.length && v.receipt !== undefined && v.receipt.status !== 'not_observed').length;
  const evicted = receipts >= AGENT_RECEIPT_CAPACITY;
  let verdicts = report.verdicts.map((verdict, i) => {
    const change = asked[i]!;
    if (i >= polled.length + once.length && verdict.status !== 'applied') return notWatchedVerdict(change, input.unwatched(change.path)!);
    if (verdict.status === 'not-observed' && unchangedIfUnseen(change, evicted)) {
      return { ...verdict, status: 'unchanged' as const, detail: 'no reload attempt, and the agent had nothing pending: identical bytes' };
    }
    const unseen =
      verdict.status === 'not-observed' ||
      (i >= polled.length && verdict.status === 'timeout' && verdict.receipt?.status === 'not_observed');
    return unseen ? { ...verdict, status: 'not-observed' as const, detail: notObservedWhy(change, input, evicted) } : verdict;
  });
  verdicts = await restartRequired(verdicts, input);
  verdicts = verdicts.map((verdict) => {
    if (verdict.status !== 'applied' && verdict.status !== 'unchanged') return verdict;
    const row = rows.get(verdict.path);
    if (row === undefined || !stillSame(index, row, verdict.path)) {
      return { ...verdict, status: 'rewritten' as const, detail: 'the class file changed again after it was checked: run again' };
    }
    index.evidence[row] = verdict.status === 'applied' ? EVIDENCE.proven : EVIDENCE.unchanged;
    return verdict;
  });
  return { ...report, verdicts, checked: once.length };
}

/** The verdict of a class the agent cannot reload, and why (its folder is not watched, its name excluded). */
function notWatchedVerdict(change: ClassChange, why: string): ClassVerdict {
  return { className: change.className, path: change.path, sha256: change.after!, status: 'not-watched', detail: why };
}

function target(change: ClassChange, extra: Partial<VerifyTarget>): VerifyTarget {
  return {
    className: change.className,
    path: change.path,
    sha256: change.after!,
    ...(change.previous === undefined || change.previous.length === 0 ? {} : { previousSha256s: change.previous }),
    ...extra,
  };
}

/** Why a single ask's `not_observed` proves nothing here. */
function notObservedWhy(change: ClassChange, input: ProofInput, evicted: boolean): string {
  if (change.liveUnknown !== true) return 'no reload attempt with these bytes in this agent session: the app still runs earlier bytes';
  if (!input.watched(change.path)) return 'no reload attempt, and the agent does not watch this folder: what the app runs is unknown';
  if (input.quiet === undefined)
    return 'no reload attempt, but the agent had changes pending (or a hold) before this build: what the app runs is unknown';
  if (evicted) return 'no reload attempt, but so many classes were reloaded in this app session that a receipt may have been evicted';
  return 'no reload attempt, but the file changed too recently for the agent to have noticed it: run again in a few seconds';
}

/** Verdicts of classes PENDING lists as needing a restart become `restart-required`, with the agent's words. */
async function restartRequired(verdicts: ClassVerdict[], input: ProofInput): Promise<ClassVerdict[]> {
  if (!verdicts.some((v) => v.status === 'unverified' || v.status === 'failed')) return verdicts;
  const notes = await askRestartRequired(input.connection, input.receiptTimeoutMs, input.signal);
  if (notes === undefined || notes.size === 0) return verdicts;
  return verdicts.map((verdict) => {
    const change = notes.get(verdict.className);
    if (change === undefined || verdict.status === 'applied' || verdict.status === 'unchanged') return verdict;
    return {
      ...verdict,
      status: 'restart-required' as const,
      detail: `restart required: ${change}${verdict.detail ? ` (${verdict.detail})` : ''}`,
    };
  });
}

/** The rows of `paths` in `index`. */
function rowsOf(index: ClassIndex, paths: ReadonlySet<string>): Map<string, number> {
  const rows = new Map<string, number>();
  index.paths.forEach((file, row) => {
    if (paths.has(file)) rows.set(file, row);
  });
  return rows;
}

/** True when `file` still has the stamp its row was scanned with. */
function stillSame(index: ClassIndex, row: number, file: string): boolean {
  try {
    return sameStampAsRow(index, row, fs.statSync(file));
  } catch {
    return false;
  }
}
