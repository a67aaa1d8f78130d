/**
 * The words of the subcommands that ended well (doctor, status, pause, resume, scan): what the
 * agent's answer says, and what to mind about it.
 */
import type { Done } from '../outcome/outcome.js';
import type { JarRun, ReloadAction, ReloadState } from '../outcome/facts.js';
import type { Words } from '../outcome/result.js';

/** The words for a subcommand's good ending. */
export function describeDone(done: Done): Words {
  switch (done.kind) {
    case 'doctor':
      return doctorWords(done);
    case 'reload':
      return {
        message: describeState(done.action, done.state),
        ...(done.state.buildHold === 'none'
          ? {}
          : {
              hint: `a ${done.state.buildHold} build hold still keeps class files back until its owner's BUILD ok; resume never releases it`,
            }),
      };
    case 'scan':
      if (!done.delivered) {
        return { message: 'SCAN sent to an agent from before build ownership; the agent never answers SCAN, so nothing confirms it' };
      }
      return {
        message:
          'SCAN sent and read by the agent (it answered the DOCTOR sent after it); SCAN has no reply, so what it found and reloaded is not reported',
        ...(done.hold !== 'none' && done.hold !== 'unavailable'
          ? { hint: `a ${done.hold} build hold is active: SCAN does not release it, held class files stay back until BUILD ok` }
          : {}),
      };
  }
}

/**
 * The app's JVM loads this project's classes from a jar (classes/jar-run.ts), with the fix: for
 * `doctor`, a build's warning (once per run) and a restart that could not prove them.
 */
export function jarRunWords(run: JarRun): Words {
  return {
    message: `the app's JVM loads this project's classes from the jar ${run.jar} (${run.className} among them), not from ${run.dir}, where the build writes: a build there reloads only classes already loaded; a class loaded later, a new class and every class after a restart come from the jar`,
    hint: `run the app from its class output directories: mvn spring-boot:run, ./gradlew bootRun, or java -cp with ${run.dir} first (docs/connect.md#spring-boot)`,
  };
}

/** {@link jarRunWords} as one warning line. */
export function jarRunWarning(run: JarRun): string {
  const words = jarRunWords(run);
  return `${words.message}; ${words.hint}`;
}

function doctorWords(done: Extract<Done, { kind: 'doctor' }>): Words {
  // Said first: with the app running from a jar, nothing else doctor finds makes a change reach it.
  const jar = done.jarRun === undefined ? [] : [jarRunWords(done.jarRun)];
  const words = [...jar, doctorFinding(done), ...holdAndWatcher(done)].reduce((a, b) => ({
    message: `${a.message}; ${b.message}`,
    ...(a.hint === undefined && b.hint === undefined ? {} : { hint: [a.hint, b.hint].filter((h) => h !== undefined).join('; ') }),
  }));
  if (done.paused === undefined) return words;
  const paused = `automatic reload is PAUSED agent-wide (${done.paused} class file(s) pending): nothing reloads until reclazz-build resume`;
  return {
    message: `${words.message}; ${paused}`,
    hint: words.hint === undefined ? 'reclazz-build resume' : `${words.hint}; then reclazz-build resume`,
  };
}

/** What else keeps changes from reloading: a build hold (this checkout's or not), the watcher not running. */
function holdAndWatcher(done: Extract<Done, { kind: 'doctor' }>): Words[] {
  const found: Words[] = [];
  if (done.hold === 'legacy')
    found.push({
      message: 'the agent holds a legacy (unowned) build: a build here waits for it',
      hint: 'let the tool that took it finish (its BUILD ok releases it), or restart the app',
    });
  if (done.hold === 'ours')
    found.push({
      message:
        "the agent holds this checkout's build (a build here is running, or the last one failed or stopped before BUILD ok): it reloads nothing, not even a compile outside reclazz-build, until a build here succeeds",
      hint: 'unless a build here is running: fix the build and run it again through reclazz-build (its BUILD ok reloads what was held)',
    });
  if (done.hold === 'not-ours')
    found.push({
      message: "the agent holds a named build this checkout's .reclazz/owner.json does not record as its own: a build here waits for it",
      hint: 'let its owner (the IDE, another terminal) finish; a killed run elsewhere left it: run reclazz-build -- true there, or restart the app',
    });
  if (done.watcher === 'stopped')
    found.push({
      message:
        "the agent's file watcher has STOPPED: it captures no build and reloads nothing until the app restarts (a build's BUILD ok leaves its hold with its owner)",
      hint: 'restart the app (its log says why the watcher stopped)',
    });
  else if (done.watcher !== undefined)
    found.push({
      message: `the agent's file watcher is ${done.watcher}, not watching: nothing reloads until it runs`,
      hint:
        done.watcher === 'starting'
          ? 'wait for the app to finish starting; a build meanwhile is held, and its BUILD ok waits for the watcher (--wait-for-agent <ms>, else --verify-timeout)'
          : 'restart the app',
    });
  return found;
}

function doctorFinding(done: Extract<Done, { kind: 'doctor' }>): Words {
  const dirs = `class output director${done.dirs === 1 ? 'y' : 'ies'} here`;
  if (done.dirs === 0) {
    return {
      message: 'DOCTOR observed; no class output directory found here to compare with what the agent watches',
      hint: 'build the project first, or name its class output directory with --classes-dir',
    };
  }
  if (done.foreign !== undefined) {
    return {
      message: `DOCTOR observed; this agent runs in ${done.foreign} and watches none of this project's directories: it is another app's agent (a stale port file?). Start this project's app with the agent, or pick its port file with --port-file; an app in a container needs --path-map <agent path>=<local path>`,
    };
  }
  if (done.unwatched > 0) {
    return {
      message: `DOCTOR observed; ${done.unwatched} of ${done.dirs} ${dirs} NOT watched by the agent: changes there will not reload`,
      hint: "add them to the agent's watchDirs= option (directories separated by ';') and restart the app; the Maven and Gradle attach plugins register only the module the app runs from",
    };
  }
  const unknown = done.unknown > 0 ? ' (the rest unknown: the agent lists only a sample)' : '';
  return { message: `DOCTOR observed; ${done.watched} of ${done.dirs} ${dirs} watched${unknown}` };
}

function describeState(action: ReloadAction, state: ReloadState): string {
  const counts = `${state.pendingClasses} pending class${state.pendingClasses === 1 ? '' : 'es'}, ${state.pendingActions} pending action${state.pendingActions === 1 ? '' : 's'}, build hold ${state.buildHold}`;
  switch (action) {
    case 'pause':
      return `automatic reload paused (agent-wide: any client may resume it); ${counts}`;
    case 'resume':
      return `automatic reload resumed; pending work is scheduled, not yet reloaded; ${counts}`;
    case 'status':
      return `automatic reload is ${state.paused ? 'PAUSED' : 'running'}; ${counts}`;
  }
}
