/** A class verdict's detail made from its `why` kind, as the core once wrote it in English. */
import { describe, expect, it } from 'vitest';
import type { VerdictWhy } from '../../src/outcome/facts.js';
import { verdictWords } from '../../src/report/verdict-words.js';

const words = (why: VerdictWhy, agentDetail?: string) => verdictWords({ why, ...(agentDetail === undefined ? {} : { agentDetail }) });

describe('verdictWords', () => {
  it("a receipt's detail is the agent's own text, else what its status says", () => {
    expect(words({ kind: 'receipt', status: 'applied' }, '')).toBe('');
    expect(words({ kind: 'receipt', status: 'applied' }, 'reloaded in 3 ms')).toBe('reloaded in 3 ms');
    expect(words({ kind: 'receipt', status: 'unverified' }, '')).toBe('unverified');
    expect(words({ kind: 'receipt', status: 'not_observed' })).toBe('no receipt for this class in this agent session');
    expect(words({ kind: 'mismatch', observedSha256: 'ab'.repeat(32), source: '' }, 'older')).toBe(
      'the agent applied other bytes (abababababab…, unknown source): older',
    );
  });

  it("PENDING's entry and DIAGNOSE's words follow the detail they were added to, in the order they were added", () => {
    const pending: VerdictWhy = { kind: 'pending', entry: 'com.acme.A superclass', of: { kind: 'receipt', status: 'unverified' } };
    expect(words(pending, 'WARN: batch')).toBe(
      'WARN: batch; PENDING lists it from earlier in this agent session (history, not these bytes): "com.acme.A superclass"',
    );
    expect(words({ kind: 'diagnosed', words: ['Loaded:', 'no'], of: pending }, 'WARN: batch')).toBe(
      'WARN: batch; PENDING lists it from earlier in this agent session (history, not these bytes): "com.acme.A superclass"; DIAGNOSE: Loaded: no',
    );
    expect(words({ kind: 'diagnosed', words: ['Loaded:', 'no'], of: { kind: 'none' } })).toBe('DIAGNOSE: Loaded: no');
  });

  it('a file the JVM may not load is told apart from one it does not load', () => {
    expect(words({ kind: 'not-live', why: { kind: 'loads-elsewhere' }, rechecked: false })).toContain(
      'no reload attempt, but the JVM does not load this file',
    );
    expect(words({ kind: 'not-live', why: { kind: 'loads-elsewhere', unknown: true }, rechecked: false })).toContain(
      'no reload attempt, and the JVM may not load this file: an entry before its class output directory',
    );
  });

  it('the facts of a never-reloaded class are made visible', () => {
    expect(words({ kind: 'not-watched', dir: '/p/\u001b[31mout' })).toBe(
      'the agent does not watch /p/\\x1b[31mout: this change never reloads',
    );
  });
});
