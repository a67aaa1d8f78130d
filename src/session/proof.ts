/**
 * The proof step of a build: VERIFY what the rule (classes/evidence.ts) says needs asking, read each
 * answer by it, and record in the class index the evidence the answers give.
 */
import fs from 'node:fs';
import type { AgentConnection } from '../agent/connection.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import { askDiagnose, askPending, askReloadCount } from '../agent/requests.js';
import { EVIDENCE, judgeOnce, keptBy, type LiveEvidence, mayBeEvicted } from '../classes/evidence.js';
import { type ClassIndex, sameStampAsRow } from '../classes/columns.js';
import type { ChangeSet } from '../classes/changes.js';
import type { ClassChange, ClassVerdict, VerifyReport } from '../outcome/facts.js';
import { REWRITTEN_DETAIL } from '../report/step-words.js';
import { verifyClasses, type VerifyOptions, type VerifyTarget } from '../verify/round.js';
import { verdictWords } from '../report/shortfall-words.js';
import { type Diagnosis, lineNaming, restartRequiredBy } from '../agent/reports.js';
import path from 'node:path';
import { type PathMapEntry, toLocal } from '../agent/path-map.js';

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
  /** What the post-build scan found: `changed` are polled, `checks` and `added` (new to the JVM by the record) asked once. */
  changes: Pick<ChangeSet, 'changed' | 'checks' | 'added'>;
  /** The post-build index: the evidence of each class proven is recorded in it, in place. */
  index: ClassIndex;
  /** True when the agent watches the class output directory of `file` (unknown counts as not). */
  watched: (file: string) => boolean;
  /** Why the agent never reloads `file` (its folder is not watched, its name is excluded), when that is known, else undefined. */
  unwatched: (file: string) => string | undefined;
  /** RELOAD status before the build found nothing pending and no earlier hold, at `atMs` (epoch ms). */
  quiet?: { atMs: number };
  /** What ends the wait for unattempted classes early (paused, capture over: check.ts). */
  watch?: VerifyOptions['watch'];
}

/** What the VERIFY round gave, each verdict read by the rule, in the order changed, then checks, then added. */
export interface Proof extends VerifyReport {
  /** How many verdicts answer a single ask of a file there before this build. */
  checked: number;
  /** The classes new to the JVM that stay new: they load on first use (no verdict of their own). */
  added: ClassChange[];
}

/**
 * Asks VERIFY for the verifiable classes of `changed` (polled), `checks` and `added` (asked once),
 * reads each single ask by the rule ({@link judgeOnce}, {@link keptBy}), marks what the agent says
 * needs a restart, adds DIAGNOSE's words to a verdict that is not live, and records in `index` what
 * the answers prove; a class found live whose stamp moved since the scan is `rewritten`. A change in
 * a folder the agent is known not to watch is asked once, briefly: `applied` still proves it (DOCTOR
 * may name the folder otherwise), else `not-watched`. Verdicts come in the order changed, checks,
 * added, not watched; an added class that stays new has none (it is in `added`). Never rejects for
 * the agent's behaviour.
 */
