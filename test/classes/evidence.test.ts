/** The evidence rule (src/classes/evidence.ts): fed facts, returning decisions. */
import { describe, expect, it } from 'vitest';
import {
  COARSE_CLOCK_MS,
  decide,
  EVIDENCE,
  evidenceFor,
  firstSeen,
  folderBefore,
  isEvidence,
  isLive,
  judgeOnce,
  keptBy,
  mayBeEvicted,
  RECHECK,
  recheckOf,
  WATCHER_NOTICE_MS,
  wholeSinceStart,
  type FileFacts,
} from '../../src/classes/evidence.js';

const START = { startMs: 1_000_000, errorMs: 11 };
const CUT = START.startMs - START.errorMs;
const HOLD = 2_000_000;
const cuts = { holdAtMs: HOLD };
const file = (facts: Partial<FileFacts>): FileFacts => ({
  sameBytes: false,
  sameStamp: false,
  ctimeMs: HOLD + 50,
  linkCtimeMs: HOLD + 50,
  foldersBefore: true,
  scannedBeforeBuild: false,
  newInSession: false,
  ...facts,
});
const live = (evidence: number) => ({ kind: 'live', evidence });
const ask = (by: 'build' | 'once', liveUnknown: boolean) => ({ kind: 'verify', by, liveUnknown });
const recheck = (keeps: number) => ({ kind: 'verify', by: 'once', liveUnknown: false, keeps });
const LIVE = [EVIDENCE.proven, EVIDENCE.preStart, EVIDENCE.added, EVIDENCE.unchanged];

describe('decide', () => {
  it('bytes known to have changed are asked, however old the file: the start-time rule never overrides the record', () => {
    for (const recorded of [...LIVE, EVIDENCE.unproven, EVIDENCE.unknown]) {
      expect(decide(file({ recorded, ctimeMs: 1, linkCtimeMs: 1 }), cuts)).toEqual(ask('once', false));
      expect(decide(file({ recorded, ctimeMs: 1, linkCtimeMs: 1, scannedBeforeBuild: true }), cuts)).toEqual(ask('build', false));
    }
  });

  it("the row's live bytes at the row's stamp are live; rewritten (the stamp moved) they are asked once, keeping the code", () => {
    for (const evidence of LIVE) {
      expect(decide(file({ recorded: evidence, sameBytes: true, sameStamp: true }), cuts)).toEqual(live(evidence));
      expect(decide(file({ recorded: evidence, sameBytes: true }), cuts)).toEqual(recheck(evidence));
      // Not answered yet: asked again, whatever the stamp.
      expect(decide(file({ recorded: RECHECK + evidence, sameBytes: true, sameStamp: true }), cuts)).toEqual(recheck(evidence));
      expect(decide(file({ recorded: RECHECK + evidence }), cuts)).toEqual(ask('build', false));
    }
  });

  it('the recorded bytes without live evidence are asked once', () => {
    expect(decide(file({ recorded: EVIDENCE.unproven, sameBytes: true, sameStamp: true }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.unknown, sameBytes: true }), cuts)).toEqual(ask('once', true));
  });

  it('changed bytes are polled when this build wrote them, asked once when they were there before its hold', () => {
    expect(decide(file({ recorded: EVIDENCE.proven }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS - 1 }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - 5000, scannedBeforeBuild: true }), cuts)).toEqual(ask('build', false));
  });

  it('a file removed earlier in the session that is back is asked; with its live bytes, once, keeping them on a good answer', () => {
    expect(decide(file({ recorded: EVIDENCE.preStart, gone: true }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.preStart, gone: true, ctimeMs: HOLD - 100 }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.proven, gone: true, sameBytes: true }), cuts)).toEqual(recheck(EVIDENCE.proven));
    expect(decide(file({ recorded: EVIDENCE.unproven, gone: true, sameBytes: true }), cuts)).toEqual(ask('build', false));
  });

  it('a file with no row is new only when the record shows its path held no class in the session; otherwise it is asked', () => {
    // New to the JVM: asked once, to keep `added` only as the answer and DIAGNOSE allow (keptBy).
    const added = { kind: 'verify', by: 'once', liveUnknown: false, keeps: EVIDENCE.added };
    expect(decide(file({ newInSession: true }), cuts)).toEqual(added);
    expect(decide(file({ newInSession: true, ctimeMs: HOLD - 5000 }), cuts)).toEqual(added);
    expect(decide(file({}), cuts)).toEqual(ask('build', true));
    expect(decide(file({ scannedBeforeBuild: true, ctimeMs: 1 }), cuts)).toEqual(ask('build', true));
    expect(decide(file({ ctimeMs: HOLD - 5000 }), cuts)).toEqual(ask('once', true));
  });
});

describe('firstSeen', () => {
  const seen = (facts: Partial<Parameters<typeof firstSeen>[0]>) => ({
    ctimeMs: CUT - 1,
    linkCtimeMs: CUT - 1,
    foldersBefore: true,
    ...facts,
  });

  it('a file first seen is at its path since before the JVM started only when its ctime, its link and its folders say so', () => {
    expect(firstSeen(seen({}), START)).toBe(EVIDENCE.preStart);
    expect(firstSeen(seen({ ctimeMs: CUT }), START)).toBe(EVIDENCE.unknown);
    // A symbolic link pointed at an old file after the start.
    expect(firstSeen(seen({ linkCtimeMs: CUT }), START)).toBe(EVIDENCE.unknown);
    // A folder that came to its path after the start (a swap).
    expect(firstSeen(seen({ foldersBefore: false }), START)).toBe(EVIDENCE.unknown);
    expect(firstSeen(seen({}), undefined)).toBe(EVIDENCE.unknown);
  });
});

