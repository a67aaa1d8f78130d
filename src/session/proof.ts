/**
 * The proof step of a build: VERIFY what the rule (classes/evidence.ts) says needs asking, read each
 * answer by it, and record in the class index the evidence the answers give.
 */
import type { AgentConnection } from '../agent/connection.js';
import { askDiagnose, askPending, askReloadCount } from '../agent/requests.js';
import { type AnswerFacts, EVIDENCE, type Facts, type StartCut, type Verdict, verdictOf } from '../classes/evidence.js';
import { sightSince } from '../classes/scan.js';
import { type JvmPaths, Placement } from '../classes/placement.js';
import { answerOf, askedOf, classDirOf, diagnosisOf, mayBeNew, rowsOf, sameFile, uncountedOf, unmovedOf } from '../classes/answers.js';
import type { ClassIndex } from '../classes/columns.js';
import type { ChangeSet } from '../classes/changes.js';
import type { ClassChange, ClassVerdict, NeverReloads, VerdictWhy, VerifyReport } from '../outcome/facts.js';
import { verifyClasses, type VerifyOptions, type VerifyTarget } from '../verify/round.js';
import { type Diagnosis, lineNaming, restartRequiredBy } from '../agent/reports.js';
import path from 'node:path';
import { emptyIndex } from '../classes/columns.js';
import { readClassIndex, StateError } from '../state/store.js';
import type { StatePlace } from '../state/folder.js';
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
  /**
   * True when the folder of `file` is shown watched: the agent watches it (its options, DOCTOR or
   * DIAGNOSE say so; unknown counts as not), and its class output directory has been at its path
   * since the app started (a folder missing then is never watched: agent SpringBootContext.initialize).
   */
  watched: (file: string) => boolean;
  /** DOCTOR's `unwatchableDirectoryCount`: registrations the OS refused. */
  refused: number;
  /** How long the agent's watcher may take to dispatch a write, in ms (classes/evidence.ts `noticeMs`). */
  noticeMs: number;
  /** Why the agent never reloads `file` (its folder is not watched, its name is excluded), when that is known, else undefined. */
  unwatched: (file: string) => NeverReloads | undefined;
  /** RELOAD status before the build found nothing pending and no earlier hold, at `atMs` (epoch ms). */
  quiet?: { atMs: number };
  /** Class files that held their recorded bytes just before the build, and since when (epoch ms): see session/detect.ts `Before.steady`. */
  steady?: ReadonlyMap<string, number>;
  /** What ends the wait for unattempted classes early (paused, capture over: check.ts). */
  watch?: VerifyOptions['watch'];
  /** Where the JVM loads classes from (classes/placement.ts): a class new to it loads these bytes only from there. */
  paths?: JvmPaths;
  /** When the JVM started, when known: where it loaded a class from then (classes/placement.ts `loadedFrom`). */
  start?: StartCut;
  /** How the agent names paths (its working directory, `--path-map`), to read DIAGNOSE's `Compiled file:` lines. */
  agentPaths?: { map: readonly PathMapEntry[]; workingDirectory: string };
  /** When this build's hold was acknowledged (epoch ms): an `applied` receipt completed before it is an earlier run's. */
  sinceMs?: number;
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
  const rows = rowsOf(input.index, new Set([...polled, ...once, ...added, ...notWatched].map((c) => c.path)));
  const facts = (change: ClassChange, answer: Omit<AnswerFacts, 'asked' | 'watch'>, single: boolean): Facts => ({
    ctimeMs: change.ctimeMs ?? Number.POSITIVE_INFINITY,
    // The same bytes written again by this build: they are there since before it.
    bytesSinceMs: change.after !== undefined && change.before === change.after ? input.steady?.get(change.path) : undefined,
    byBuild: !single,
    newInSession: false,
    answer: { ...answer, asked: askedOf(change, single), watch: watchOf(change, input), start: input.start },
  });
  // A not_observed that may be read as live ends the ask; any other is polled briefly, since the
  // capture this build's ok scheduled may still attempt these bytes.
  const mayKeep = (change: ClassChange) =>
    change.keeps !== undefined ||
    verdictOf(facts(change, { status: 'not-observed', receipts: NONE_COUNTED, unmoved: true }, true)).kind === 'live';
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
  // Only a count below the agent's 512 receipts lets a not_observed mean "no attempt" (evidence.ts, receipts-bounded).
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
  const uncounted = uncountedOf(input.index);
  const placement = new Placement(input.start, input.paths ?? { top: '/', classPath: [], watched: () => null });
  const read = raw.map((verdict, i) => {
    const change = asked[i]!;
    if (i >= firstNotWatched && verdict.status !== 'applied') return { verdict: notWatchedVerdict(change, input.unwatched(change.path)!) };
    const answer = {
      status: answerOf(verdict),
      unmoved: unmovedOf(input.index, rows, change),
      receipts: { counted: attempts, uncounted },
      diagnose: diagnosisOf(diagnoses.get(change.className), change, input.agentPaths),
      loadsFrom: placement.loadsFrom(change.path, classDirOf(change)),
      loadedHere: placement.loadedFrom(change.path, classDirOf(change)),
    };
    return readBy(verdict, change, verdictOf(facts(change, answer, single(i))), input.sinceMs);
  });
  record(input.index, rows, asked, read);
  const verdicts = read.map((r) => withDiagnosis(r.verdict, diagnoses));
  // An added class that stays new is listed as added, not as a verdict.
  const stays = (i: number) => i >= polled.length + once.length && i < firstNotWatched && read[i]!.code === EVIDENCE.added;
  return {
    ...report,
    verdicts: verdicts.filter((_, i) => !stays(i)),
    checked: once.length,
    added: [...input.changes.added.filter((c) => !c.verifiable), ...added.filter((_, i) => stays(polled.length + once.length + i))],
  };
}

