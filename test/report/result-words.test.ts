/** A result's words made from its facts: its outcome's, and with several agents whose they are. */
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/outcome/outcome.js';
import { buildRunResult, type AgentRunResult } from '../../src/outcome/result.js';
import { describeOutcome, describeResult } from '../../src/report/words.js';

const busy: Outcome = { reason: 'hold-busy', waitedMs: 30000 };
const proven: Outcome = { reason: 'ok', proof: { kind: 'proven', applied: 1 } };
const part = (outcome: Outcome, agentSource: string): AgentRunResult => ({ ...buildRunResult(outcome, {}, 5), agentSource });

describe('describeResult', () => {
  it("a result alone has its outcome's words", () => {
    expect(describeResult(buildRunResult(busy, {}, 5))).toEqual(describeOutcome(busy));
  });

  it('a refusal among several agents names the one that refused and every one found', () => {
    const words = describeResult({
      ...buildRunResult(busy, {}, 5),
      among: { source: '/b/agent.port', sources: ['/a/agent.port', '/b/agent.port'] },
    });
    expect(words.message).toBe(
      `${describeOutcome(busy).message}\n(the agent of /b/agent.port; this run found 2 agents:\n  /a/agent.port\n  /b/agent.port)`,
    );
    expect(words.hint).toMatch(/; or build against some of them only: --port-file <path> for each$/);
  });

  it("a watch's early end about one of its apps names that app", () => {
    expect(describeResult({ ...buildRunResult(busy, {}, 5), ofAgent: '/b/agent.port' }).message).toBe(
      `the agent of /b/agent.port: ${describeOutcome(busy).message}`,
    );
  });

  it('several agents: every one proven, or how many and the words of the first that decides', () => {
    const all = [part(proven, '/a/agent.port'), part(proven, '/b/agent.port')];
    expect(describeResult({ ...buildRunResult(proven, {}, 5), agents: all }).message).toBe(
      'every one of the 2 agents proved its classes live (/a/agent.port, /b/agent.port)',
    );
    const one = [part(proven, '/a/agent.port'), part(busy, '/b/agent.port')];
    const words = describeResult({ ...buildRunResult(busy, {}, 5), agents: one });
    expect(words.message).toBe(`1 of 2 agents proved their classes live; the agent of /b/agent.port: ${describeOutcome(busy).message}`);
    expect(words.hint).toBe(describeOutcome(busy).hint);
  });
});
