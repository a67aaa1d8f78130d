/** How a cycle's result reads as its end line (lines.ts): one home for the mapping. */
import { LIVE_VERDICTS } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import type { EndLine } from './lines.js';

/**
 * The end line of `result`.
 * @param holdRecovered the cycle before ended with the build held for us (a failed build).
 */
export function endLineOf(result: RunResult, at: Date, holdRecovered: boolean): EndLine {
  const times = {
    totalMs: result.durationMs,
    buildMs: result.build?.durationMs ?? 0,
    verifyMs: result.verify?.elapsedMs ?? 0,
  };
  const recovered = holdRecovered && result.hold === 'none' ? { holdRecovered: true } : {};
  const live = result.verdicts.filter((v) => LIVE_VERDICTS.has(v.status)).length + (result.changes?.added.length ?? 0);
  const outcome = result.outcome;
  switch (outcome.reason) {
    case 'ok':
      if (result.provenLive)
        return { kind: 'live', at, classes: live, ...times, ...recovered, ...(result.restart === undefined ? {} : { restarted: true }) };
      return {
        kind: 'not-proven',
        at,
        live,
        notProven: result.changes?.changed.length ?? 0,
        exitCode: result.exitCode,
        ...times,
        ...recovered,
      };
    case 'verify-incomplete': {
      const notProven = result.verdicts.length - result.verdicts.filter((v) => LIVE_VERDICTS.has(v.status)).length;
      if (notProven > 0) return { kind: 'not-proven', at, live, notProven, exitCode: result.exitCode, ...times, ...recovered };
      return { kind: 'failed', at, summary: sentence(result.message), exitCode: result.exitCode };
    }
    case 'build-failed':
      return {
        kind: 'build-failed',
        at,
        exitCode: outcome.status,
        ...(result.build?.signal === undefined ? {} : { signal: result.build.signal }),
        holding: result.hold === 'held',
      };
    case 'interrupted':
      return { kind: 'interrupted', at, signal: outcome.signal, exitCode: result.exitCode };
    default:
      return { kind: 'failed', at, summary: sentence(result.message), exitCode: result.exitCode };
  }
}

/** `message` without its final period. */
function sentence(message: string): string {
  return message.replace(/\.\s*$/, '');
}