/**
 * The class index of the agent whose state folder is `place`: what the builds of this checkout
 * recorded (classes/evidence.ts). One that cannot be read is no record (`warn` says why).
 */
export function recordAt(place: StatePlace, warn: (message: string) => void): ClassIndex {
  try {
    return readClassIndex(place, warn);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    warn(error.message);
    return emptyIndex();
  }
}

/** No receipt counted: what a single ask's `not_observed` would mean with nothing evicted. */
const NONE_COUNTED = { counted: 0, uncounted: 0 };
/** The agent's watcher as a `not_observed` to a single ask of `change` needs it. */
function watchOf(change: ClassChange, input: ProofInput): AnswerFacts['watch'] {
  return { shownWatched: input.watched(change.path), refused: input.refused, quietAtMs: input.quiet?.atMs, noticeMs: input.noticeMs };
}

/** A verdict as read by the rule, with the evidence code it gives its row (undefined: the scan's stays). */
interface Read {
  verdict: ClassVerdict;
  code?: number;
}

/** The round's `verdict` of `change` as the rule read it (`by`): live with its kind's words, or not live with why. */
function readBy(verdict: ClassVerdict, change: ClassChange, by: Verdict, sinceMs: number | undefined): Read {
  if (by.kind === 'live') {
    const evidence = by.of === undefined ? { by: by.by } : { by: by.by, of: by.of };
    const earlier = earlierReceipt(verdict, sinceMs);
    const why: VerdictWhy =
      by.by === 'receipt'
        ? earlier === undefined
          ? verdict.why
          : { kind: 'applied-earlier', completedAt: earlier }
        : by.by === 'not-loaded'
          ? { kind: 'new-to-jvm', receipt: verdict.receipt?.status ?? '' }
          : { kind: by.by === 'watcher-saw' ? 'watcher-saw' : 'kept-unseen' };
    return { verdict: { ...verdict, status: by.by === 'receipt' ? 'applied' : 'unchanged', why, evidence }, code: by.code };
  }
  if (by.kind !== 'not-live') return { verdict };
  if (by.why.kind === 'rewritten') return { verdict: { ...verdict, status: 'rewritten', why: { kind: 'rewritten' } } };
  const status = answerOf(verdict);
  // No attempt seen, and the rule says why that proves nothing; any other answer speaks for itself, but a receipt
  // read while another copy of the class moved (the rule's other-copy-moved) is no proof either.
  const unseen =
    by.why.kind === 'other-copy-moved' || (by.why.kind !== 'answer' && (status === 'not-observed' || status === 'still-not-observed'));
  const read = unseen
    ? {
        ...verdict,
        status: 'not-observed' as const,
        why: { kind: 'not-live' as const, why: by.why, rechecked: change.keeps !== undefined },
      }
    : verdict;
  return by.code === undefined ? { verdict: read } : { verdict: read, code: by.code };
}

/** When `verdict`'s receipt completed (ISO), when that is before `sinceMs` (epoch ms): an earlier run's attempt, not this build's. */
function earlierReceipt(verdict: ClassVerdict, sinceMs: number | undefined): string | undefined {
  const completedAt = verdict.receipt?.completedAt;
  if (sinceMs === undefined || completedAt === undefined) return undefined;
  const atMs = Date.parse(completedAt);
  return Number.isFinite(atMs) && atMs < sinceMs ? completedAt : undefined;
}

/** Records in `index` the evidence codes the reads give (a live verdict's, or a single ask's answer taking it away). */
function record(index: ClassIndex, rows: ReadonlyMap<string, number>, asked: readonly ClassChange[], read: readonly Read[]): void {
  read.forEach(({ code }, i) => {
    const row = rows.get(asked[i]!.path);
    if (row !== undefined && code !== undefined) index.evidence[row] = code;
  });
}

