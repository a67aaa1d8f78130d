/**
 * The evidence rule, in one place (design "Proof is evidence, not a delta"; docs/evidence.md,
 * docs/state.md "The evidence rule"): a class file's bytes are live only by one of the
 * {@link KINDS} of evidence, each holding when all its {@link PRECONDITIONS} do. {@link verdictOf}
 * decides from plain facts what a class file is: live (by which kind, with the code its row
 * keeps), to be asked (how), or not live (why). The build, `watch`, `verify` and the restart
 * all call it; what they gather (snapshot.ts, placement.ts, session/proof.ts) are its facts, and
 * the words for its answers are report/'s. Pure: no clock, no disk, no English.
 */
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import type { EvidenceKind, NotLiveWhy } from '../outcome/facts.js';

/** Why a row's bytes are live, or that they are not known to be: the class index keeps one byte per row. */
export const EVIDENCE = {
  /** Newer bytes than the ones known live, not proven: `not_observed` for them means "not reloaded". */
  unproven: 0,
  /** Kind `receipt`: VERIFY `applied` for exactly these bytes in this agent session. */
  proven: 1,
  /** Kind `pre-start`: at their path, unchanged, since before the app's JVM started. */
  preStart: 2,
  /** Kind `not-loaded`: new to the JVM, which DIAGNOSE says has not loaded the class: it loads them on first use. */
  added: 3,
  /** Kind `watcher-saw`: asked once, `not_observed`, where the agent's watcher saw identical bytes. */
  unchanged: 4,
  /** No record of what the app has for this file (changed since the JVM started, or its start is unknown). */
  unknown: 5,
  /**
   * Not live, and nothing to ask: unchanged since before the JVM started in a folder its JVM is
   * known neither to load from nor to watch (not this app's); new bytes there are asked.
   */
  elsewhere: 6,
} as const;

/**
 * Added to a live code for bytes known live by that code whose file was rewritten since (its
 * stamp moved): not live until a single ask keeps the code. `RECHECK + EVIDENCE.preStart` (10)
 * is "at this path since before the JVM started, rewritten since".
 */
export const RECHECK = 8;

/** The codes that make a row live. */
export type LiveEvidence = typeof EVIDENCE.proven | typeof EVIDENCE.preStart | typeof EVIDENCE.added | typeof EVIDENCE.unchanged;

/** True when `evidence` makes the bytes it describes live. */
export function isLive(evidence: number): evidence is LiveEvidence {
  return evidence >= EVIDENCE.proven && evidence <= EVIDENCE.unchanged;
}

/**
 * The live code a {@link RECHECK} code waits to keep, or undefined for any other code.
 * @internal for its tests
 */
export function recheckOf(evidence: number): LiveEvidence | undefined {
  const kept = evidence - RECHECK;
  return isLive(kept) ? kept : undefined;
}

/** True for a valid evidence code (an index with another byte is corrupt). */
export function isEvidence(code: number): boolean {
  return Number.isInteger(code) && ((code >= EVIDENCE.unproven && code <= EVIDENCE.elsewhere) || recheckOf(code) !== undefined);
}

/** The ways a class can be live: one kind of evidence for each (the vocabulary's EvidenceKind). */
type Kind = EvidenceKind;
/** Why a class file is not live (the vocabulary's NotLiveWhy; report/ has the words). */
type Why = NotLiveWhy;

/**
 * What each kind needs, by name, in the order {@link verdictOf} checks it: the first that fails
 * says why a class is not live. docs/evidence.md "The kinds of evidence" says each in words
 * (test/classes/evidence-doc.test.ts holds the two together); {@link HOLDS} says each in code.
 * @internal for its tests
 */
