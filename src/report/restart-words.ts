/**
 * The words of a restart for a change that needed one (session/group.ts): what the run says
 * before it restarts the app or waits for it, what it waits for, and how the restart ended; of
 * a watch's app whose agent went away (session/away.ts) and came back; and why an app's JVM start
 * is unknown, which a restarted app's verdict and a build's warning (step-words.ts) both say.
 */
import type { AppStartUnknown } from '../outcome/facts.js';
import type { Proof, RestartFailure, Shortfall } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';
import { jarRunWords } from './done-words.js';
import { visible } from './palette.js';

/** Why the app's start time is unknown, as the start of a sentence. */
export function appStartWhy(why: AppStartUnknown): string {
  switch (why.kind) {
    case 'no-pid':
      return `the agent reports no process id for the app (pid ${JSON.stringify(why.pid)})`;
    case 'not-visible':
      return `the app's process ${why.pid} is not visible here (a container or another host?)`;
    case 'elsewhere':
      return `process ${why.pid} here runs in ${why.cwd ?? 'a folder that cannot be read'}, not in the agent's working directory ${why.workingDirectory} (a container or another host?)`;
  }
}

/**
 * What a run waits for while the app restarts (`waiting` events' `what`); `goneFile`: the app's port
 * file, when it is gone meanwhile; `oldPid`: the old JVM's pid, when a new agent session answers but the old JVM still runs;
 * `earlierPid`: the restart command an earlier cycle of the watch started, which still runs (not started again).
 */
export function waitingForRestart(goneFile?: string, oldPid?: string, earlierPid?: number): string {
  const earlier =
    earlierPid === undefined
      ? ''
      : `; the restart command an earlier cycle started (pid ${earlierPid}) still runs: waiting for it, not starting it again`;
  const what = 'the app to come back with a new agent session';
  if (oldPid !== undefined)
    return `${what} (a new one answers, but the old app's JVM, pid ${visible(oldPid)}, still runs: waiting for it to stop)${earlier}`;
  return goneFile === undefined
    ? `${what}${earlier}`
    : `${what} (its port file ${goneFile} is gone: the old app stopped, and no new one has written it yet)${earlier}`;
}

/** The line before the restart: which classes need it, and what the run does about it (`log`: where the command's output goes). */
export function restartNeededText(classes: readonly string[], command: string | null, log: string | null, timeoutMs: number): string {
  const names = classes.slice(0, 5).join(', ') + (classes.length > 5 ? ` and ${classes.length - 5} more` : '');
  const what = `${classes.length} class(es) need an app restart (${names}): the agent cannot apply their change in this JVM`;
  return command === null
    ? `${what}; restart the app now (from the IDE or a terminal): waiting up to ${seconds(timeoutMs)} for it to come back`
    : `${what}; restarting the app with: ${command} (detached; its output in ${log})`;
}

/** The line after the restart command ended; `appBack`: the app had come back before (its status fails nothing then). */
export function restartCommandText(exitCode: number, durationMs: number, appBack: boolean): string {
  const took = durationMs < 1000 ? `${Math.round(durationMs)} ms` : `${(durationMs / 1000).toFixed(1)} s`;
  if (exitCode === 0) return `restart command done in ${took}`;
  return appBack
    ? `restart command ended with exit status ${exitCode} in ${took}, after the app came back: what is proven in the new JVM rests on its own evidence`
    : `restart command FAILED (exit status ${exitCode}) in ${took}`;
}

/** The line when the run is done with the restart while its command still runs. */
export function restartRunningText(pid: number, log: string): string {
  return `restart command still running (pid ${pid}): left running, as it may be the app; its output goes on into ${log}`;
}

/** What the agent does to a port file as its JVM stops (agent StatusServer.stop()), and the fix for a restart that overlaps two JVMs. */
const PORT_FILE_FIX =
  "an agent deletes its port file as its JVM stops, whatever port it names by then, so an old app that stops after the new one started takes the new one's: stop the old app before starting the new one, or give each JVM a portFile= of its own (agentArgs)";

/**
 * The warning when the port file is gone after a new JVM wrote `port` there: `waiting` (the run asks
 * that port directly, without the file) or after the app came back.
 */
