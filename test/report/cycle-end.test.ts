/** A cycle's result as its end line. */
import { describe, expect, it } from 'vitest';
import { buildRunResult } from '../../src/outcome/result.js';
import type { Outcome } from '../../src/outcome/outcome.js';
import type { ClassVerdict } from '../../src/outcome/facts.js';
import { cycleEndLine, endLineOf } from '../../src/report/watch-lines.js';

const at = new Date(2026, 11, 1, 12, 4, 31);
const verdict = (className: string, status: ClassVerdict['status']) => ({ className, status }) as ClassVerdict;
function line(outcome: Outcome, facts: Parameters<typeof buildRunResult>[1], heldBefore = false): string {
  return cycleEndLine(endLineOf(buildRunResult(outcome, facts, 1900), { at, heldBefore }));
}
const build = { exitCode: 0, durationMs: 1700 };
const verify = { capacityLimited: false, capacity: 512, requests: 2, lostReplies: 0, elapsedMs: 40 };

describe('endLineOf', () => {
  it('all proven: the classes live and the times; after a held build, the hold recovered', () => {
    const facts = { build, verify, verdicts: [verdict('a.A', 'applied'), verdict('a.B', 'applied')] };
    expect(line({ reason: 'ok', proof: { kind: 'proven', applied: 2 } }, facts)).toBe(
      '12:04:31 ✔ 2 classes live in 1.9 s (build 1.7 s, verify 40 ms)',
    );
    expect(line({ reason: 'ok', proof: { kind: 'proven', applied: 2 } }, facts, true)).toMatch(/; hold recovered\)$/);
  });

  it('not all proven: the live and the not proven, and the exit status', () => {
    const facts = { build, verify, verdicts: [verdict('a.A', 'applied'), verdict('a.B', 'failed')] };
    const outcome: Outcome = { reason: 'verify-incomplete', applied: 1, total: 2, shortfall: { kind: 'not-proven', timedOut: false } };
    expect(line(outcome, facts)).toBe('12:04:31 ⚠ 1 class live, 1 not proven in 1.9 s (build 1.7 s, verify 40 ms; exit 75)');
  });

  it('a failed build says whether the agent keeps holding', () => {
    expect(line({ reason: 'build-failed', status: 1, owner: 'o' }, { build: { exitCode: 1, durationMs: 900 }, hold: 'held' })).toBe(
      '12:04:31 ✖ build failed (exit 1): the agent keeps holding; fix and save',
    );
  });

  it('anything else is one sentence of what happened with the exit status', () => {
    expect(line({ reason: 'hold-busy', waitedMs: 30000 }, {})).toBe(
      "12:04:31 ✖ another owner still holds the agent's build hold after 30000 ms; the build did not run (exit 69)",
    );
    expect(line({ reason: 'interrupted', signal: 'SIGTERM', at: 'build' }, {})).toBe('12:04:31 ✖ interrupted by SIGTERM (exit 143)');
  });
});
