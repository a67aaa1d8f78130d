/**
 * The one rule for what is proven live (design "Proof is evidence, not a delta"). A class file
 * counts as live only with evidence from the JVM's side: a VERIFY `applied` for its exact bytes
 * in this agent session, or bytes that have been at their path since before the app's JVM
 * started. The class index records that evidence per file; what it does not record is checked,
 * never assumed. docs/state.md ("The evidence rule") says it in words.
 *
 * - Bytes known to have changed at a path (against the record, or the scan before the build)
 *   are asked; the start-time rule covers only a file first seen in the agent session, and only
 *   when nothing shows that it arrived after the JVM started: its own stamp, its link's and
 *   its folders' ({@link folderBefore}).
 * - A class file is new to the JVM only when the record shows that its path held no class in
 *   this agent session: its folder's history is whole (history.ts). Otherwise it is asked. A new
 *   one is asked once too: the agent may register it (a new Spring bean) and fail, and a class
 *   the JVM has loaded since runs the bytes it loaded ({@link keptBy}).
 * - Bytes known live whose file was rewritten since (its stamp moved) are asked once: the
 *   answer keeps the evidence or takes it away ({@link keptBy}).
 * - A `not_observed` reads as "identical bytes" only while no receipt can have been evicted:
 *   the agent's HEALTH count of reloads and failures is below its 512 receipts.
 *
 * Pure: fed facts, returns decisions. The scan (snapshot.ts, history.ts) gathers the facts, the
 * run asks VERIFY for what this decides, and {@link judgeOnce} and {@link keptBy} read an answer.
 */
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';

/** Why a class file's bytes are live, or that they are not known to be (one byte per index row). */
export const EVIDENCE = {
  /** Newer bytes than the ones known live, not proven: `not_observed` for them means "not reloaded". */
  unproven: 0,
  /** VERIFY `applied` for exactly these bytes in this agent session. */
  proven: 1,
  /** At their path, unchanged, since before the app's JVM started (first seen in the session). */
  preStart: 2,
  /**
   * Written by a build at a path that held no class in this agent session, asked once: no receipt
   * says otherwise and DIAGNOSE says the JVM has not loaded the class, so it loads them on first use.
   */
  added: 3,
  /** Asked once, `not_observed`, and the agent's watcher had nothing pending: identical bytes rewritten. */
  unchanged: 4,
  /** No record of what the app has for this file (changed since the JVM started, or its start is unknown). */
  unknown: 5,
} as const;

/**
 * Added to a live code for bytes known live by that code whose file was rewritten since (its
 * stamp moved): not live until a single ask keeps the code ({@link keptBy}). `RECHECK +
 * EVIDENCE.preStart` (10) is "at this path since before the JVM started, rewritten since".
 * @internal for its tests
 */
export const RECHECK = 8;

/** The evidence codes that make a file live. */
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
  return Number.isInteger(code) && ((code >= EVIDENCE.unproven && code <= EVIDENCE.unknown) || recheckOf(code) !== undefined);
}

/** When the app's JVM started (epoch ms, within ±errorMs), from its process on this machine. */
export interface StartCut {
  startMs: number;
  errorMs: number;
}

/** The times a decision after a build is cut at, epoch ms. */
export interface Cuts {
  /** When this run's build hold was acknowledged: a stamp from before it was not written by this build. */
  holdAtMs: number;
}

/**
 * How coarse a file's ctime can be against `Date.now()` (Linux stamps files from a clock that
 * advances once per tick, up to 10 ms), in ms.
 */
export const COARSE_CLOCK_MS = 10;

/** What the record and the disk say about one class file (the start-time facts are {@link firstSeen}'s). */
export interface FileFacts extends FirstSight {
  /** The evidence code of the file's row in the record, or undefined when it has none. */
  recorded?: number;
  /** The row is a tombstone: the file was removed earlier in this agent session. */
  gone?: boolean;
  /** The bytes on disk equal the row's (false without a row). */
  sameBytes: boolean;
  /** The file's stamp is the row's (false without a row, or for a tombstone). */
  sameStamp: boolean;
  /** The file's ctime, epoch ms. */
  ctimeMs: number;
  /**
   * The record of this file's folder is this run's own scan from before the build, or the folder
   * was not there then: what differs from it was written during the build.
   */
  scannedBeforeBuild: boolean;
  /** Without a row: the record shows that the path held no class in this agent session before this build (history.ts). */
  newInSession: boolean;
}

