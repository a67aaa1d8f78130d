/** The evidence rule (src/classes/evidence.ts): fed facts, returning decisions. */
import { describe, expect, it } from 'vitest';
import {
  COARSE_CLOCK_MS,
  decide,
  EVIDENCE,
  firstSeen,
  isLive,
  judgeOnce,
  WATCHER_NOTICE_MS,
  type FileFacts,
} from '../../src/classes/evidence.js';

const START = { startMs: 1_000_000, errorMs: 11 };
const HOLD = 2_000_000;
const cuts = { appStart: START, holdAtMs: HOLD };
const file = (facts: Partial<FileFacts>): FileFacts => ({ sameBytes: false, ctimeMs: HOLD + 50, scannedBeforeBuild: false, ...facts });
const live = (evidence: number) => ({ kind: 'live', evidence });
const ask = (by: 'build' | 'once', liveUnknown: boolean) => ({ kind: 'verify', by, liveUnknown });

describe('decide', () => {
  it('bytes on disk since before the JVM started are live, whatever the record says', () => {
    expect(decide(file({ ctimeMs: START.startMs - 12, recorded: EVIDENCE.unproven }), cuts)).toEqual(live(EVIDENCE.preStart));
    expect(decide(file({ ctimeMs: START.startMs - 12 }), cuts)).toEqual(live(EVIDENCE.preStart));
  });

  it('a ctime within the start time error is not before the start: it errs towards asking', () => {
    expect(decide(file({ ctimeMs: START.startMs - 10, recorded: EVIDENCE.unknown, sameBytes: true }), cuts)).toEqual(ask('once', true));
  });

  it('with the start unknown, nothing counts as there before it', () => {
    expect(decide(file({ ctimeMs: 1, recorded: EVIDENCE.unknown, sameBytes: true }), { holdAtMs: HOLD })).toEqual(ask('once', true));
  });

  it('the recorded bytes with live evidence are live; without it they are asked once', () => {
    for (const evidence of [EVIDENCE.proven, EVIDENCE.preStart, EVIDENCE.added, EVIDENCE.unchanged]) {
      expect(decide(file({ recorded: evidence, sameBytes: true }), cuts)).toEqual(live(evidence));
    }
    expect(decide(file({ recorded: EVIDENCE.unproven, sameBytes: true }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.unknown, sameBytes: true }), cuts)).toEqual(ask('once', true));
  });

  it('changed bytes are polled when this build wrote them, asked once when they were there before its hold', () => {
    expect(decide(file({ recorded: EVIDENCE.proven }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS - 1 }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.proven, ctimeMs: HOLD - 5000, scannedBeforeBuild: true }), cuts)).toEqual(ask('build', false));
  });

  it('a file removed earlier in the session that is back is asked, unless it came back with its live bytes', () => {
    expect(decide(file({ recorded: EVIDENCE.preStart, gone: true }), cuts)).toEqual(ask('build', false));
    expect(decide(file({ recorded: EVIDENCE.preStart, gone: true, ctimeMs: HOLD - 100 }), cuts)).toEqual(ask('once', false));
    expect(decide(file({ recorded: EVIDENCE.proven, gone: true, sameBytes: true }), cuts)).toEqual(live(EVIDENCE.proven));
    expect(decide(file({ recorded: EVIDENCE.unproven, gone: true, sameBytes: true }), cuts)).toEqual(ask('build', false));
  });

  it('a file with no record is new when this build wrote it, or when the scan before the build did not see it', () => {
    expect(decide(file({}), cuts)).toEqual(live(EVIDENCE.added));
    expect(decide(file({ ctimeMs: HOLD - 5000, scannedBeforeBuild: true }), cuts)).toEqual(live(EVIDENCE.added));
    // The record is an earlier run's, and the file is older than this hold: an outside compile.
    expect(decide(file({ ctimeMs: HOLD - 5000 }), cuts)).toEqual(ask('once', true));
  });
});

describe('firstSeen and isLive', () => {
  it('a file first seen is live only when older than the JVM beyond its error', () => {
    expect(firstSeen(START.startMs - 12, START)).toBe(EVIDENCE.preStart);
    expect(firstSeen(START.startMs - 11, START)).toBe(EVIDENCE.unknown);
    expect(firstSeen(0, undefined)).toBe(EVIDENCE.unknown);
    expect([0, 1, 2, 3, 4, 5].filter(isLive)).toEqual([1, 2, 3, 4]);
  });
});

describe('judgeOnce', () => {
  const quiet = { atMs: 10_000_000 };
  const old = quiet.atMs - WATCHER_NOTICE_MS;
  const base = { liveUnknown: true, watched: true, quiet, ctimeMs: old, receiptsMayBeEvicted: false };

  it('not_observed means unchanged only when every condition holds', () => {
    expect(judgeOnce(base)).toBe('unchanged');
    expect(judgeOnce({ ...base, liveUnknown: false })).toBe('not-observed');
    expect(judgeOnce({ ...base, watched: false })).toBe('not-observed');
    expect(judgeOnce({ liveUnknown: true, watched: true, ctimeMs: old, receiptsMayBeEvicted: false })).toBe('not-observed');
    expect(judgeOnce({ ...base, ctimeMs: old + 1 })).toBe('not-observed');
    expect(judgeOnce({ ...base, receiptsMayBeEvicted: true })).toBe('not-observed');
  });
});
