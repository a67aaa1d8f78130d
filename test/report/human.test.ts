/** report/human.ts: the closing report's last line says plainly what is proven, with the next step for a refusal. */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome/outcome.js';
import { buildRunResult } from '../../src/outcome/result.js';
import { HumanReporter } from '../../src/report/human.js';

function report(outcome: Outcome, extra = {}): string {
  let out = '';
  const human = new HumanReporter({ write: (t) => (out += t), live: false, quiet: false, verbose: false });
  human.result(buildRunResult(outcome, extra, 5));
  return out;
}

describe('the closing report', () => {
  it('proven live', () => {
    expect(report({ reason: 'ok', proof: { kind: 'proven', applied: 2 } })).toBe(
      'reclazz-build: ✔ proven live: all 2 changed class(es) proven live (VERIFY applied, SHA-256 matched)\n',
    );
  });

  it('a refusal: not run, then next:', () => {
    expect(report({ reason: 'hold-busy', waitedMs: 10 })).toBe(
      "reclazz-build: ✘ not run: another owner still holds the agent's build hold after 10 ms; the build did not run\n" +
        'reclazz-build: next: let that build (IDE or terminal) finish, raise --wait <ms>, or restart the app if its owner is gone\n',
    );
  });

  it('ok but not proven (--no-verify) is marked so', () => {
    expect(report({ reason: 'ok', proof: { kind: 'not-verified', changed: 1 } })).toMatch(/^reclazz-build: • not proven live: /);
  });

  it('every verdict below the limit is listed by name', () => {
    const verdicts = [
      {
        className: 'com.acme.A',
        path: '/a',
        sha256: 'a'.repeat(64),
        status: 'mismatch' as const,
        why: { kind: 'receipt' as const, status: 'mismatch' as const },
        agentDetail: 'other bytes',
      },
    ];
    const out = report(
      { reason: 'verify-incomplete', applied: 0, total: 1, shortfall: { kind: 'not-proven', timedOut: false } },
      { verdicts },
    );
    expect(out).toContain('  mismatch         com.acme.A  other bytes\n');
    expect(out).toContain('✘ not proven live: build ok, but only 0 of 1 changed class(es) are proven live: 1 not proven');
  });
});

describe('the class files line', () => {
  const line = (checks: number): string => {
    let out = '';
    const human = new HumanReporter({ write: (t) => (out += t), live: false, quiet: false, verbose: false });
    human.event({ type: 'changes', changed: 1, checks, added: 0, removed: 0, notVerifiable: 0, total: 5 });
    return out;
  };

  it('says what the class files asked once are, and why, one or several; nothing of them when there are none', () => {
    expect(line(3)).toBe(
      'reclazz-build: class files: 1 changed, 0 added, 0 removed (of 5); 3 others asked once whether the app runs their bytes: rewritten since proven live, or never proven\n',
    );
    expect(line(1)).toContain('; 1 other asked once whether the app runs its bytes: rewritten since proven live, or never proven\n');
    expect(line(0)).toBe('reclazz-build: class files: 1 changed, 0 added, 0 removed (of 5)\n');
  });
});
