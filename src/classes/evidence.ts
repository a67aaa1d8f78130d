/**
 * The one rule for what is proven live (design "Proof is evidence, not a delta"). A class file
 * counts as live only with evidence from the JVM's side: a VERIFY `applied` for its exact bytes
 * in this agent session, or bytes unchanged since before the app's JVM started. The class index
 * records that evidence per file; what it does not record is checked, never assumed.
 *
 * Pure: fed facts, returns decisions. The scan (snapshot.ts) gathers the facts, the run asks
 * VERIFY for what this decides, and {@link judgeOnce} reads a single answer.
 */

/** Why a class file's bytes are live, or that they are not known to be (one byte per index row). */
export const EVIDENCE = {
  /** Newer bytes than the ones known live, not proven: `not_observed` for them means "not reloaded". */
  unproven: 0,
  /** VERIFY `applied` for exactly these bytes in this agent session. */
  proven: 1,
  /** On disk, unchanged (ctime), since before the app's JVM started. */
  preStart: 2,
  /** Added by a build in this session: the JVM loads its current bytes on first use. */
  added: 3,
  /** Asked once, `not_observed`, and the agent's watcher had nothing pending: identical bytes rewritten. */
  unchanged: 4,
  /** No record of what the app has for this file (changed since the JVM started, or its start is unknown). */
  unknown: 5,
} as const;

/** An {@link EVIDENCE} code. */
export type Evidence = (typeof EVIDENCE)[keyof typeof EVIDENCE];

/** The evidence codes that make a file live. */
export type LiveEvidence = typeof EVIDENCE.proven | typeof EVIDENCE.preStart | typeof EVIDENCE.added | typeof EVIDENCE.unchanged;

/** True when `evidence` makes the bytes it describes live. */
export function isLive(evidence: number): evidence is LiveEvidence {
  return evidence >= EVIDENCE.proven && evidence <= EVIDENCE.unchanged;
}

/** True for a valid {@link EVIDENCE} code (an index with another byte is corrupt). */
export function isEvidence(code: number): code is Evidence {
  return Number.isInteger(code) && code >= EVIDENCE.unproven && code <= EVIDENCE.unknown;
}

/** When the app's JVM started (epoch ms, within ±errorMs), from its process on this machine. */
export interface StartCut {
  startMs: number;
  errorMs: number;
}

/** The times a decision is cut at, epoch ms. */
export interface Cuts {
  /** The app's JVM start; undefined when it is unknown (then no file counts as there before it). */
  appStart?: StartCut;
  /** When this run's build hold was acknowledged: a stamp from before it was not written by this build. */
  holdAtMs: number;
}

/**
 * How coarse a file's ctime can be against `Date.now()` (Linux stamps files from a clock that
 * advances once per tick, up to 10 ms), in ms.
 */
export const COARSE_CLOCK_MS = 10;

/** What the record and the disk say about one class file. */
export interface FileFacts {
  /** The evidence code of the file's row in the record, or undefined when it has none. */
  recorded?: Evidence;
  /** The row is a tombstone: the file was removed earlier in this agent session. */
  gone?: boolean;
  /** The bytes on disk equal the row's (false without a row). */
  sameBytes: boolean;
  /** The file's ctime, epoch ms. */
  ctimeMs: number;
  /**
   * The record of this file's folder is this run's own scan from before the build: a file without
   * a row was absent then. Otherwise the record is an earlier run's, in this agent session.
   */
  scannedBeforeBuild: boolean;
}

/** What a class file needs. */
export type Decision =
  /** Live by `evidence`: nothing to ask. */
  | { kind: 'live'; evidence: LiveEvidence }
  /**
   * Ask VERIFY. `by: 'build'`: this build changed the bytes, so the agent's capture of them may
   * still be coming (poll under the deadline). `by: 'once'`: the bytes were there before this
   * build, so the agent has had its chance (ask once). `liveUnknown`: nothing records what the
   * app has for this file, so `not_observed` may mean the agent saw identical bytes.
   */
  | { kind: 'verify'; by: 'build' | 'once'; liveUnknown: boolean };

/**
 * The rule for one class file present after the build (issue 11, "The rule"):
 * - bytes on disk since before the JVM started (ctime before its start, beyond its error) are live;
 * - the row's bytes with live evidence are live; the row's bytes without are asked once;
 * - changed bytes are asked: polled when this build wrote them, asked once when they were there
 *   before it (an outside compile between runs);
 * - a file removed earlier in this session that is back is asked unless it came back with the
 *   live bytes it left with (the app may still have the class loaded);
 * - a file absent before this build and never seen in this session is new to the JVM: live;
 *   without a scan from before the build, one whose ctime is older than the hold was there
 *   before it, and is asked once.
 * A stamp within the clock's coarseness of a cut counts as after it, which errs towards asking.
 */
export function decide(file: FileFacts, cuts: Cuts): Decision {
  const start = cuts.appStart;
  if (start !== undefined && file.ctimeMs < start.startMs - start.errorMs) return live(EVIDENCE.preStart);
  const duringBuild = file.scannedBeforeBuild || file.ctimeMs >= cuts.holdAtMs - COARSE_CLOCK_MS;
  if (file.recorded === undefined) {
    return duringBuild ? live(EVIDENCE.added) : ask('once', true);
  }
  if (file.sameBytes && isLive(file.recorded)) return live(file.recorded);
  if (file.gone) return ask(duringBuild ? 'build' : 'once', false);
  if (file.sameBytes) return ask('once', file.recorded === EVIDENCE.unknown);
  return ask(duringBuild ? 'build' : 'once', false);
}

/**
 * The evidence a file gets from a scan made before the build with no record of it: there since
 * before the JVM started, or unknown.
 */
export function firstSeen(ctimeMs: number, appStart: StartCut | undefined): typeof EVIDENCE.preStart | typeof EVIDENCE.unknown {
  return appStart !== undefined && ctimeMs < appStart.startMs - appStart.errorMs ? EVIDENCE.preStart : EVIDENCE.unknown;
}

/**
 * How long the agent's watcher may take to notice a change on disk, in ms: on macOS the JDK's
 * watcher polls every 2 s. A rewrite younger than this when RELOAD status was taken may not be
 * counted in its pending classes yet.
 */
export const WATCHER_NOTICE_MS = 3000;

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
  /** The agent may have evicted receipts (it has answered for as many classes as it keeps): `not_observed` is then no evidence. */
  receiptsMayBeEvicted: boolean;
}

/**
 * Whether a single ask answered `not_observed` leaves the file `unchanged` (live) or not proven:
 * unchanged only when nothing records what the app has, the agent watches the folder, had
 * nothing pending and no hold before this run, the rewrite is old enough for its watcher to
 * have noticed it, and no receipt can have been evicted. Its watcher then saw no change in
 * content (identical bytes, as a Maven recompile of a whole module writes).
 */
export function judgeOnce(context: OnceContext): 'unchanged' | 'not-observed' {
  const { quiet } = context;
  const noticed = quiet !== undefined && context.ctimeMs <= quiet.atMs - WATCHER_NOTICE_MS;
  return context.liveUnknown && context.watched && noticed && !context.receiptsMayBeEvicted ? 'unchanged' : 'not-observed';
}

function live(evidence: LiveEvidence): Decision {
  return { kind: 'live', evidence };
}

function ask(by: 'build' | 'once', liveUnknown: boolean): Decision {
  return { kind: 'verify', by, liveUnknown };
}
