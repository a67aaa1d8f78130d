/**
 * What a VERIFY round proves, by one rule for a build and for `verify`: every class applied (or,
 * for a build's single asks, judged unchanged by classes/evidence.ts) is proof; anything else
 * names why not. What a build could not read is its own, passed in.
 */
import { signalOf } from '../outcome/exit.js';
import type { AgentAfterLoss, ClassVerdict, VerdictWhy, VerifyReport } from '../outcome/facts.js';
import type { Outcome, Shortfall } from '../outcome/outcome.js';

/** How the round is judged. */
export interface VerdictScope {
  /** `verify` (class files given) rather than a build's changed classes: its `unchanged` verdicts are class files unchanged since before the app's JVM started. */
  files: boolean;
  signal?: AbortSignal | undefined;
  /** What a reconnect found after the connection was lost during VERIFY (a build asks; `verify` does not). */
  found?: AgentAfterLoss;
  /** Class files that could not be read: their change is unknown, so an all-applied round is not proof. */
  unreadable?: number;
  /** Folders of class files that could not be listed: likewise. */
  unreadableDirs?: number;
  /** How many of the verdicts answer a single ask (there before this build), for the words. */
  checked?: number;
  /** Changed class files not asked about because VERIFY does not accept their names: the words name them. */
  skipped?: number;
  /** Of `skipped`, those that are not `package-info`/`module-info` (which never reload): they leave the round unproven. */
  unprovable?: number;
  /**
   * For `not-watched` verdicts: the class output directories the agent does not watch, the
   * `watchDirs=` value that adds them (when all it watches is known), and the `excludePatterns`
   * that skip the other classes.
   */
  unwatched?: { dirs: string[]; watchDirs?: string; excludedBy?: string[]; unseen?: string[] };
}

/** The outcome of `report`: `ok` (all applied), `interrupted`, or `verify-incomplete` with why. */
export function verdictOutcome(report: VerifyReport, scope: VerdictScope): Outcome {
  const verdicts = report.verdicts;
  const applied = verdicts.filter((v) => v.status === 'applied').length;
  const unchanged = verdicts.filter((v) => v.status === 'unchanged').length;
  // Live by the record of an earlier run's evidence other than the file's age (the record of a pre-start is one).
  const recorded = verdicts.filter(
    (v) => v.status === 'unchanged' && v.evidence?.by === 'recorded' && v.evidence.of !== 'pre-start',
  ).length;
  const newToJvm = verdicts.filter((v) => v.status === 'unchanged' && v.evidence?.by === 'not-loaded').length;
  const total = verdicts.length;
  if (verdicts.some((v) => v.status === 'interrupted')) return { reason: 'interrupted', signal: signalOf(scope.signal), at: 'verify' };
  const counts = {
    applied,
    total,
    ...(scope.files ? { files: true } : {}),
    ...(unchanged > 0 ? { unchanged } : {}),
    ...((scope.checked ?? 0) > 0 ? { checked: scope.checked } : {}),
  };
  if (applied + unchanged === total) {
    const unreadable = scope.unreadable ?? 0;
    const folders = scope.unreadableDirs ?? 0;
    if (unreadable + folders > 0) return { reason: 'verify-incomplete', ...counts, shortfall: { kind: 'unreadable', unreadable, folders } };
    if ((scope.unprovable ?? 0) > 0) {
      return { reason: 'verify-incomplete', ...counts, shortfall: { kind: 'not-verifiable', classes: scope.unprovable! } };
    }
    return {
      reason: 'ok',
      proof: {
        kind: 'proven',
        applied,
        ...(unchanged > 0 ? { unchanged } : {}),
        ...(recorded > 0 ? { recorded } : {}),
        ...(newToJvm > 0 ? { newToJvm } : {}),
        ...(scope.files ? { files: true } : {}),
        ...(scope.skipped ? { skipped: scope.skipped } : {}),
      },
    };
  }
  const restart = verdicts.filter((v) => v.status === 'restart-required').length;
  const notWatched = verdicts.filter((v) => v.status === 'not-watched').length;
  const paused = verdicts.filter((v) => v.status === 'paused').length;
  const shortfall =
    report.sessionChangedTo !== undefined
      ? ({ kind: 'restarted' } as const)
      : scope.found !== undefined
        ? ({ kind: 'connection-lost', found: scope.found } as const)
        : report.capacityLimited
          ? ({ kind: 'capacity', capacity: report.capacity } as const)
          : paused > 0
            ? ({ kind: 'paused', classes: paused } as const)
            : notWatched > 0 && scope.unwatched !== undefined
              ? ({ kind: 'not-watched', classes: notWatched, ...scope.unwatched } as const)
              : restart > 0
                ? ({ kind: 'restart-required', classes: restart } as const)
                : notProven(verdicts);
  return { reason: 'verify-incomplete', ...counts, shortfall };
}

/** The `not-proven` shortfall of `verdicts`, counting those written after the app started with nothing recorded before (`old-mtime`). */
function notProven(verdicts: readonly ClassVerdict[]): Shortfall {
  const timedOut = verdicts.some((v) => v.status === 'timeout');
  const afterStart = verdicts.filter((v) => rootWhy(v.why).kind === 'old-mtime').length;
  return { kind: 'not-proven', timedOut, ...(afterStart > 0 ? { writtenAfterStart: afterStart } : {}) };
}

/** The why beneath what PENDING or DIAGNOSE added to it, with a not-live one's own kind. */
function rootWhy(why: VerdictWhy): { kind: string } {
  if (why.kind === 'pending' || why.kind === 'diagnosed') return rootWhy(why.of);
  return why.kind === 'not-live' ? why.why : why;
}

/** The outcome of a build whose `total` classes an agent that compiles by itself does not load (75). */
export function autoCompiled(from: 'options' | 'receipts', total: number): Outcome {
  return { reason: 'verify-incomplete', applied: 0, total, shortfall: { kind: 'auto-compile', from } };
}

/**
 * True when every verdict is a final `mismatch` (a receipt naming bytes other than the build's
 * and than earlier ones): what an agent with `autoCompile=true` answers, its receipts carrying its
 * own compiled bytes. Two or more, so that one outside compile is not taken for it.
 */
export function otherBytesEverywhere(verdicts: readonly ClassVerdict[]): boolean {
  return verdicts.length >= 2 && verdicts.every((v) => v.status === 'mismatch');
}