export const PRECONDITIONS = {
  receipt: ['applied-in-this-session', 'others-unmoved', 'unmoved-since-read'],
  recorded: [
    'recorded-live-in-session',
    'same-bytes',
    'stamp-kept-or-unattempted',
    'others-unmoved',
    'receipts-bounded',
    'unmoved-since-read',
  ],
  'pre-start': [
    'start-known',
    'first-seen',
    'unchanged-since-start',
    'placed-since-start',
    'on-class-path',
    'first-on-class-path',
    'others-unmoved',
  ],
  'watcher-saw': [
    'no-record',
    'folder-shown-watched',
    'no-refused-registration',
    'quiet-before-build',
    'noticed',
    'seen-at-watcher-start',
    'receipts-bounded',
    'not-observed-once',
    'others-unmoved',
    'loads-this-file',
    'unmoved-since-read',
  ],
  'not-loaded': [
    'new-in-session',
    'no-refusal',
    'diagnosed-this-file',
    'diagnosed-not-loaded',
    'on-class-path',
    'first-on-class-path',
    'unmoved-since-read',
  ],
  restart: ['the-app-back', 'pre-start-or-receipt-in-new-jvm'],
} as const satisfies Record<Kind, readonly string[]>;

/** One precondition's name. */
type Precondition = (typeof PRECONDITIONS)[Kind][number];

/** The kind each live code was recorded for. */
const KIND_OF_CODE: Record<LiveEvidence, Kind> = {
  [EVIDENCE.proven]: 'receipt',
  [EVIDENCE.preStart]: 'pre-start',
  [EVIDENCE.added]: 'not-loaded',
  [EVIDENCE.unchanged]: 'watcher-saw',
};

/** What the class path entries before a class output directory say of one class: none holds it, one does, or that cannot be told. */
export type EarlierEntries = 'none' | 'held' | 'unknown';

/** When the app's JVM started (epoch ms, within ±errorMs), from its process on this machine. */
export interface StartCut {
  startMs: number;
  errorMs: number;
}

/**
 * How coarse a file's ctime can be against `Date.now()` (Linux stamps files from a clock that
 * advances once per tick, up to 10 ms), in ms.
 */
export const COARSE_CLOCK_MS = 10;

/** The latest epoch ms that is certainly before `start`. */
export function cutOf(start: StartCut): number {
  return start.startMs - start.errorMs;
}

/** The record's row for a class file's path in this agent session. */
interface RowFacts {
  /** Its evidence code. */
  code: number;
  /** A tombstone: the file was removed earlier in the session. */
  gone: boolean;
  /** The bytes on disk are the row's. */
  sameBytes: boolean;
  /** The file's stamp (size, mtime, ctime, inode) is the row's. */
  sameStamp: boolean;
}

/** What the disk shows of a class file seen for the first time in the agent session (placement.ts). */
export interface SightFacts {
  /** The JVM's start; undefined when not known here. */
  start: StartCut | undefined;
  /** The symbolic link's own ctime when the file is one, else its ctime (epoch ms). */
  linkCtimeMs: number;
  /** Every folder and link on its path, as the JVM resolves it, is there since before the start. */
  placed: boolean;
  /** Its class output directory is an entry of the JVM's class path. */
  onClassPath: boolean;
  /** What the class path entries before that one say of the class. */
  earlier: EarlierEntries;
  /** Its folder is known to be neither on the JVM's class path nor watched by its agent: not this app's. */
  elsewhere: boolean;
  /** The JVM's class path was read (from its command line); false: `onClassPath` and `earlier` say nothing. */
  classPathKnown: boolean;
}

/** The agent's watcher and its receipts, for a `not_observed` to a single ask. Times in epoch ms. */
interface WatchFacts {
  /** The file's folder is shown watched: named or found by the agent, there when it started, its name not excluded. */
  shownWatched: boolean;
  /** DOCTOR's `unwatchableDirectoryCount`: registrations the OS refused. */
  refused: number;
  /** RELOAD status before this build showed nothing pending and no hold before this run's, at this time. */
  quietAtMs?: number | undefined;
  /** How long the agent's watcher may take to dispatch a write, in ms. */
  noticeMs: number;
}