export async function proveClasses(input: ProofInput): Promise<Proof> {
  // A rewritten file with bytes known live is asked wherever it lies: the same bytes need no reload.
  const asking = (c: ClassChange) => c.verifiable && (c.keeps !== undefined || input.unwatched(c.path) === undefined);
  const polled = input.changes.changed.filter(asking);
  const once = input.changes.checks.filter(asking);
  // A class new to the JVM is asked wherever it lies: the agent may register it (a new bean) and fail.
  const added = input.changes.added.filter((c) => c.verifiable);
  const notWatched = [...input.changes.changed, ...input.changes.checks].filter((c) => c.verifiable && !asking(c));
  const unchangedIfUnseen = (change: ClassChange) =>
    judgeOnce({
      liveUnknown: change.liveUnknown === true,
      watched: input.watched(change.path),
      ctimeMs: change.ctimeMs ?? Number.POSITIVE_INFINITY,
      ...(input.quiet === undefined ? {} : { quiet: input.quiet }),
    }) === 'unchanged';
  // A not_observed that may be read as live ends the ask; any other is polled briefly, since the
  // capture this build's ok scheduled may still attempt these bytes.
  const mayKeep = (change: ClassChange) => change.keeps !== undefined || unchangedIfUnseen(change);
  const targets: VerifyTarget[] = [
    ...polled.map((c) => target(c, {})),
    ...once.map((c) => target(c, { once: true, settleByMs: ASK_ONCE_MS, notObservedFinal: mayKeep(c) })),
    // Polled where the agent watches it: a `not_observed` comes before its capture's attempt.
    ...added.map((c) => target(c, input.unwatched(c.path) === undefined ? {} : { once: true, settleByMs: ASK_ONCE_MS })),
    ...notWatched.map((c) => target(c, { once: true, settleByMs: ASK_ONCE_MS, notObservedFinal: false })),
  ];
  const report = await verifyClasses(input.connection, targets, {
    sessionId: input.sessionId,
    timeoutMs: input.verifyTimeoutMs,
    ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
    ...(input.signal === undefined ? {} : { signal: input.signal }),
    ...(input.watch === undefined ? {} : { watch: input.watch }),
  });
  const asked = [...polled, ...once, ...added, ...notWatched];
  const firstNotWatched = polled.length + once.length + added.length;
  const single = (i: number) => i >= polled.length && i < firstNotWatched;
  // Only a count below the agent's 512 receipts lets a not_observed mean "no attempt" (evidence.ts mayBeEvicted).
  const counted = report.verdicts.some((v, i) => single(i) && v.status === 'not-observed' && mayKeep(asked[i]!));
  const attempts = counted ? await askReloadCount(input.connection, input.receiptTimeoutMs, input.signal) : undefined;
  const said = {
    connection: input.connection,
    timeoutMs: input.receiptTimeoutMs,
    ...(input.signal === undefined ? {} : { signal: input.signal }),
  };
  const raw = await restartRequired(said, report.verdicts);
  // Bytes kept as new to the JVM need DIAGNOSE's word that the JVM has not loaded the class.
  const needed = new Set(raw.flatMap((v, i) => (single(i) && asked[i]!.keeps === EVIDENCE.added && mayBeNew(v) ? [i] : [])));
  const diagnoses = await diagnoseVerdicts(said, raw, needed);
  const read = raw.map((verdict, i) => {
    const change = asked[i]!;
    if (i >= firstNotWatched && verdict.status !== 'applied') return { verdict: notWatchedVerdict(change, input.unwatched(change.path)!) };
    if (!single(i)) return { verdict } as Read;
    const loaded = diagnoses.get(change.className)?.loaded;
    return readOnce(
      verdict,
      change,
      { attempts, unchanged: unchangedIfUnseen(change), ...(loaded === undefined ? {} : { loaded }) },
      input,
    );
  });
  const verdicts = record(
    input.index,
    read.map((r) => withDiagnosis(r.verdict, diagnoses)),
    asked,
    read,
  );
  // An added class that stays new is listed as added, not as a verdict.
  const stays = (i: number) =>
    i >= polled.length + once.length && i < firstNotWatched && read[i]!.evidence === EVIDENCE.added && verdicts[i]!.status === 'unchanged';
  return {
    ...report,
    verdicts: verdicts.filter((_, i) => !stays(i)),
    checked: once.length,
    added: [...input.changes.added.filter((c) => !c.verifiable), ...added.filter((_, i) => stays(polled.length + once.length + i))],
  };
}

/** A verdict that may leave a class new to the JVM: `unverified`, or no attempt (no receipt, or the capture ended without one). */
function mayBeNew(verdict: ClassVerdict): boolean {
  return verdict.status === 'unverified' || verdict.status === 'not-watched' || unseen(verdict);
}

/** A single ask answered `not_observed`, or still `not_observed` at its deadline. */
function unseen(verdict: ClassVerdict): boolean {
  return verdict.status === 'not-observed' || (verdict.status === 'timeout' && verdict.receipt?.status === 'not_observed');
}

/** A verdict as read, with the evidence it gives its row (undefined: the scan's stays). */
interface Read {
  verdict: ClassVerdict;
  evidence?: number;
}

/**
 * A single ask's verdict read by the rule: bytes known live keep or lose their evidence ({@link keptBy},
 * `loaded` from DIAGNOSE); an unrecorded `not_observed` is `unchanged` when `facts.unchanged` and no
 * receipt can have been evicted (`attempts`: HEALTH's count); else `not-observed`, with why.
 */
