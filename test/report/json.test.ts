/** report/json.ts: a build's `result` line says why the agent kept the hold after ok (`holdKept`), and only then; the schema takes it. */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome/outcome.js';
import { buildRunResult } from '../../src/outcome/result.js';
import { resultToJson } from '../../src/report/json.js';
import { runResultLineSchema } from '../../src/report/schema.js';

const lineOf = (outcome: Outcome) => resultToJson(buildRunResult(outcome, {}, 12));
const kept = (cause: Extract<Outcome, { reason: 'verify-incomplete' }>['shortfall']): Outcome => ({
  reason: 'verify-incomplete',
  applied: 0,
  total: 1,
  shortfall: cause,
});

describe('holdKept on the result line', () => {
  it('names the file the capture could not read, or the scan that did not finish', () => {
    const unreadable = lineOf(kept({ kind: 'hold-kept', cause: { kind: 'unreadable-file', file: '/p/A$1.class' }, owner: 'o1' }));
    expect(unreadable.holdKept).toEqual({ cause: 'unreadable-file', file: '/p/A$1.class' });
    const scan = lineOf(kept({ kind: 'hold-kept', cause: { kind: 'scan-unfinished' }, owner: 'o1' }));
    expect(scan.holdKept).toEqual({ cause: 'scan-unfinished' });
    for (const line of [unreadable, scan]) expect(runResultLineSchema.parse(line)).toEqual(line);
  });

  it('is absent from any other result, a hold left unsent included', () => {
    const left = lineOf(kept({ kind: 'watcher-starting', owner: 'o1', waitedMs: 800, option: '--wait-for-agent' }));
    expect('holdKept' in left).toBe(false);
    expect('holdKept' in lineOf({ reason: 'ok', proof: { kind: 'proven', applied: 1 } })).toBe(false);
  });
});