/** What a class file needs. */
export type Decision =
  /** Live by `evidence`: nothing to ask. */
  | { kind: 'live'; evidence: LiveEvidence }
  /**
   * Ask VERIFY. `by: 'build'`: this build changed the bytes, so the agent's capture of them may
   * still be coming (poll under the deadline). `by: 'once'`: the bytes were there before this
   * build, so the agent has had its chance (ask once). `liveUnknown`: nothing records what the
   * app has for this file, so `not_observed` may mean the agent saw identical bytes. `keeps`:
   * the bytes are known live by this code, but the file was rewritten since: the answer keeps
   * it or takes it away ({@link keptBy}). A file without a row that `keeps` `added` is new to the
   * JVM by the record: asked once, and `added` only as {@link keptBy} reads the answer.
   */
  | { kind: 'verify'; by: 'build' | 'once'; liveUnknown: boolean; keeps?: LiveEvidence };

/**
 * The rule for one class file present after the build, against the record of this agent
 * session (the start-time rule is {@link firstSeen}'s, before the build):
 * - the row's bytes at the row's stamp with live evidence are live;
 * - the row's live bytes at a stamp that moved (rewritten, or back after a removal) are asked
 *   once, and the answer keeps the evidence or not;
 * - other bytes the row has are asked once; changed bytes are asked: polled when this build
 *   wrote them, asked once when they were there before it (an outside compile between runs);
 * - a file without a row is new to the JVM only when the record shows its path held no class
 *   in this session, and then asked once to keep `added`; otherwise it is asked like any other.
 * A stamp within the clock's coarseness of the hold counts as after it, which errs towards polling.
 */
export function decide(file: FileFacts, cuts: Cuts): Decision {
  const duringBuild = file.scannedBeforeBuild || file.ctimeMs >= cuts.holdAtMs - COARSE_CLOCK_MS;
  const by = duringBuild ? 'build' : 'once';
  const { recorded } = file;
  if (recorded === undefined)
    return file.newInSession ? { kind: 'verify', by: 'once', liveUnknown: false, keeps: EVIDENCE.added } : ask(by, true);
  const known = isLive(recorded) ? recorded : recheckOf(recorded);
  if (file.sameBytes && known !== undefined) {
    return file.sameStamp && !file.gone && known === recorded
      ? live(known)
      : { kind: 'verify', by: 'once', liveUnknown: false, keeps: known };
  }
  if (file.gone || !file.sameBytes) return ask(by, false);
  return ask('once', recorded === EVIDENCE.unknown);
}

/** What a scan that sees a class file for the first time in the agent session knows of it. */
export interface FirstSight {
  /** The file's ctime (through a symbolic link, the target's), epoch ms. */
  ctimeMs: number;
  /** The symbolic link's own ctime when the file is one, else `ctimeMs`. */
  linkCtimeMs: number;
  /** Every folder from the file's up to its class output directory passes {@link folderBefore}. */
  foldersBefore: boolean;
}

/**
 * The evidence of a class file first seen in this agent session (no record of it): at its path
 * since before the JVM started when nothing shows that it arrived later (its ctime, its link's
 * ctime and its folders, each before the start beyond its error), else unknown.
 */
export function firstSeen(file: FirstSight, start: StartCut | undefined): typeof EVIDENCE.preStart | typeof EVIDENCE.unknown {
  if (start === undefined) return EVIDENCE.unknown;
  const cut = start.startMs - start.errorMs;
  return file.ctimeMs < cut && file.linkCtimeMs < cut && file.foldersBefore ? EVIDENCE.preStart : EVIDENCE.unknown;
}

