/**
 * What a VERIFY round proves, by one rule for a build and for `verify`: every class applied is
 * proof; anything else names why not. (A build's "unreadable class files" are its own: see run.ts.)
 */
import { signalOf } from '../outcome/exit.js';
import type { AgentAfterLoss, VerifyReport } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';

/** How the round is judged. */
export interface VerdictScope {
  /** `verify` (class files given) rather than a build's changed classes. */
  files: boolean;
  signal?: AbortSignal;
  /** What a reconnect found after the connection was lost during VERIFY (a build asks; `verify` does not). */
  found?: AgentAfterLoss;
  /** Class files that could not be read: their change is unknown, so an all-applied round is not proof. */
  unreadable?: number;
  /** Changed class files not asked about because VERIFY does not accept their names: the words name them. */
  skipped?: number;
}

/** The outcome of `report`: `ok` (all applied), `interrupted`, or `verify-incomplete` with why. */
export function verdictOutcome(report: VerifyReport, scope: VerdictScope): Outcome {
  const verdicts = report.verdicts;
  const applied = verdicts.filter((v) => v.status === 'applied').length;
  const total = verdicts.length;
  if (verdicts.some((v) => v.status === 'interrupted')) return { reason: 'interrupted', signal: signalOf(scope.signal), at: 'verify' };
  const files = scope.files ? { files: true } : {};
  if (applied === total) {
    if ((scope.unreadable ?? 0) > 0)
      return { reason: 'verify-incomplete', applied, total, shortfall: { kind: 'unreadable', unreadable: scope.unreadable! } };
    return { reason: 'ok', proof: { kind: 'proven', applied, ...files, ...(scope.skipped ? { skipped: scope.skipped } : {}) } };
  }
  const shortfall =
    report.sessionChangedTo !== undefined
      ? ({ kind: 'restarted' } as const)
      : scope.found !== undefined
        ? ({ kind: 'connection-lost', found: scope.found } as const)
        : report.capacityLimited
          ? ({ kind: 'capacity', capacity: report.capacity } as const)
          : ({ kind: 'not-proven', timedOut: verdicts.some((v) => v.status === 'timeout') } as const);
  return { reason: 'verify-incomplete', applied, total, shortfall, ...files };
}