function readOnce(
  verdict: ClassVerdict,
  change: ClassChange,
  facts: { attempts: number | undefined; unchanged: boolean; loaded?: boolean },
  input: ProofInput,
): Read {
  const evicted = mayBeEvicted(facts.attempts);
  const keeps = change.keeps as LiveEvidence | undefined;
  if (keeps !== undefined && verdict.status !== 'applied') {
    // A new class's answer may be no answer at all; other bytes known live need a final not_observed.
    const answer =
      verdict.status === 'not-observed' || (keeps === EVIDENCE.added && mayBeNew(verdict) && verdict.status !== 'unverified')
        ? 'not-observed'
        : verdict.status === 'unverified'
          ? 'unverified'
          : 'other';
    const kept = keptBy(keeps, answer, { evicted, ...(facts.loaded === undefined ? {} : { loaded: facts.loaded }) });
    if (kept !== undefined) {
      const detail = kept === EVIDENCE.added ? verdictWords.added(verdict.receipt?.status ?? '') : verdictWords.keptUnseen;
      return { verdict: { ...verdict, status: 'unchanged', detail }, evidence: kept };
    }
  }
  if (verdict.status === 'not-observed' && facts.unchanged && !evicted) {
    return {
      verdict: { ...verdict, status: 'unchanged', detail: 'no reload attempt, and the agent had nothing pending: identical bytes' },
      evidence: EVIDENCE.unchanged,
    };
  }
  const read = unseen(verdict)
    ? { ...verdict, status: 'not-observed' as const, detail: notObservedWhy(change, input, facts.attempts) }
    : verdict;
  // A final answer against the bytes of a rewritten file takes their evidence away; no answer leaves it to be asked again.
  const final =
    read.status !== 'timeout' && read.status !== 'interrupted' && read.status !== 'connection-lost' && read.status !== 'session-changed';
  return keeps !== undefined && final ? { verdict: read, evidence: EVIDENCE.unproven } : { verdict: read };
}

/**
 * Records in `index` what the verdicts prove and what the single asks took away; a class found live
 * whose file moved since the scan is `rewritten` instead, never live.
 */