/** The verdict of a class the agent cannot reload, and why (its folder is not watched, its name excluded). */
function notWatchedVerdict(change: ClassChange, why: NeverReloads): ClassVerdict {
  return { className: change.className, path: change.path, sha256: change.after!, status: 'not-watched', why };
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

/** What the proof in a new JVM after a restart needs (session/group.ts). Times in ms. */
export interface NewJvmInput {
  connection: AgentConnection;
  /** The new agent session, and its JVM's start. */
  sessionId: string;
  start: StartCut;
  /** Where the new JVM loads classes from (classes/placement.ts). */
  paths: JvmPaths;
  /** The verdicts of the classes the build changed or checked, to be proven again. */
  kept: readonly ClassVerdict[];
  /** The build's new classes (new to the old JVM). */
  added: readonly ClassChange[];
  /** One deadline for the VERIFY polling. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * The classes of `input` in the new JVM by the evidence rule, kind `restart`: live by their file,
 * unchanged at its path since before the new JVM started as it resolves it there, else by VERIFY
 * `applied` in the new agent session; `rewritten` when the file has other bytes or is gone. The
 * build's new classes come as verdicts too (`added`: those without bytes, left as they were).
 */
export async function proveInNewJvm(input: NewJvmInput): Promise<{ verdicts: ClassVerdict[]; added: ClassChange[] }> {
  const fresh = input.added.filter((a) => a.verifiable && a.after !== undefined);
  const classes = [
    ...input.kept,
    ...fresh.map((a) => ({
      className: a.className,
      path: a.path,
      sha256: a.after!,
      status: 'unverified' as const,
      why: { kind: 'none' as const },
    })),
  ];
  const read = classes.map((v) => readAfter(v, input.start, input.paths));
  const asked = read.flatMap((r, i) => (r === 'verify' ? [classes[i]!] : []));
  const targets = asked.map((v) => ({ className: v.className, path: v.path, sha256: v.sha256 }));
  const signal = input.signal === undefined ? {} : { signal: input.signal };
  const report = await verifyClasses(input.connection, targets, { sessionId: input.sessionId, timeoutMs: input.timeoutMs, ...signal });
  const answers = new Map(report.verdicts.map((v) => [v.path, v]));
  const verdicts = classes.map((v, i) => (read[i] === 'verify' ? inNewSession(answers.get(v.path)!) : (read[i] as ClassVerdict)));
  return { verdicts, added: input.added.filter((a) => !fresh.includes(a)) };
}

/** A class file read from the disk against the new JVM's start (classes/scan.ts `sightSince`), or `verify` when the disk cannot tell. */
function readAfter(verdict: ClassVerdict, start: StartCut, paths: JvmPaths): ClassVerdict | 'verify' {
  const sight = sightSince(verdict.path, verdict.className, verdict.sha256, start, paths);
  if (sight === 'unknown') return 'verify';
  if (typeof sight === 'string') return { ...verdict, status: 'rewritten', why: { kind: 'new-jvm', sight } };
  const read = verdictOf({ ctimeMs: sight.ctimeMs, byBuild: false, newInSession: false, sight: sight.sight, restarted: true });
  if (read.kind !== 'live') return 'verify';
  const evidence = { by: read.by, ...(read.of === undefined ? {} : { of: read.of }) };
  return { ...verdict, status: 'unchanged', why: { kind: 'new-jvm', sight: 'pre-start' }, evidence };
}

/** A VERIFY verdict in the new agent session: `applied` is kind `restart` by its receipt, the bytes the new JVM loaded. */
function inNewSession(verdict: ClassVerdict): ClassVerdict {
  if (verdict.status !== 'applied') return verdict;
  return { ...verdict, why: { kind: 'new-jvm', sight: 'receipt' }, evidence: { by: 'restart', of: 'receipt' } };
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

/** `verdict` with DIAGNOSE's words when it is not live and the agent said something of it. */
function withDiagnosis(verdict: ClassVerdict, diagnoses: ReadonlyMap<string, Diagnosis>): ClassVerdict {
  const said = diagnoses.get(verdict.className);
  if (said === undefined || said.words.length === 0 || !SHOWN_WITH_WORDS.has(verdict.status)) return verdict;
  return { ...verdict, why: { kind: 'diagnosed', words: said.words, of: verdict.why } };
}
const SHOWN_WITH_WORDS: ReadonlySet<string> = new Set(['failed', 'unverified', 'not-observed', 'timeout']);

/**
 * A `failed` or `unverified` verdict becomes `restart-required` only when its receipt, for these
 * very bytes, says so of the class itself (the agent's StructuralReloader words). PENDING is the
 * agent session's history (agent SuperclassReportingVerificationTest: a class stays listed after a
 * later save of it applied): it is asked only for its words, which such a verdict then carries.
 */
async function restartRequired(input: SaidInput, verdicts: ClassVerdict[]): Promise<ClassVerdict[]> {
  const candidate = (v: ClassVerdict) => v.status === 'unverified' || v.status === 'failed';
  const byReceipt = (v: ClassVerdict) => restartRequiredBy(v.agentDetail ?? '', v.className);
  if (!verdicts.some(candidate)) return verdicts;
  const entries = verdicts.some((v) => candidate(v) && !byReceipt(v))
    ? await askPending(input.connection, input.timeoutMs, input.signal)
    : undefined;
  return verdicts.map((verdict) => {
    if (!candidate(verdict)) return verdict;
    if (byReceipt(verdict)) return { ...verdict, status: 'restart-required' as const };
    const entry = entries === undefined ? undefined : lineNaming(entries, verdict.className);
    return entry === undefined ? verdict : { ...verdict, why: { kind: 'pending' as const, entry, of: verdict.why } };
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
