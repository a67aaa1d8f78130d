/**
 * The words of a restart for a change that needed one (session/group.ts): what the run says
 * before it restarts the app or waits for it, what it waits for, and how the restart ended.
 */
import type { Proof, RestartFailure, Shortfall } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';
import { appStartWhy } from './app-start-words.js';

/** What a run waits for while the app restarts (`waiting` events' `what`). */
export const WAITING_FOR_RESTART = 'the app to come back with a new agent session';

/**
 * A class file's detail after a restart, by its evidence in the new JVM (classes/evidence.ts, kind
 * `restart`) or what the disk shows of it (classes/scan.ts `sightSince`).
 */
export const RESTART_SIGHT = {
  gone: 'the class file is gone since the build: not proven in the new JVM',
  'other-bytes': 'the class file has other bytes than the build wrote: not proven in the new JVM',
  'pre-start': 'at its path since before the new JVM started: the bytes it loads when it loads the class (no receipt says it has)',
  receipt: 'VERIFY applied in the new agent session: the bytes it loaded',
} as const;

/** The line before the restart: which classes need it, and what the run does about it. */
export function restartNeededText(classes: readonly string[], command: string | null, timeoutMs: number): string {
  const names = classes.slice(0, 5).join(', ') + (classes.length > 5 ? ` and ${classes.length - 5} more` : '');
  const what = `${classes.length} class(es) need an app restart (${names}): the agent cannot apply their change in this JVM`;
  return command === null
    ? `${what}; restart the app now (from the IDE or a terminal): waiting up to ${seconds(timeoutMs)} for it to come back`
    : `${what}; restarting the app with: ${command}`;
}

/** The line after the restart command ended. */
export function restartCommandText(exitCode: number, durationMs: number): string {
  const took = durationMs < 1000 ? `${Math.round(durationMs)} ms` : `${(durationMs / 1000).toFixed(1)} s`;
  return `restart command ${exitCode === 0 ? 'done' : `FAILED (exit status ${exitCode})`} in ${took}`;
}

/** The words of a change proven live after a restart. */
export function restartedProofWords(proof: Extract<Proof, { kind: 'restarted' }>): Words {
  const verified = proof.classes - proof.preStart;
  const how = [
    ...(proof.preStart > 0 ? [`${proof.preStart} at their path since before the new JVM started`] : []),
    ...(verified > 0 ? [`${verified} VERIFY applied`] : []),
  ].join(', ');
  return {
    message: `all ${proof.classes} class(es) of the change proven live after a restart (${how}); the app came back at ${clock(proof.at)} in agent session ${proof.sessionId}`,
  };
}

/** The words of a restart that did not prove the change. */
export function restartFailedWords(shortfall: Extract<Shortfall, { kind: 'restart' }>): Words {
  const needed = `build ok, but ${shortfall.classes} class(es) needed an app restart`;
  const failure: RestartFailure = shortfall.failure;
  switch (failure.kind) {
    case 'command-failed':
      return {
        message: `${needed}, and the restart command failed (exit status ${failure.exitCode}): not proven live`,
        hint: `check the restart command (${failure.command}) and its output above, restart the app yourself, and run again`,
      };
    case 'not-back':
      return {
        message: `${needed}, and the app did not come back with a new agent session within ${seconds(failure.waitedMs)}: not proven live`,
        hint:
          failure.command === undefined
            ? 'restart the app (from the IDE or a terminal) while the run waits, or raise --restart-timeout <ms>'
            : 'check that the restart command restarts the app with the agent, or raise --restart-timeout <ms> for an app that starts slowly',
      };
    case 'not-provable':
      return {
        message: `${needed}; it restarted (agent session ${failure.sessionId}), not provable: ${appStartWhy(failure.why)}, so no class file can be shown to be older than the new JVM`,
        hint: "the app restarted and loads its classes from disk; to prove it, run reclazz-build where the app's process is visible (same host, not in a container)",
      };
    case 'not-proven':
      return {
        message: `${needed}; it restarted (agent session ${failure.sessionId}), but ${failure.classes} class file(s) are still not proven live in the new JVM (listed above)`,
        hint: 'a class file written after the app started again is proven only by VERIFY: rebuild with reclazz-build, or restart the app once more',
      };
    case 'not-again':
      return {
        message: `${needed}, which an earlier restart in this watch could not prove: not restarted again for them`,
        hint: 'see why the earlier restart could not prove them; change the classes again, or restart the app yourself',
      };
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** `HH:MM:SS` of an ISO time (UTC, as the agent's timestamps). */
function clock(iso: string): string {
  return `${iso.slice(11, 19)} UTC`;
}