/** How many receipts the agent may have made in this session (the ledger keeps 512). */
interface ReceiptCount {
  /** HEALTH's reloads plus failures; undefined when it did not say. */
  counted: number | undefined;
  /** Classes whose attempts HEALTH may not count (a class new to the JVM registered as a bean): the record's bound. */
  uncounted: number;
}

/** What DIAGNOSE said of the class. */
export interface DiagnoseFacts {
  /** Its first `Compiled file:` is this file, or it found none: its load state is of this class. */
  thisFile: boolean;
  /** false: the JVM has not loaded the class; true: it has; undefined: no word. */
  loaded?: boolean | undefined;
}

/** The question the rule put to VERIFY ({@link verdictOf} without an answer), as a fact of the answer. */
export interface Asked {
  /** Read as a single ask (a file there before this build, or new to the JVM), not as this build's capture. */
  once: boolean;
  /** Nothing records what the app has for the file. */
  liveUnknown: boolean;
  /** The live code a good answer keeps. */
  keeps?: LiveEvidence | undefined;
  /** Asked because another class file of its binary name moved in this run's window (copies.ts). */
  othersMoved?: boolean | undefined;
}

/** VERIFY's answer for a class file's bytes, with what was asked and what else was said. */
export interface AnswerFacts {
  asked: Asked;
  /**
   * The answer: `not-observed` (final), `still-not-observed` (at its settle time or deadline),
   * `not-watched` (asked briefly where the agent does not watch), `other` (failed, mismatch, a
   * restart or a pause said), `no-answer` (a deadline without one, an interrupt, a lost connection,
   * a new session).
   */
  status: 'applied' | 'not-observed' | 'still-not-observed' | 'unverified' | 'not-watched' | 'other' | 'no-answer';
  /** The file still has the stamp it was scanned with. */
  unmoved: boolean;
  watch?: WatchFacts | undefined;
  receipts?: ReceiptCount | undefined;
  diagnose?: DiagnoseFacts | undefined;
  /** Where the JVM would load the class from on first use: its class output directory on the class path, no earlier entry holding it. */
  loadsFrom?: Pick<SightFacts, 'onClassPath' | 'earlier' | 'classPathKnown'> | undefined;
  /**
   * Where the JVM's start is known: whether it loaded the class from this file's class output
   * directory then (an entry of its class path as it resolved it then, no earlier entry holding
   * the class then or since). Undefined: the start is not known.
   */
  loadedHere?: boolean | undefined;
  /** The JVM's start, when known (for `seen-at-watcher-start`). */
  start?: StartCut | undefined;
}

/** Everything the rule looks at for one class file. Times in epoch ms. */
export interface Facts {
  /** The record's row, when it has one in this agent session. */
  row?: RowFacts | undefined;
  /** The file's ctime. */
  ctimeMs: number;
  /** This build wrote the bytes (this run's scan before it saw others, or they are stamped after its hold). */
  byBuild: boolean;
  /** Without a row: the record shows the path held no class in this session before (history.ts). */
  newInSession: boolean;
  /** First seen in the session: what the disk shows against the JVM's start. */
  sight?: SightFacts | undefined;
  /** After a restart: the agent back is the app's, in a new session, and this is its JVM's disk or receipt. */
  restarted?: boolean | undefined;
  /**
   * Another class file of its binary name, in another class output directory, changed, came or
   * went since the record (since the JVM's start, for a file first seen): a reload of it would have
   * replaced the class (copies.ts).
   */
  othersMoved?: boolean | undefined;
  /**
   * The file holds the bytes it had just before the build's hold, with that stamp's ctime: a
   * rewrite by the build with identical bytes is no change, and the bytes are there since then
   * (undefined: not known so).
   */
  bytesSinceMs?: number | undefined;
  /** VERIFY's answer, once asked. */
  answer?: AnswerFacts | undefined;
}

