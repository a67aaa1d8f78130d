/** The evidence rule (src/classes/evidence.ts): fed plain facts, returning verdicts. */
import { describe, expect, it } from 'vitest';
import {
  COARSE_CLOCK_MS,
  EVIDENCE,
  type AnswerFacts,
  type Facts,
  isEvidence,
  isLive,
  RECHECK,
  recheckOf,
  verdictOf,
  wholeSinceStart,
} from '../../src/classes/evidence.js';
import { afterBuildFacts, type FileFacts } from '../../src/classes/file-facts.js';

const START = { startMs: 1_000_000, errorMs: 11 };
const CUT = START.startMs - START.errorMs;
const HOLD = 2_000_000;
const file = (facts: Partial<FileFacts>): FileFacts => ({
  file: '/p/target/classes/A.class',
  folder: '/p/target/classes',
  dir: '/p/target/classes',
  gone: false,
  sameBytes: false,
  sameStamp: false,
  ctimeMs: HOLD + 50,
  linkCtimeMs: HOLD + 50,
  scannedBeforeBuild: false,
  newInSession: false,
  ...facts,
});
/** The rule after a build whose hold came at HOLD, without an answer. */
const decide = (facts: Partial<FileFacts>) => verdictOf(afterBuildFacts(file(facts), HOLD));
const LIVE = [EVIDENCE.proven, EVIDENCE.preStart, EVIDENCE.added, EVIDENCE.unchanged] as const;
const KIND = { 1: 'receipt', 2: 'pre-start', 3: 'not-loaded', 4: 'watcher-saw' } as const;
const live = (code: (typeof LIVE)[number]) => ({ kind: 'live', by: 'recorded', of: KIND[code], code });
const ask = (how: 'poll' | 'once', liveUnknown: boolean) => ({
  kind: 'ask',
  how,
  liveUnknown,
  code: liveUnknown ? EVIDENCE.unknown : EVIDENCE.unproven,
});
const recheck = (keeps: number) => ({ kind: 'ask', how: 'once', liveUnknown: false, keeps, code: RECHECK + keeps });

describe('before an answer: what the record and the disk show, or what to ask', () => {
  it('bytes known to have changed are asked, however old the file: the start-time rule never overrides the record', () => {
    for (const recorded of [...LIVE, EVIDENCE.unproven, EVIDENCE.unknown]) {
      expect(decide({ recorded, ctimeMs: 1, linkCtimeMs: 1 })).toEqual(ask('once', false));
      expect(decide({ recorded, ctimeMs: 1, linkCtimeMs: 1, scannedBeforeBuild: true })).toEqual(ask('poll', false));
    }
  });

  it("the row's live bytes at the row's stamp are live by the record; rewritten (the stamp moved) they are asked once, keeping the code", () => {
    for (const evidence of LIVE) {
      expect(decide({ recorded: evidence, sameBytes: true, sameStamp: true })).toEqual(live(evidence));
      expect(decide({ recorded: evidence, sameBytes: true })).toEqual(recheck(evidence));
      // Not answered yet: asked again, whatever the stamp.
      expect(decide({ recorded: RECHECK + evidence, sameBytes: true, sameStamp: true })).toEqual(recheck(evidence));
      expect(decide({ recorded: RECHECK + evidence })).toEqual(ask('poll', false));
    }
  });

  it('the recorded bytes without live evidence are asked once', () => {
    expect(decide({ recorded: EVIDENCE.unproven, sameBytes: true, sameStamp: true })).toEqual(ask('once', false));
    expect(decide({ recorded: EVIDENCE.unknown, sameBytes: true })).toEqual(ask('once', true));
  });

  it('changed bytes are polled when this build wrote them, asked once when they were there before its hold', () => {
    expect(decide({ recorded: EVIDENCE.proven })).toEqual(ask('poll', false));
    expect(decide({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS })).toEqual(ask('poll', false));
    expect(decide({ recorded: EVIDENCE.proven, ctimeMs: HOLD - COARSE_CLOCK_MS - 1 })).toEqual(ask('once', false));
    expect(decide({ recorded: EVIDENCE.proven, ctimeMs: HOLD - 5000, scannedBeforeBuild: true })).toEqual(ask('poll', false));
  });

  it('a file removed earlier in the session that is back is asked; with its live bytes, once, keeping them on a good answer', () => {
    expect(decide({ recorded: EVIDENCE.preStart, gone: true })).toEqual(ask('poll', false));
    expect(decide({ recorded: EVIDENCE.preStart, gone: true, ctimeMs: HOLD - 100 })).toEqual(ask('once', false));
    expect(decide({ recorded: EVIDENCE.proven, gone: true, sameBytes: true })).toEqual(recheck(EVIDENCE.proven));
    expect(decide({ recorded: EVIDENCE.unproven, gone: true, sameBytes: true })).toEqual(ask('poll', false));
  });

  it('a file with no row is new only when the record shows its path held no class in the session; otherwise it is asked', () => {
    // New to the JVM: asked once, to keep `added` only as the answer and DIAGNOSE allow (kind not-loaded).
    const added = recheck(EVIDENCE.added);
    expect(decide({ newInSession: true })).toEqual(added);
    expect(decide({ newInSession: true, ctimeMs: HOLD - 5000 })).toEqual(added);
    expect(decide({})).toEqual(ask('poll', true));
    expect(decide({ scannedBeforeBuild: true, ctimeMs: 1 })).toEqual(ask('poll', true));
    expect(decide({ ctimeMs: HOLD - 5000 })).toEqual(ask('once', true));
  });
});