/** A folder's times, epoch ms (`birthtimeMs` 0 where the file system does not give it). */
export interface FolderTimes {
  birthtimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Whether a folder was at its path before the JVM started, as far as its stamp tells: unchanged
 * since (ctime), or born before it and changed since only in its entries (mtime moved with its
 * ctime: a class added next to the others). A ctime alone moves whenever an entry is added or
 * removed, so it cannot be the test; but a folder renamed into place (`mv staging out`) or whose
 * permissions changed keeps its mtime and birth time and moves only its ctime, so that is not
 * taken. Without a birth time only an unchanged folder counts.
 */
export function folderBefore(times: FolderTimes, start: StartCut | undefined): boolean {
  if (start === undefined) return false;
  const cut = start.startMs - start.errorMs;
  return times.ctimeMs < cut || (times.birthtimeMs > 0 && times.birthtimeMs < cut && times.mtimeMs >= cut);
}

/**
 * Whether a folder first listed in the agent session has held nothing but what it holds now
 * since the JVM started: no entry added or removed since (its ctime before the start, beyond its
 * error). Then every class file it has held in the session is one the listing records.
 */
export function wholeSinceStart(ctimeMs: number, start: StartCut | undefined): boolean {
  return start !== undefined && ctimeMs < start.startMs - start.errorMs;
}

/**
 * How long the agent's watcher may take to notice a change on disk, in ms: on macOS the JDK's
 * watcher polls every 2 s. A rewrite younger than this when RELOAD status was taken may not be
 * counted in its pending classes yet.
 * @internal for its tests
 */
export const WATCHER_NOTICE_MS = 3000;

/**
 * Whether a receipt may have been evicted from the agent's ledger: unknown without the agent's
 * count of reloads and failures since it started (HEALTH), or when it reached the 512 receipts
 * the ledger keeps. Below that, every class attempted still has its receipt.
 */
export function mayBeEvicted(attempts: number | undefined): boolean {
  return attempts === undefined || attempts >= AGENT_RECEIPT_CAPACITY;
}

/** What the run knows when it reads a `not_observed` answer to a single ask. */
export interface OnceContext {
  /** The file's {@link Decision} had `liveUnknown`. */
  liveUnknown: boolean;
  /** The agent watches the file's class output directory (DOCTOR; unknown counts as not). */
  watched: boolean;
  /**
   * RELOAD status taken before this build: nothing pending, and no hold before this run took its
   * own (DOCTOR at connect); undefined when it was not taken or got no receipt.
   */
  quiet?: { atMs: number };
  /** The file's ctime, epoch ms. */
  ctimeMs: number;
}

/**
 * Whether a single ask answered `not_observed` may leave the file `unchanged` (live), as far as
 * the run knew before asking: only when nothing records what the app has, the agent watches the
 * folder, had nothing pending and no hold before this run, and the rewrite is old enough for its
 * watcher to have noticed it. Its watcher then saw no change in content (identical bytes, as a
 * Maven recompile of a whole module writes). The answer counts only while {@link mayBeEvicted}
 * says no receipt can have been evicted.
 */
export function judgeOnce(context: OnceContext): 'unchanged' | 'not-observed' {
  const { quiet } = context;
  const noticed = quiet !== undefined && context.ctimeMs <= quiet.atMs - WATCHER_NOTICE_MS;
  return context.liveUnknown && context.watched && noticed ? 'unchanged' : 'not-observed';
}

/** What the agent said of a class besides its receipt. */
export interface AnswerFacts {
  /** A receipt may have been evicted ({@link mayBeEvicted}). */
  evicted: boolean;
  /** DIAGNOSE: false when it said the JVM has not loaded the class, true when it said it has; undefined: no word. */
  loaded?: boolean;
}

/**
 * What a single ask of bytes known live by `keeps` leaves them (a rewritten file, or a class new
 * to the JVM by the record, which keeps `added`): `applied` proves them. For `added`, an
 * `unverified` receipt (the agent never applies a class the JVM had not loaded: it is
 * `unverified`, or `failed` when it refused to register it as a bean) or no answer keeps it only
 * when DIAGNOSE says the JVM has not loaded the class, which then loads these bytes on first use;
 * a class it has loaded runs the bytes it loaded, which no receipt proves. Otherwise
 * `not_observed` keeps `keeps` (the agent skips identical bytes: it made no attempt since),
 * unless a receipt may have been evicted. Anything else (`mismatch`: the agent's latest attempt
 * was other bytes; `failed`; `unverified`) takes the evidence away: undefined.
 */
export function keptBy(
  keeps: LiveEvidence,
  answer: 'applied' | 'not-observed' | 'unverified' | 'other',
  facts: AnswerFacts,
): LiveEvidence | undefined {
  if (answer === 'applied') return EVIDENCE.proven;
  if (keeps === EVIDENCE.added) return answer !== 'other' && facts.loaded === false ? keeps : undefined;
  return answer === 'not-observed' && !facts.evicted ? keeps : undefined;
}

/** The evidence a row gets for `decision`: its live code, a live code to keep ({@link RECHECK}), or what a `not_observed` for its bytes would mean. */
export function evidenceFor(decision: Decision): number {
  if (decision.kind === 'live') return decision.evidence;
  if (decision.keeps !== undefined) return RECHECK + decision.keeps;
  return decision.liveUnknown ? EVIDENCE.unknown : EVIDENCE.unproven;
}

function live(evidence: LiveEvidence): Decision {
  return { kind: 'live', evidence };
}

function ask(by: 'build' | 'once', liveUnknown: boolean): Decision {
  return { kind: 'verify', by, liveUnknown };
}