/** What a class file is, by the rule. */
export type Verdict =
  /** Live by `by` (for `recorded` and `restart`, `of` is the kind underneath); its row keeps `code`. */
  | { kind: 'live'; by: Kind; of?: Kind; code: LiveEvidence }
  /**
   * Ask VERIFY: `poll` under the deadline (this build wrote the bytes), `once` (the agent had its
   * chance). `liveUnknown`: nothing records what the app has. `keeps`: the live code a good answer
   * keeps. `code`: the row's evidence until answered.
   */
  | { kind: 'ask'; how: 'poll' | 'once'; liveUnknown: boolean; keeps?: LiveEvidence; code: number }
  /** Not live, and why; `code`: what the row keeps now (undefined: as it was). */
  | { kind: 'not-live'; why: Why; code?: number }
  /** Unchanged since before the JVM started where it neither loads nor watches classes: not this app's, nothing to prove. */
  | { kind: 'outside'; code: typeof EVIDENCE.elsewhere };

/** A verdict before any answer: live, what to ask, or outside this app. */
export type Question = Extract<Verdict, { kind: 'live' | 'ask' | 'outside' }>;

/**
 * Each precondition of {@link PRECONDITIONS} as a test of the facts. Before an answer a class is
 * judged by what the record and the disk show; after one, by the answer and what came with it.
 */
const HOLDS: Record<Precondition, (facts: Facts) => boolean> = {
  'applied-in-this-session': ({ answer }) => answer?.status === 'applied',
  'unmoved-since-read': ({ answer }) => answer === undefined || answer.unmoved,
  'recorded-live-in-session': (facts) => knownLive(facts) !== undefined,
  'same-bytes': ({ row, answer }) => (answer === undefined ? row?.sameBytes === true : answer.asked.keeps !== undefined),
  // The row's stamp, or a rewrite the agent made no attempt of since (it skips identical bytes).
  'stamp-kept-or-unattempted': ({ row, answer }) =>
    answer === undefined ? row !== undefined && row.sameStamp && !row.gone && isLive(row.code) : answer.status === 'not-observed',
  // The agent's answer is the class's, whichever file it read, and one asked beside the move may come before the
  // agent's reload from the moved file (this build's capture, or its watcher's dispatch): no answer then decides.
  'others-unmoved': ({ othersMoved, answer }) => othersMoved !== true && answer?.asked.othersMoved !== true,
  'receipts-bounded': ({ answer }) => answer === undefined || boundOf(answer.receipts) === undefined,
  'start-known': ({ sight }) => sight?.start !== undefined,
  'first-seen': ({ row, sight }) => row === undefined && sight !== undefined,
  'unchanged-since-start': ({ sight, ctimeMs }) =>
    sight?.start !== undefined && ctimeMs < cutOf(sight.start) && sight.linkCtimeMs < cutOf(sight.start),
  'placed-since-start': ({ sight }) => sight?.placed === true,
  'on-class-path': ({ sight, answer }) => (sight ?? answer?.loadsFrom)?.onClassPath === true,
  'first-on-class-path': ({ sight, answer }) => (sight ?? answer?.loadsFrom)?.earlier === 'none',
  'no-record': ({ answer }) => answer?.asked.liveUnknown === true,
  'folder-shown-watched': ({ answer }) => answer?.watch?.shownWatched === true,
  'no-refused-registration': ({ answer }) => answer?.watch?.refused === 0,
  'quiet-before-build': ({ answer }) => answer?.watch?.quietAtMs !== undefined,
  // Bytes the build wrote again identically were there since before the hold: their write is the one to notice.
  noticed: ({ answer, ctimeMs, bytesSinceMs }) => {
    const watch = answer?.watch;
    return watch?.quietAtMs !== undefined && Math.min(ctimeMs, bytesSinceMs ?? ctimeMs) <= watch.quietAtMs - watch.noticeMs;
  },
  'not-observed-once': ({ answer }) => answer?.asked.once === true && answer.status === 'not-observed',
  // The watcher's identical bytes are the file's, not the JVM's: they are what it runs only where it loads this file,
  // and, with no attempt since, only where it loaded it at its start.
  'loads-this-file': ({ sight, answer }) => {
    if (answer?.loadedHere === false) return false;
    const from = loadPlaceOf(answer, sight);
    return from === undefined || !from.classPathKnown || (from.onClassPath && from.earlier === 'none');
  },
  // No attempt means these bytes are the watcher's baseline, taken when it armed after the JVM's start. Bytes that came
  // later with a newer mtime were reloaded then (a receipt), so only bytes there since before the start are what the
  // JVM loaded: a copy that kept an older mtime (agent FileWatcher.prepopulateContentHashes) is its baseline unseen, and
  // the stamp now says nothing of it once a touch or the same bytes written again moved it.
  'seen-at-watcher-start': ({ ctimeMs, bytesSinceMs, sight, answer }) => {
    const start = sight?.start ?? answer?.start;
    return start !== undefined && Math.min(ctimeMs, bytesSinceMs ?? ctimeMs) < cutOf(start);
  },
  'new-in-session': ({ answer }) => answer?.asked.keeps === EVIDENCE.added,
  // `unverified` (the agent never applies a class the JVM had not loaded) or no attempt; `failed` is a refused registration.
  'no-refusal': ({ answer }) => answer !== undefined && MAY_BE_NEW.has(answer.status),
  'diagnosed-this-file': ({ answer }) => answer?.diagnose?.loaded !== undefined && answer.diagnose.thisFile,
  'diagnosed-not-loaded': ({ answer }) => answer?.diagnose?.loaded === false,
  'the-app-back': ({ restarted }) => restarted === true,
  'pre-start-or-receipt-in-new-jvm': (facts) => holds('pre-start', facts) || holds('receipt', facts),
};