describe('kind pre-start: a file first seen in the session', () => {
  const sight = (facts: Partial<NonNullable<Facts['sight']>> & { ctimeMs?: number } = {}) => {
    const { ctimeMs = CUT - 1, ...rest } = facts;
    return verdictOf({
      ctimeMs,
      byBuild: false,
      newInSession: false,
      sight: {
        start: START,
        linkCtimeMs: CUT - 1,
        placed: true,
        onClassPath: true,
        earlier: 'none',
        elsewhere: false,
        classPathKnown: true,
        ...rest,
      },
    });
  };
  const preStart = { kind: 'live', by: 'pre-start', code: EVIDENCE.preStart };

  it('is at its path since before the JVM started only when its ctime, its link, its path and the class path say so', () => {
    expect(sight()).toEqual(preStart);
    expect(sight({ ctimeMs: CUT })).toEqual(ask('once', true));
    // A symbolic link pointed at an old file after the start.
    expect(sight({ linkCtimeMs: CUT })).toEqual(ask('once', true));
    // A folder or link on its path that came to it after the start (a swap).
    expect(sight({ placed: false })).toEqual(ask('once', true));
    expect(sight({ start: undefined })).toEqual(ask('once', true));
    // A folder the JVM does not load from, or an earlier class path entry holding the class (or that cannot be read).
    expect(sight({ onClassPath: false })).toEqual(ask('once', true));
    expect(sight({ earlier: 'held' })).toEqual(ask('once', true));
    expect(sight({ earlier: 'unknown' })).toEqual(ask('once', true));
  });

  it('unchanged since the start where the JVM neither loads nor watches classes is outside the app: nothing to ask, and never live', () => {
    const outside = { kind: 'outside', code: EVIDENCE.elsewhere };
    expect(sight({ onClassPath: false, elsewhere: true })).toEqual(outside);
    expect(sight({ onClassPath: false, elsewhere: true, ctimeMs: CUT })).toEqual(ask('once', true));
    // Where it is makes no claim of it, so a folder moved there since does not matter.
    expect(sight({ onClassPath: false, elsewhere: true, placed: false })).toEqual(outside);
    // Recorded so: its bytes unchanged stay outside; new bytes there are asked.
    expect(decide({ recorded: EVIDENCE.elsewhere, sameBytes: true })).toEqual(outside);
    expect(decide({ recorded: EVIDENCE.elsewhere })).toEqual(ask('poll', false));
  });

  it('after a restart the same facts are kind restart, standing on pre-start', () => {
    const after = verdictOf({
      ctimeMs: CUT - 1,
      byBuild: false,
      newInSession: false,
      restarted: true,
      sight: {
        start: START,
        linkCtimeMs: CUT - 1,
        placed: true,
        onClassPath: true,
        earlier: 'none',
        elsewhere: false,
        classPathKnown: true,
      },
    });
    expect(after).toEqual({ kind: 'live', by: 'restart', of: 'pre-start', code: EVIDENCE.preStart });
  });
});