function record(index: ClassIndex, verdicts: ClassVerdict[], asked: ClassChange[], read: Read[]): ClassVerdict[] {
  const rows = rowsOf(index, new Set(asked.map((c) => c.path)));
  return verdicts.map((verdict, i) => {
    const row = rows.get(verdict.path);
    if (verdict.status !== 'applied' && verdict.status !== 'unchanged') {
      const taken = read[i]!.evidence;
      if (row !== undefined && taken !== undefined) index.evidence[row] = taken;
      return verdict;
    }
    if (row === undefined || !stillSame(index, row, verdict.path)) {
      return { ...verdict, status: 'rewritten' as const, detail: REWRITTEN_DETAIL };
    }
    index.evidence[row] = verdict.status === 'applied' ? EVIDENCE.proven : read[i]!.evidence!;
    return verdict;
  });
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

/** Why a single ask's `not_observed` proves nothing here (`attempts`: HEALTH's count, when it was asked). */
function notObservedWhy(change: ClassChange, input: ProofInput, attempts: number | undefined): string {
  const evicted =
    attempts === undefined
      ? 'the agent did not say how many classes it reloaded in this app session (HEALTH), so a receipt may have been evicted'
      : `the agent made ${attempts} reload attempts in this app session, so a receipt may have been evicted (it keeps ${AGENT_RECEIPT_CAPACITY})`;
  if (change.keeps === EVIDENCE.added) return verdictWords.newNotProven;
  if (change.keeps !== undefined) return `no reload attempt with these bytes, but ${evicted}`;
  if (change.liveUnknown !== true) return 'no reload attempt with these bytes in this agent session: the app still runs earlier bytes';
  if (!input.watched(change.path)) return 'no reload attempt, and the agent does not watch this folder: what the app runs is unknown';
  if (input.quiet === undefined)
    return 'no reload attempt, but the agent had changes pending (or a hold) before this build: what the app runs is unknown';
  const noticed = judgeOnce({ liveUnknown: true, watched: true, quiet: input.quiet, ctimeMs: change.ctimeMs ?? Number.POSITIVE_INFINITY });
  if (noticed === 'not-observed')
    return 'no reload attempt, but the file changed too recently for the agent to have noticed it: run again in a few seconds';
  return `no reload attempt, but ${evicted}`;
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

/**
 * What the agent says besides receipts (protocol.md "What the agent's source shows"): DIAGNOSE (agent
 * ReloadDiagnostics), restart notes in a receipt (reload/StructuralReloader) and PENDING (ui/RestartLedger),
 * which is the agent session's history: a later `applied` for the bytes on disk wins over an old entry.
 */

/** At most this many classes are asked DIAGNOSE for their words alone (a `failed` or `unverified` verdict): each walks the agent's folders. */
const MAX_WORDS = 16;

/** What the agent is asked on the proof's connection. Times in ms. */
interface SaidInput {
  connection: AgentConnection;
  /** Bound per marker reply. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Asks DIAGNOSE for every class of `needed` (whether the JVM has loaded it) and, for their words, for
 * at most {@link MAX_WORDS} `failed` or `unverified` others. Empty when nothing was asked or answered.
 */
async function diagnoseVerdicts(
  input: SaidInput,
  verdicts: readonly ClassVerdict[],
  needed: ReadonlySet<number>,
): Promise<ReadonlyMap<string, Diagnosis>> {
  const words = verdicts.filter((v, i) => !needed.has(i) && (v.status === 'failed' || v.status === 'unverified')).slice(0, MAX_WORDS);
  const names = [...new Set([...[...needed].map((i) => verdicts[i]!.className), ...words.map((v) => v.className)])];
  if (names.length === 0) return new Map();
  return (await askDiagnose(input.connection, names, input.timeoutMs, input.signal)) ?? new Map();
}

/** `verdict` with DIAGNOSE's words in its detail when it is not live and the agent said something of it. */
function withDiagnosis(verdict: ClassVerdict, diagnoses: ReadonlyMap<string, Diagnosis>): ClassVerdict {
  const said = diagnoses.get(verdict.className);
  if (said === undefined || said.words.length === 0 || !SHOWN_WITH_WORDS.has(verdict.status)) return verdict;
  return { ...verdict, detail: verdictWords.diagnosed(verdict.detail, said.words) };
}
const SHOWN_WITH_WORDS: ReadonlySet<string> = new Set(['failed', 'unverified', 'not-observed', 'timeout']);

/**
 * A `failed` or `unverified` verdict becomes `restart-required` when its receipt says so of the class
 * itself, or PENDING names it (asked only when no receipt says). A live verdict stays: PENDING is history.
 */
async function restartRequired(input: SaidInput, verdicts: ClassVerdict[]): Promise<ClassVerdict[]> {
  const candidate = (v: ClassVerdict) => v.status === 'unverified' || v.status === 'failed';
  const byReceipt = (v: ClassVerdict) => restartRequiredBy(v.detail, v.className);
  if (!verdicts.some(candidate)) return verdicts;
  const entries = verdicts.some((v) => candidate(v) && !byReceipt(v))
    ? await askPending(input.connection, input.timeoutMs, input.signal)
    : undefined;
  return verdicts.map((verdict) => {
    if (!candidate(verdict)) return verdict;
    if (byReceipt(verdict)) return { ...verdict, status: 'restart-required' as const };
    const entry = entries === undefined ? undefined : lineNaming(entries, verdict.className);
    return entry === undefined
      ? verdict
      : { ...verdict, status: 'restart-required' as const, detail: verdictWords.pending(entry, verdict.detail) };
  });
}

/**
 * What nothing else decides of what the agent watches is asked with `DIAGNOSE <class>` (protocol.md
 * "What the agent's source shows"; agent ReloadDiagnostics): the agent looks for the file at the path
 * the binary class name gives under each watched directory, so one class answers for its folder.
 */

/** At most this many folders are asked about in one build: each is one DIAGNOSE, which walks the agent's folders. */
const MAX_FOLDERS = 16;

/** What DIAGNOSE said of the folders asked about: watched (the agent found our file there) or not (it found no file of that name). */
export type FolderAnswers = ReadonlyMap<string, boolean>;

/**
 * Asks DIAGNOSE for one class of each folder of `undecided` (at most {@link MAX_FOLDERS}, fullest
 * first): found at our path, watched; no file of that name, not; any other answer leaves it unknown.
 * `timeoutMs` bounds the round trip.
 */
export async function diagnoseFolders(
  connection: AgentConnection,
  undecided: readonly ClassChange[],
  agent: { map: readonly PathMapEntry[]; workingDirectory: string },
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<FolderAnswers> {
  const byFolder = new Map<string, ClassChange[]>();
  for (const change of undecided) {
    const folder = path.dirname(change.path);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), change]);
  }
  const asked = [...byFolder.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, MAX_FOLDERS)
    .map(([folder, changes]) => ({ folder, change: changes[0]! }));
  const answers = new Map<string, boolean>();
  if (asked.length === 0) return answers;
  const files = await askDiagnose(
    connection,
    asked.map((a) => a.change.className),
    timeoutMs,
    signal,
  );
  for (const { folder, change } of asked) {
    const found = files?.get(change.className)?.files;
    if (found === undefined) continue;
    // A relative watched directory names its files relative to the agent's working directory.
    const local = (file: string) => path.resolve(agent.workingDirectory, toLocal(agent.map, file));
    if (found.length === 0) answers.set(folder, false);
    else if (found.some((file) => sameFile(local(file), change.path))) answers.set(folder, true);
  }
  return answers;
}

function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}
