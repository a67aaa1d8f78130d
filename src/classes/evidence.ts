/**
 * The one rule for what is proven live (design "Proof is evidence, not a delta"; docs/state.md
 * "The evidence rule"): a VERIFY `applied` for a class file's exact bytes in this agent session,
 * or bytes at their path since before the app's JVM started. What the class index does not
 * record is asked, never assumed. Pure: the scan (snapshot.ts, history.ts) gathers the facts,
 * {@link decide} says what to ask, {@link judgeOnce} and {@link keptBy} read an answer.
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
   * Ask VERIFY: `build` polls under the deadline (this build wrote the bytes, the agent may still
   * capture them), `once` asks once (the agent has had its chance). `liveUnknown`: `not_observed`
   * may mean identical bytes. `keeps`: the live code the answer keeps or takes away ({@link keptBy}).
   */
  | { kind: 'verify'; by: 'build' | 'once'; liveUnknown: boolean; keeps?: LiveEvidence };

/**
 * The rule for one class file present after the build, against this agent session's record (the
 * start-time rule is {@link firstSeen}'s). Live bytes whose stamp moved (rewritten, or back after a
 * removal) are asked once to keep their code; changed bytes are polled when this build wrote them,
 * asked once when they were there before it (an outside compile between runs). A file without a
 * row that is new in the session is asked once to keep `added` (the agent may register it, as a
 * new Spring bean, and fail). A stamp within the clock's coarseness of the hold counts as after it.
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
 * The evidence of a class file first seen in this agent session: `preStart` when its ctime, its
 * link's and its folders' are all before the JVM's start beyond its error, else unknown.
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
 * Whether a folder was at its path before the JVM started: ctime before the start, or born before
 * it with its mtime moved since (an entry added). A ctime that moved alone is not taken: a folder
 * renamed into place (`mv staging out`) or chmod-ed keeps its mtime and birth time. Without a
 * birth time only an unchanged folder counts.
 */
export function folderBefore(times: FolderTimes, start: StartCut | undefined): boolean {
  if (start === undefined) return false;
  const cut = start.startMs - start.errorMs;
  return times.ctimeMs < cut || (times.birthtimeMs > 0 && times.birthtimeMs < cut && times.mtimeMs >= cut);
}

/**
 * Whether a folder first listed in the agent session has held only what it holds now since the
 * JVM started (ctime before the start, beyond its error): its listing records every class file.
 */
export function wholeSinceStart(ctimeMs: number, start: StartCut | undefined): boolean {
  return start !== undefined && ctimeMs < start.startMs - start.errorMs;
}

/**
 * How long the agent's watcher may take to notice a change, in ms (on macOS the JDK's watcher
 * polls every 2 s): a rewrite younger than this at RELOAD status may not be pending yet.
 * @internal for its tests
 */
export const WATCHER_NOTICE_MS = 3000;

/**
 * Whether a receipt may have been evicted from the agent's ledger: HEALTH's count of reloads and
 * failures since the agent started is unknown or has reached the 512 receipts the ledger keeps.
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
  /** RELOAD status before this build found nothing pending and no hold before this run's (DOCTOR at connect). */
  quiet?: { atMs: number };
  /** The file's ctime, epoch ms. */
  ctimeMs: number;
}

/**
 * Whether a single ask answered `not_observed` may leave the file `unchanged`: only when nothing
 * records what the app has and the agent, quiet before this run, watches the folder and has had
 * time to notice the rewrite. Its watcher then saw identical bytes (as a Maven recompile of a whole
 * module writes). Counts only while {@link mayBeEvicted} is false.
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
 * What a single ask leaves bytes known live by `keeps` (undefined: the evidence is gone). `applied`
 * proves them. `added` survives `unverified` or no answer only when DIAGNOSE says the JVM has not
 * loaded the class (the agent never applies a class the JVM has not loaded; a loaded class runs
 * the bytes it loaded, which no receipt proves). Otherwise `not_observed` keeps `keeps` (the agent
 * skips identical bytes) unless a receipt may have been evicted; `mismatch`, `failed` and
 * `unverified` take it away.
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