describe('wholeSinceStart', () => {
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
    expect([...Array(16).keys()].filter(isEvidence)).toEqual([0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12]);
    expect([9, 10, 11, 12].some(isLive)).toBe(false);
  });
});

describe('reading an answer', () => {
  const QUIET = 10_000_000;
  const NOTICE = 3000;
  const old = QUIET - NOTICE;
  const watch = { shownWatched: true, refused: 0, quietAtMs: QUIET, noticeMs: NOTICE };
  const bounded = { counted: 0, uncounted: 0 };
  // The JVM's start, after the file's ctime: its bytes are there since before it.
  const START = { startMs: QUIET, errorMs: 20 };
  const read = (
    answer: Partial<AnswerFacts> & Pick<AnswerFacts, 'status'>,
    asked: Partial<AnswerFacts['asked']> = {},
    ctimeMs = old,
    bytesSinceMs?: number,
  ) =>
    verdictOf({
      ctimeMs,
      bytesSinceMs,
      byBuild: false,
      newInSession: false,
      answer: { unmoved: true, watch, receipts: bounded, start: START, ...answer, asked: { once: true, liveUnknown: true, ...asked } },
    });
  const unknown = { liveUnknown: true };

  it('applied is kind receipt, unless the file moved since it was read', () => {
    expect(read({ status: 'applied' })).toEqual({ kind: 'live', by: 'receipt', code: EVIDENCE.proven });
    expect(read({ status: 'applied', unmoved: false })).toEqual({ kind: 'not-live', why: { kind: 'rewritten' } });
  });

  it('not_observed is kind watcher-saw only when every precondition holds; the first that fails is why', () => {
    expect(read({ status: 'not-observed' }, unknown)).toEqual({ kind: 'live', by: 'watcher-saw', code: EVIDENCE.unchanged });
    const why = (verdict: ReturnType<typeof read>) =>
      verdict.kind === 'not-live' ? verdict.why.kind : verdict.kind === 'live' ? verdict.by : 'ask';
    expect(why(read({ status: 'not-observed' }, { liveUnknown: false }))).toBe('not-attempted');
    expect(why(read({ status: 'not-observed', watch: { ...watch, shownWatched: false } }, unknown))).toBe('not-shown-watched');
    expect(why(read({ status: 'not-observed', watch: { ...watch, refused: 1 } }, unknown))).toBe('refused-registrations');
    expect(why(read({ status: 'not-observed', watch: { ...watch, quietAtMs: undefined } }, unknown))).toBe('busy-before-build');
    expect(why(read({ status: 'not-observed' }, unknown, old + 1))).toBe('too-recent');
    expect(why(read({ status: 'not-observed', receipts: { counted: 511, uncounted: 0 } }, unknown))).toBe('watcher-saw');
    expect(why(read({ status: 'not-observed', receipts: { counted: 512, uncounted: 0 } }, unknown))).toBe('receipts-unbounded');
    expect(why(read({ status: 'not-observed', receipts: { counted: 500, uncounted: 12 } }, unknown))).toBe('receipts-unbounded');
    expect(why(read({ status: 'not-observed', receipts: { counted: undefined, uncounted: 0 } }, unknown))).toBe('receipts-unbounded');
    // The watcher's bytes are the file's: the JVM runs them only where it loads that file.
    const loads = (onClassPath: boolean, earlier: 'none' | 'held' | 'unknown', classPathKnown = true) => ({
      onClassPath,
      earlier,
      classPathKnown,
    });
    expect(why(read({ status: 'not-observed', loadsFrom: loads(true, 'none') }, unknown))).toBe('watcher-saw');
    expect(why(read({ status: 'not-observed', loadsFrom: loads(true, 'held') }, unknown))).toBe('loads-elsewhere');
    // Where the start is known: loaded from there then (no earlier entry holding it then or since, the folder in place).
    expect(why(read({ status: 'not-observed', loadsFrom: loads(true, 'none'), loadedHere: true }, unknown))).toBe('watcher-saw');
    expect(why(read({ status: 'not-observed', loadsFrom: loads(true, 'none'), loadedHere: false }, unknown))).toBe('loads-elsewhere');
    expect(why(read({ status: 'not-observed', loadsFrom: loads(true, 'unknown') }, unknown))).toBe('loads-elsewhere');
    expect(why(read({ status: 'not-observed', loadsFrom: loads(false, 'unknown') }, unknown))).toBe('loads-elsewhere');
    // Whether it loads this file is open only where an earlier entry cannot be told; else it does not.
    const detail = (verdict: ReturnType<typeof read>) => (verdict.kind === 'not-live' ? verdict.why : undefined);
    expect(detail(read({ status: 'not-observed', loadsFrom: loads(true, 'unknown') }, unknown))).toEqual({
      kind: 'loads-elsewhere',
      unknown: true,
    });
    expect(detail(read({ status: 'not-observed', loadsFrom: loads(true, 'held') }, unknown))).toEqual({ kind: 'loads-elsewhere' });
    expect(detail(read({ status: 'not-observed', loadsFrom: loads(false, 'unknown') }, unknown))).toEqual({ kind: 'loads-elsewhere' });
    expect(detail(read({ status: 'not-observed', loadsFrom: loads(true, 'unknown'), loadedHere: false }, unknown))).toEqual({
      kind: 'loads-elsewhere',
    });
    // No class path read (a container, another user): the folder shown watched is all there is.
    expect(why(read({ status: 'not-observed', loadsFrom: loads(false, 'unknown', false) }, unknown))).toBe('watcher-saw');
    // Not final: never live.
    expect(why(read({ status: 'still-not-observed' }, unknown))).toBe('receipts-unbounded');
  });

  it('not_observed is watcher-saw only for bytes at the file since before the JVM started: the watcher arming after it took what it found as its baseline, and a copy that kept an older mtime is never reloaded, whatever stamp a touch or the same bytes written again give the file since', () => {
    const why = (verdict: ReturnType<typeof read>) =>
      verdict.kind === 'not-live' ? verdict.why.kind : verdict.kind === 'live' ? verdict.by : 'ask';
    const later = { startMs: old - 5000, errorMs: 20 };
    expect(why(read({ status: 'not-observed' }, unknown, old))).toBe('watcher-saw');
    // Changed since the start, with any mtime now: `cp -p` (an older one), or a touch or a plain write since.
    expect(why(read({ status: 'not-observed', start: later }, unknown, old))).toBe('old-mtime');
    expect(why(read({ status: 'not-observed', start: { startMs: old + 15, errorMs: 20 } }, unknown, old))).toBe('old-mtime');
    // Written again identically by the build: the bytes are there since the stamp they had before it.
    expect(why(read({ status: 'not-observed', start: later }, unknown, old, later.startMs - 60_000))).toBe('watcher-saw');
    expect(why(read({ status: 'not-observed', start: later }, unknown, old, later.startMs))).toBe('old-mtime');
    expect(why(read({ status: 'not-observed' }, unknown, old, old + 1))).toBe('watcher-saw');
    // The start not known: nothing is older than it.
    expect(why(read({ status: 'not-observed', start: undefined }, unknown, old))).toBe('old-mtime');
  });

  it('a rewritten file keeps its evidence on applied (kind receipt) or not_observed (while the receipts are bounded), never on a bad answer', () => {
    for (const keeps of LIVE.filter((code) => code !== EVIDENCE.added)) {
      const asked = { liveUnknown: false, keeps };
      expect(read({ status: 'applied' }, asked)).toEqual({ kind: 'live', by: 'receipt', code: EVIDENCE.proven });
      expect(read({ status: 'not-observed' }, asked)).toEqual({ kind: 'live', by: 'recorded', of: KIND[keeps], code: keeps });
      // No attempt seen, but one may have been evicted: nothing records what the app has any more.
      expect(read({ status: 'not-observed', receipts: { counted: 512, uncounted: 0 } }, asked)).toMatchObject({
        kind: 'not-live',
        code: EVIDENCE.unknown,
      });
      expect(read({ status: 'other' }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' }, code: EVIDENCE.unproven });
      expect(read({ status: 'unverified' }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' }, code: EVIDENCE.unproven });
      // No answer: left to be asked again.
      expect(read({ status: 'no-answer' }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' } });
    }
  });

  it('a class new to the JVM stays new (kind not-loaded) on unverified or no attempt only while DIAGNOSE, of this file, says the JVM has not loaded it', () => {
    const asked = { liveUnknown: false, keeps: EVIDENCE.added };
    const shown = {
      diagnose: { thisFile: true, loaded: false },
      loadsFrom: { onClassPath: true, earlier: 'none' as const, classPathKnown: true },
    };
    const notLoaded = { kind: 'live', by: 'not-loaded', code: EVIDENCE.added };
    expect(read({ status: 'applied' }, asked)).toEqual({ kind: 'live', by: 'receipt', code: EVIDENCE.proven });
    for (const status of ['unverified', 'not-observed', 'still-not-observed', 'not-watched'] as const) {
      expect(read({ status, ...shown, receipts: { counted: 9999, uncounted: 0 } }, asked)).toEqual(notLoaded);
      const because = (answer: Partial<AnswerFacts>) => {
        const verdict = read({ status, ...shown, ...answer }, asked);
        return verdict.kind === 'not-live' && verdict.why.kind === 'new-not-shown' ? verdict.why.because : verdict.kind;
      };
      expect(because({ diagnose: { thisFile: true, loaded: true } })).toBe('loaded');
      expect(because({ diagnose: { thisFile: true } })).toBe('no-word');
      expect(because({ diagnose: undefined })).toBe('no-word');
      expect(because({ diagnose: { thisFile: false, loaded: false } })).toBe('other-file');
      expect(because({ loadsFrom: { onClassPath: false, earlier: 'none', classPathKnown: true } })).toBe('class-path');
      expect(because({ loadsFrom: { onClassPath: true, earlier: 'held', classPathKnown: true } })).toBe('class-path');
    }
    // `failed` (a refused bean registration) or other bytes attempted; no answer at all.
    expect(read({ status: 'other', ...shown }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' }, code: EVIDENCE.unproven });
    expect(read({ status: 'no-answer', ...shown }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' } });
  });

  it('another class file of its binary name moved: asked, and no answer in that run keeps it (the answer may come before the reload from that file); a mismatch takes its evidence away, any other answer leaves it to be asked again', () => {
    for (const keeps of [EVIDENCE.proven, EVIDENCE.preStart, EVIDENCE.unchanged] as const) {
      expect(decide({ recorded: keeps, sameBytes: true, sameStamp: true, othersMoved: true })).toEqual(recheck(keeps));
      const asked = { liveUnknown: false, keeps, othersMoved: true };
      const moved = { kind: 'not-live', why: { kind: 'other-copy-moved' } };
      expect(read({ status: 'applied' }, asked)).toEqual(moved);
      expect(read({ status: 'not-observed' }, asked)).toEqual(moved);
      expect(read({ status: 'other' }, asked)).toEqual({ kind: 'not-live', why: { kind: 'answer' }, code: EVIDENCE.unproven });
    }
    // Nothing records what the app has, and no attempt: not the watcher's identical bytes while a copy moved.
    expect(read({ status: 'not-observed' }, { liveUnknown: true, othersMoved: true })).toEqual({
      kind: 'not-live',
      why: { kind: 'other-copy-moved' },
    });
    expect(read({ status: 'applied' }, { liveUnknown: true, othersMoved: true })).toEqual({
      kind: 'not-live',
      why: { kind: 'other-copy-moved' },
    });
    // A polled class is this build's own change: its receipt comes after the capture.
    expect(read({ status: 'applied' }, { once: false })).toEqual({ kind: 'live', by: 'receipt', code: EVIDENCE.proven });
  });

  it("a polled class (this build's capture) is live only by its receipt", () => {
    expect(read({ status: 'not-observed' }, { once: false })).toEqual({ kind: 'not-live', why: { kind: 'answer' } });
    expect(read({ status: 'applied' }, { once: false })).toEqual({ kind: 'live', by: 'receipt', code: EVIDENCE.proven });
  });
});