export function portFileLostText(file: string, port: number, waiting: boolean): string {
  const what = waiting
    ? `the port file ${file} named port ${port} of a new JVM, and is gone: asking port ${port} directly`
    : `the port file ${file} is gone since the app came back on port ${port}: a later run will not find the app by it`;
  return `${what}; ${PORT_FILE_FIX}`;
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
  const needed =
    shortfall.appBack === true
      ? `${shortfall.classes} changed class(es) were not proven while the app's agent was gone, and the app came back`
      : `build ok, but ${shortfall.classes} class(es) needed an app restart`;
  const failure: RestartFailure = shortfall.failure;
  switch (failure.kind) {
    case 'command-failed': {
      const ends = failure.lastLines.length === 0 ? 'it wrote nothing' : `its output ends: ${failure.lastLines.map(visible).join(' | ')}`;
      return {
        message: `${needed}, and the restart command failed (exit status ${failure.exitCode}): not proven live`,
        hint: `${ends} (all of it in ${failure.log}); check the restart command (${failure.command}), restart the app yourself, and run again`,
      };
    }
    case 'not-started':
      return {
        message: `${needed}, and the restart command could not be started (${failure.why}): not proven live`,
        hint: `restart the app yourself (${failure.command}), and run again`,
      };
    case 'not-back':
      if (failure.oldRunning?.stopping === true) {
        const { pid, sessionId } = failure.oldRunning;
        return {
          message: `${needed}, and the app did not come back with a new agent session within ${seconds(failure.waitedMs)}: its old JVM (pid ${visible(pid)}, agent session ${visible(sessionId)}) was still stopping (its agent had stopped, its process still ran), and the change is proven only in a JVM started once the old one is gone: not proven live`,
          hint: `the old app takes longer than ${seconds(failure.waitedMs)} to stop: raise --restart-timeout <ms> (in milliseconds), and run again`,
        };
      }
      if (failure.oldRunning !== undefined && failure.oldRunning.newBeside !== true) {
        const { pid, sessionId } = failure.oldRunning;
        return {
          message: `${needed}, and the app did not come back with a new agent session within ${seconds(failure.waitedMs)}: its old JVM (pid ${visible(pid)}, agent session ${visible(sessionId)}) still runs the code from before the change, and no new agent session of the app answered: not proven live`,
          hint: `${failure.command === undefined ? 'restart the app (stop it, then start it again) while the run waits' : `the restart command (${failure.command}) neither stopped this app nor started a new one: check that it restarts this app`}, or raise --restart-timeout <ms> for an app slow to restart, and run again`,
        };
      }
      if (failure.oldRunning !== undefined) {
        const { pid, sessionId } = failure.oldRunning;
        return {
          message: `${needed}, and the app did not come back with a new agent session within ${seconds(failure.waitedMs)}: its old JVM (pid ${visible(pid)}, agent session ${visible(sessionId)}) still runs the code from before the change, and a JVM started beside it is not the app restarted: not proven live`,
          hint: `stop the old app first: ${failure.command === undefined ? 'stop it, then start it again' : 'make the restart command stop the running app (and wait until it is gone) before it starts the new one'}, and run again`,
        };
      }
      return {
        message: `${needed}, and the app did not come back with a new agent session within ${seconds(failure.waitedMs)}: not proven live`,
        hint:
          failure.portFileGone !== undefined
            ? `its port file ${failure.portFileGone} was deleted during the wait and no agent wrote it again: either the new app has not started (raise --restart-timeout <ms> for one that starts slowly), or it started before the old one stopped: ${PORT_FILE_FIX}`
            : failure.command === undefined
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
        hint:
          failure.jarRun === undefined
            ? 'a class file written after the app started again is proven only by VERIFY: rebuild with reclazz-build, or restart the app once more'
            : `the new JVM loads ${failure.jarRun.className} from ${failure.jarRun.jar}, not from ${failure.jarRun.dir}, so no rebuild or restart shows the change: ${jarRunWords(failure.jarRun).hint}`,
      };
    case 'not-again':
      return {
        message: `${needed}, which an earlier restart in this watch could not prove: not restarted again for them`,
        hint: 'see why the earlier restart could not prove them; change the classes again, or restart the app yourself',
      };
  }
}

/** The words of a watch's app whose agent is gone, with changed classes it runs not proven there. */
export function appGoneWords(shortfall: Extract<Shortfall, { kind: 'app-gone' }>): Words {
  const stale = shortfall.portFile === undefined ? '' : `, or delete its port file ${shortfall.portFile} if the app is not coming back`;
  return {
    message: `${shortfall.classes} changed class(es) that the app of ${shortfall.source} runs are not proven live: its agent went away at ${clock(shortfall.since)} and is not back`,
    hint: `start the app again: the watch proves the change in its new JVM once its agent is back${stale}`,
  };
}

/** A wait's bound in words: whole seconds, tenths, or milliseconds below a second (a `--restart-timeout 30` meant as seconds shows as such). */
function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** `HH:MM:SS` of an ISO time (UTC, as the agent's timestamps). */
function clock(iso: string): string {
  return `${iso.slice(11, 19)} UTC`;
}
