/**
 * report/words.ts: every outcome has a message, and every refusal (a non-zero exit that is not
 * an interrupt or the build's own failure) says what to do next.
 */
import { describe, expect, it } from 'vitest';
import { exitStatus, REASON_EXIT } from '../../src/outcome/exit.js';
import type { Reason } from '../../src/outcome/outcome.js';
import { describeOutcome } from '../../src/report/words.js';
import { SAMPLE_OUTCOMES } from '../support/outcomes.js';

describe('the words of every outcome', () => {
  it('the samples cover every reason', () => {
    const covered = new Set(SAMPLE_OUTCOMES.map(([, o]) => o.reason));
    expect((Object.keys(REASON_EXIT) as Reason[]).filter((r) => !covered.has(r))).toEqual([]);
  });

  it.each(SAMPLE_OUTCOMES)('%s: a one-sentence message, and a next: hint for a refusal', (_label, outcome) => {
    const words = describeOutcome(outcome);
    expect(words.message.trim()).not.toBe('');
    expect(words.message).not.toMatch(/undefined|\[object/);
    const refusal = exitStatus(outcome) !== 0 && outcome.reason !== 'interrupted' && outcome.reason !== 'build-failed';
    if (refusal) expect(words.hint?.trim() ?? '', `${outcome.reason} needs a next: hint`).not.toBe('');
  });

  it('the advice for a missing agent is in the hint, not the message', () => {
    const words = describeOutcome({ reason: 'no-agent', cwd: '/p', depth: 4, offerNoAgent: false });
    expect(words.message).not.toMatch(/--port/);
    expect(words.hint).toMatch(/--port <n> or --port-file <path>$/);
  });

  it("the agent's receipt capacity comes from the outcome, not a literal", () => {
    const words = describeOutcome({
      reason: 'verify-incomplete',
      applied: 100,
      total: 300,
      shortfall: { kind: 'capacity', capacity: 100 },
    });
    expect(words.message).toContain('(300 > 100)');
    expect(words.hint).toContain('the last 100 reloaded classes');
  });
});