/** Answers that leave a class new to the JVM: no attempt, or `unverified`. */
const MAY_BE_NEW: ReadonlySet<AnswerFacts['status']> = new Set(['unverified', 'not-observed', 'still-not-observed', 'not-watched']);

/** The first precondition of `kind` that the facts do not meet, or undefined when all hold. */
function failing(kind: Exclude<Kind, 'restart'>, facts: Facts): Precondition | undefined {
  return PRECONDITIONS[kind].find((precondition) => !HOLDS[precondition](facts));
}

function holds(kind: Exclude<Kind, 'restart'>, facts: Facts): boolean {
  return failing(kind, facts) === undefined;
}

/** The live code the record shows for the bytes: its row's, or the one a rewritten file's ask keeps. */
function knownLive({ row, answer }: Facts): LiveEvidence | undefined {
  if (answer !== undefined) return answer.asked.keeps;
  if (row === undefined) return undefined;
  return isLive(row.code) ? row.code : recheckOf(row.code);
}

/**
 * The one rule: what a class file is, from `facts`. Without an answer: live by the record or by
 * the disk, else what to ask. With VERIFY's answer: live by the kind the answer completes, else
 * not live and why (its first precondition that fails).
 */
export function verdictOf(facts: Facts & { answer?: never }): Question;
export function verdictOf(facts: Facts): Verdict;
export function verdictOf(facts: Facts): Verdict {
  return facts.answer === undefined ? askFor(facts) : read(facts.answer, facts);
}