describe('folderBefore and wholeSinceStart', () => {
  const times = (birthtimeMs: number, mtimeMs: number, ctimeMs: number) => ({ birthtimeMs, mtimeMs, ctimeMs });

  it('a folder unchanged since the start, or born before it and changed since only in its entries, was there before it', () => {
    expect(folderBefore(times(1, 1, CUT - 1), START)).toBe(true);
    expect(folderBefore(times(1, CUT + 5000, CUT + 5000), START)).toBe(true);
    // Born after the start.
    expect(folderBefore(times(CUT, CUT + 5000, CUT + 5000), START)).toBe(false);
    // Renamed into place (or its permissions changed) after the start: only its ctime moved.
    expect(folderBefore(times(1, 1, CUT + 5000), START)).toBe(false);
    // No birth time here: only an unchanged folder counts.
    expect(folderBefore(times(0, CUT + 5000, CUT + 5000), START)).toBe(false);
    expect(folderBefore(times(0, 1, CUT - 1), START)).toBe(true);
    expect(folderBefore(times(1, 1, 1), undefined)).toBe(false);
  });

  it('a folder first listed is whole only when no entry was added or removed since the start (its ctime)', () => {
    expect(wholeSinceStart(CUT - 1, START)).toBe(true);
    expect(wholeSinceStart(CUT, START)).toBe(false);
    expect(wholeSinceStart(1, undefined)).toBe(false);
  });
});

describe('codes', () => {
  it('live codes, the codes to recheck and the valid ones', () => {
    expect([0, 1, 2, 3, 4, 5].filter(isLive)).toEqual([1, 2, 3, 4]);
    expect([9, 10, 11, 12].map(recheckOf)).toEqual([1, 2, 3, 4]);
    expect([0, 5, 8, 13, 2].map(recheckOf)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect([...Array(16).keys()].filter(isEvidence)).toEqual([0, 1, 2, 3, 4, 5, 9, 10, 11, 12]);
    expect([9, 10, 11, 12].some(isLive)).toBe(false);
  });

  it("a row's evidence for each decision", () => {
    expect(evidenceFor({ kind: 'live', evidence: EVIDENCE.added })).toBe(EVIDENCE.added);
    expect(evidenceFor({ kind: 'verify', by: 'once', liveUnknown: false, keeps: EVIDENCE.preStart })).toBe(RECHECK + EVIDENCE.preStart);
    expect(evidenceFor({ kind: 'verify', by: 'once', liveUnknown: true })).toBe(EVIDENCE.unknown);
    expect(evidenceFor({ kind: 'verify', by: 'build', liveUnknown: false })).toBe(EVIDENCE.unproven);
  });
});

describe('reading a single ask', () => {
  const quiet = { atMs: 10_000_000 };
  const old = quiet.atMs - WATCHER_NOTICE_MS;
  const base = { liveUnknown: true, watched: true, quiet, ctimeMs: old };

  it('not_observed may mean unchanged only when every condition holds', () => {
    expect(judgeOnce(base)).toBe('unchanged');
    expect(judgeOnce({ ...base, liveUnknown: false })).toBe('not-observed');
    expect(judgeOnce({ ...base, watched: false })).toBe('not-observed');
    expect(judgeOnce({ liveUnknown: true, watched: true, ctimeMs: old })).toBe('not-observed');
    expect(judgeOnce({ ...base, ctimeMs: old + 1 })).toBe('not-observed');
  });

  it('no receipt can have been evicted only with a count below 512', () => {
    expect(mayBeEvicted(0)).toBe(false);
    expect(mayBeEvicted(511)).toBe(false);
    expect(mayBeEvicted(512)).toBe(true);
    expect(mayBeEvicted(undefined)).toBe(true);
  });

  it('a rewritten file keeps its evidence on applied (proven) or not_observed (while nothing was evicted), never on a bad answer', () => {
    for (const keeps of LIVE.filter((code) => code !== EVIDENCE.added)) {
      expect(keptBy(keeps, 'applied', { evicted: false })).toBe(EVIDENCE.proven);
      expect(keptBy(keeps, 'not-observed', { evicted: false })).toBe(keeps);
      expect(keptBy(keeps, 'not-observed', { evicted: true })).toBeUndefined();
      expect(keptBy(keeps, 'other', { evicted: false })).toBeUndefined();
      expect(keptBy(keeps, 'unverified', { evicted: false })).toBeUndefined();
    }
  });

  it('a class new to the JVM stays new on unverified or no answer only while DIAGNOSE says the JVM has not loaded it', () => {
    expect(keptBy(EVIDENCE.added, 'applied', { evicted: false })).toBe(EVIDENCE.proven);
    for (const answer of ['unverified', 'not-observed'] as const) {
      expect(keptBy(EVIDENCE.added, answer, { evicted: true, loaded: false })).toBe(EVIDENCE.added);
      expect(keptBy(EVIDENCE.added, answer, { evicted: false, loaded: true })).toBeUndefined();
      expect(keptBy(EVIDENCE.added, answer, { evicted: false })).toBeUndefined();
    }
    // `failed` (a refused bean registration) or other bytes attempted.
    expect(keptBy(EVIDENCE.added, 'other', { evicted: false, loaded: false })).toBeUndefined();
  });
});