/** Before an answer: live by the record or the disk (first sight), or what to ask. */
function askFor(facts: Facts): Question {
  const { row, sight } = facts;
  const how = facts.byBuild ? 'poll' : 'once';
  if (row === undefined) {
    if (sight === undefined) return facts.newInSession ? ask('once', false, EVIDENCE.added) : ask(how, true);
    const failed = failing('pre-start', facts);
    if (failed === undefined) return liveBy(facts, 'pre-start', EVIDENCE.preStart);
    // There since the start, unless another copy was reloaded since: one ask says (the receipt is the class's).
    if (failed === 'others-unmoved') return ask('once', false, EVIDENCE.preStart);
    // Unchanged since the start where the JVM neither loads nor watches classes: not this app's.
    return sight.elsewhere && HOLDS['unchanged-since-start'](facts) ? OUTSIDE : ask('once', true);
  }
  if (row.code === EVIDENCE.elsewhere && row.sameBytes) return OUTSIDE;
  const known = knownLive(facts);
  if (known !== undefined && row.sameBytes) return holds('recorded', facts) ? liveBy(facts, 'recorded', known) : ask('once', false, known);
  // Bytes known to have changed win: asked, however old the file.
  if (row.gone || !row.sameBytes) return ask(how, false);
  return ask('once', row.code === EVIDENCE.unknown);
}

const OUTSIDE = { kind: 'outside', code: EVIDENCE.elsewhere } as const;

/** An asked class read by its answer: the kind the answer completes, or why not. */
function read(answer: AnswerFacts, facts: Facts): Verdict {
  const { asked, status } = answer;
  if (status === 'applied') {
    const failed = failing('receipt', facts);
    return failed === undefined ? liveBy(facts, 'receipt', EVIDENCE.proven) : notLive(whyOf(failed, answer, facts.sight));
  }
  // A final answer against bytes kept live takes their evidence away (no attempt seen, but not provably none: nothing
  // records what the app has); no answer leaves them to be asked again.
  const unseen = status === 'not-observed' || status === 'still-not-observed';
  const lost =
    asked.keeps === undefined || status === 'no-answer'
      ? undefined
      : unseen && asked.keeps !== EVIDENCE.added
        ? EVIDENCE.unknown
        : EVIDENCE.unproven;
  if (!asked.once) return notLive({ kind: 'answer' });
  const kind = asked.keeps === EVIDENCE.added ? 'not-loaded' : asked.keeps !== undefined ? 'recorded' : 'watcher-saw';
  const failed = failing(kind, facts);
  if (failed === undefined) return liveBy(facts, kind, asked.keeps ?? EVIDENCE.unchanged);
  // Another copy moved: this answer says nothing yet, and the row waits to be asked again once none moves.
  return notLive(whyOf(failed, answer, facts.sight), failed === 'others-unmoved' ? undefined : lost);
}

/** Where the JVM loads the class file from: where it will on first use when the answer says, else where it did at its start. */
function loadPlaceOf(
  answer: AnswerFacts | undefined,
  sight: SightFacts | undefined,
): Pick<SightFacts, 'onClassPath' | 'earlier' | 'classPathKnown'> | undefined {
  return answer?.loadsFrom ?? sight;
}

/** Why a read class is not live, from the first precondition of its kind that failed. */
function whyOf(failed: Precondition, answer: AnswerFacts, sight: SightFacts | undefined): Why {
  switch (failed) {
    case 'unmoved-since-read':
      return { kind: 'rewritten' };
    case 'diagnosed-this-file':
      return { kind: 'new-not-shown', because: answer.diagnose?.loaded === undefined ? 'no-word' : 'other-file' };
    case 'diagnosed-not-loaded':
      return { kind: 'new-not-shown', because: 'loaded' };
    case 'on-class-path':
    case 'first-on-class-path':
      return { kind: 'new-not-shown', because: 'class-path' };
    case 'others-unmoved':
      return { kind: 'other-copy-moved' };
  }
  // Any other answer than no attempt speaks for itself (its detail is the agent's).
  if (answer.status !== 'not-observed' && answer.status !== 'still-not-observed') return { kind: 'answer' };
  switch (failed) {
    case 'no-record':
      return { kind: 'not-attempted' };
    case 'folder-shown-watched':
      return { kind: 'not-shown-watched' };
    case 'loads-this-file': {
      // Only an entry before it that cannot be told leaves whether the JVM loads this file open.
      const from = loadPlaceOf(answer, sight);
      const open = answer.loadedHere !== false && from?.onClassPath === true && from.earlier === 'unknown';
      return open ? { kind: 'loads-elsewhere', unknown: true } : { kind: 'loads-elsewhere' };
    }
    case 'seen-at-watcher-start':
      return { kind: 'old-mtime' };
    case 'no-refused-registration':
      return { kind: 'refused-registrations', refused: answer.watch?.refused ?? 0 };
    case 'quiet-before-build':
      return { kind: 'busy-before-build' };
    case 'noticed':
      return { kind: 'too-recent', noticeMs: answer.watch?.noticeMs ?? 0 };
    default:
      return bounded(answer.receipts);
  }
}

/**
 * Why a `not_observed` may not mean "no attempt": undefined while the agent's receipts are bounded
 * below the 512 it keeps (HEALTH's reloads and failures, and the classes HEALTH may not count).
 */
function boundOf(receipts: ReceiptCount | undefined): Why | undefined {
  const counted = receipts?.counted;
  const uncounted = receipts?.uncounted ?? Number.POSITIVE_INFINITY;
  return counted !== undefined && counted + uncounted < AGENT_RECEIPT_CAPACITY ? undefined : bounded(receipts);
}

function bounded(receipts: ReceiptCount | undefined): Why {
  const uncounted = receipts?.uncounted ?? Number.POSITIVE_INFINITY;
  return { kind: 'receipts-unbounded', counted: receipts?.counted, uncounted, capacity: AGENT_RECEIPT_CAPACITY };
}

/**
 * How long the agent's watcher may take to dispatch a write, in ms: its `debounceMs` (0 to 60 000;
 * undefined, its options not known: the longest it takes), a poll of its events and its batch's
 * gathering (FileWatcher.pollLoop: 1 s at most), and on macOS the JDK's polling watch service
 * (FileWatcher: PollingWatchService, every 2 s).
 */
export function noticeMs(debounceMs: number | undefined, platform: NodeJS.Platform): number {
  return (debounceMs ?? MAX_DEBOUNCE_MS) + DISPATCH_MS + (platform === 'darwin' ? POLLING_WATCH_MS : 0);
}

/** The agent's longest `debounceMs`, in ms (config/AgentConfig.java). */
const MAX_DEBOUNCE_MS = 60_000;
/** The watcher's poll of its events and its batch's gathering, in ms (FileWatcher.pollLoop). */
const DISPATCH_MS = 1000;
/** The JDK's polling watch service's cycle on macOS, in ms. */
const POLLING_WATCH_MS = 2000;

function liveBy(facts: Facts, by: Kind, code: LiveEvidence): Question {
  const underneath = by === 'recorded' ? KIND_OF_CODE[code] : undefined;
  if (facts.restarted === true) return { kind: 'live', by: 'restart', of: underneath ?? by, code };
  return underneath === undefined ? { kind: 'live', by, code } : { kind: 'live', by, of: underneath, code };
}

function ask(how: 'poll' | 'once', liveUnknown: boolean, keeps?: LiveEvidence): Question {
  const code = keeps !== undefined ? RECHECK + keeps : liveUnknown ? EVIDENCE.unknown : EVIDENCE.unproven;
  return keeps === undefined ? { kind: 'ask', how, liveUnknown, code } : { kind: 'ask', how, liveUnknown, keeps, code };
}

function notLive(why: Why, code?: number): Verdict {
  return code === undefined ? { kind: 'not-live', why } : { kind: 'not-live', why, code };
}

/**
 * Whether a folder first listed in the agent session has held only what it holds now since the
 * JVM started (ctime before the start, beyond its error): its listing records every class file.
 */
export function wholeSinceStart(ctimeMs: number, start: StartCut | undefined): boolean {
  return start !== undefined && ctimeMs < cutOf(start);
}
