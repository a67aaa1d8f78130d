/**
 * The words of what happens on the way: the waits a run reports, its warnings, and the last
 * line after a second interrupt. The flow emits these as `waiting` and `warning` events, and
 * renderers show them as they are: every fact put into a warning is made visible first.
 */
import type { ErrorFact, Waiting, Warning } from '../outcome/events.js';
import { jarRunWarning } from './done-words.js';
import { visible, visibleFacts } from './palette.js';
import { appStartWhy, portFileLostText, waitingForRestart } from './restart-words.js';
import { describeOutcome, noClassDirs, shortCommand } from './words.js';

type WaitingOf<K extends Waiting['kind']> = Extract<Waiting, { kind: K }>;

/** The words of each wait's kind, given its facts made visible. */
const waits: { [K in Waiting['kind']]: (w: WaitingOf<K>) => string } = {
  lock: () => 'another reclazz-build run in this checkout to finish',
  orphan: ({ group }) => `the build of an earlier run that is gone to end (process group ${group.pgid}: ${shortCommand(group.command)})`,
  hold: () => 'the build hold, held by another owner (the IDE or another terminal)',
  capture: () => "the agent to capture the previous build's classes",
  restart: (w) => waitingForRestart(w.goneFile, w.oldPid, w.earlierPid),
  'port-file': () => "the agent's port file to appear (--wait-for-agent)",
  port: (w) => `the agent to answer on port ${w.port} (--wait-for-agent)`,
  slot: (w) => `a free client slot on the agent on port ${w.port} (it closed the connection before CONNECTED)`,
  starting: (w) => `the agent on port ${w.port} to finish starting`,
  watcher: (w) =>
    `the file watcher of the agent on port ${w.port} to start (it waits for the app to be ready, startupDelaySec at most), before BUILD ok`,
};

/** The kinds of `waiting` lines (schema.ts). */
export const WAITING_KINDS = Object.keys(waits) as Waiting['kind'][];

/** What a run waits for, in words (`waiting` lines' `what`): text to show as it is, its facts made visible. */
export function waitingWords(wait: Waiting): string {
  return (waits[wait.kind] as (w: Waiting) => string)(visibleFacts(wait));
}

type WarningOf<K extends Warning['kind']> = Extract<Warning, { kind: K }>;

/** The words of each warning kind, given its facts made visible. */
const warnings: { [K in Warning['kind']]: (w: WarningOf<K>) => string } = {
  'lock-lost': (w) => `another run took over the run lock (${w.lockPath}): runs in this checkout may overlap`,
  'missing-classes-dir': (w) => `--classes-dir ${w.dir} does not exist: nothing there is checked unless the build creates it`,
  'given-around-found': (w) => `--classes-dir ${w.outer} holds the class output directory ${w.inner}, which is used instead`,
  nested: (w) =>
    `${w.inner} is inside the class output directory ${w.outer}, which covers it; give the folder where the package folders start`,
  unreadable: ({ files }) =>
    `cannot read ${files.length} class file(s), so their changes are not checked (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', ...' : ''}): check their permissions`,
  'linked-folder': (w) =>
    `${w.link} is a symbolic link to a folder inside a class output directory: the agent's watcher does not follow it, so class files changed through it never reload (the app keeps what it loaded at its start); make it a real folder, or restart the app`,
  'unreadable-folders': ({ folders }) =>
    `cannot list ${folders.length} folder(s) of class files, so their files are not checked and their record is kept (${folders.slice(0, 3).join(', ')}${folders.length > 3 ? ', ...' : ''}): check their permissions`,
  'class-path-unknown': () =>
    "this app's JVM command line cannot be read here (its process is not visible: a container, another host or another user's process), so its class path is not known: the class output directories it loads are taken to be those its agent watches, and one it loads without watching is not caught",
  'app-start-unknown': (w) =>
    `${appStartWhy(w.why)}, so when the app started is unknown: every class file without a record that it is live is checked`,
  unwatched: ({ dir, watched }) =>
    `the agent does not watch ${dir}: changes there will not reload (${
      watched === undefined
        ? 'DOCTOR lists its watched folders in order, and none of this one or those around it is among them'
        : `it watches ${watched.join(', ') || 'no directory'}`
    })`,
  'maybe-foreign': (w) =>
    `the agent runs in ${w.workingDirectory}, outside this project, and none of the watched directories it lists is this project's (it lists only some): it may be another app's agent on a stale port file; check with reclazz-build doctor`,
  'no-class-dirs': (w) => noClassDirs(w.root),
  'watcher-starting': (w) =>
    `the agent's file watcher is still starting (it waits for the app to be ready, its startupDelaySec at most: 30 s by default): until it runs the agent cannot capture a build, and when it starts it reloads every class file changed since the app started, as it finds them (one the build is still writing too). So this build runs under the hold, and BUILD ok waits for the watcher (${w.boundMs} ms at most: ${w.option}); if it has not started by then, the hold stays with this run's owner`,
  'watcher-stopped': () =>
    "the agent's file watcher has STOPPED (DOCTOR: watcher stopped): it captures no build and reloads nothing until the app restarts, so this build's BUILD ok will leave the hold with its owner; restart the app (its log says why the watcher stopped)",
  paused: (w) =>
    `automatic reload is PAUSED agent-wide (${w.pending} class file(s) pending; by reclazz-build pause, the IDE or another client): this build's classes will wait as pending until reclazz-build resume`,
  'no-agent': (w) => `${visible(describeOutcome(w.why).message)} (--allow-no-agent: nothing will be verified)`,
  'remembered-agent': ({ why, portFile, port, pid }) =>
    `the port file ${portFile} ${
      why.kind === 'missing' ? 'is missing (a test run deletes it when its JVM ends)' : `names the agent of a test JVM (pid ${why.pid})`
    }; using the agent this checkout last used: port ${port}, pid ${pid}, same agent session`,
  'state-moved': (w) => `moved ${w.from} to ${w.to}: an agent's state now lives under the checkout root's .reclazz/`,
  'state-file': (w) => w.problem,
  'hold-returned': (w) =>
    `released the hold on the agent of ${w.source} (BUILD ok acknowledged: nothing was built, its output is as it was)`,
  'hold-not-returned': (w) =>
    `BUILD ok for the agent of ${w.source} was NOT acknowledged: it may still hold for owner ${w.owner}; run again here to release it`,
  'hold-kept': (w) =>
    `left the hold on the agent of ${w.source} with owner ${w.owner}: it holds a failed build's output, which only a build that succeeds may release`,
  'stopped-leftovers': ({ stopped }) =>
    `${stopped.length} process(es) of the build still ran ${LINGER_S} s after its command exited, so they were stopped (SIGTERM, then SIGKILL): ${stopped
      .slice(0, 5)
      .map((p) => `${p.pid} ${shortCommand(p.command)}`)
      .join('; ')}${stopped.length > 5 ? '; ...' : ''}`,
  'group-not-recorded': (w) =>
    `cannot record the build's process group ${w.pgid} with the run lock: if this run is killed, the next one will not wait for its build`,
  'same-binary-name': ({ className, paths }) =>
    `${className} is in ${paths.length} class output directories (${paths.join(', ')}): a capture holding both makes the agent mark its whole batch unverified; remove the stale output (a clean build)`,
  'batch-unverified': ({ count, cause }) =>
    cause === 'not-unique'
      ? `${count} class(es) are unverified with the agent's detail "Class was not uniquely loaded before the batch, or input class names were ambiguous": each was not loaded exactly once before its reload (a class the app had not loaded, or one loaded by two class loaders), or its whole batch was ambiguous (two class files with one binary name, or one that is not valid class bytes); DIAGNOSE's words, where shown, say which`
      : `${count} class(es) were marked unverified together, for their whole reload batch: the agent warned that a status client was not keeping up (one that stopped reading) while the batch ran`,
  'not-saved': (w) => `${w.problem}: the next run may verify classes this one already proved`,
  'missing-watch': (w) => `--watch ${w.entry} does not exist: it is watched once it does`,
  'watch-failed': (w) => {
    const hint = watchErrorHint(w.code);
    return `the file watch reported ${w.problem}${hint === undefined ? '' : `: ${hint}`}; changes are still found by a full pass at least every minute`;
  },
  'jar-run': (w) => jarRunWarning(w.run),
  'port-file-lost': (w) => portFileLostText(w.file, w.port, w.waiting),
  'internal-error': (w) => `internal error: ${errorText(w.error)}`,
};

/** What to do about a failed file watch, by its error's code (ENOSPC, EMFILE); undefined when there is nothing to say. */
function watchErrorHint(code: string | undefined): string | undefined {
  if (code === 'ENOSPC') return 'the system ran out of file watches: raise fs.inotify.max_user_watches (sysctl), or watch fewer folders';
  if (code === 'EMFILE') return 'too many open files: raise the open file limit (ulimit -n), or watch fewer folders';
  return undefined;
}

/** How long a build's other processes may run after its command exits, in s (tool/build-group.ts). */
const LINGER_S = 5;

/** The kinds of `warning` lines (schema.ts). */
export const WARNING_KINDS = Object.keys(warnings) as Warning['kind'][];

/**
 * The words of `warning` (`warning` lines' `message`): text to show as it is. Its facts (paths,
 * an agent's text) are made visible first; an error keeps its stack frames on their lines, and a
 * refusal's words are made safe by describeOutcome.
 */
export function warningWords(warning: Warning): string {
  const shown = warning.kind === 'internal-error' || warning.kind === 'no-agent' ? warning : visibleFacts(warning);
  return (warnings[shown.kind] as (w: Warning) => string)(shown);
}

/**
 * An error (an Error, or the {@link ErrorFact} a warning carries) and where it was thrown, to show: its first line (name and message) made visible
 * whole, so that a line break in a message (which may hold a peer's text) shows as `\x0a`;
 * then each line of its stack frames made visible.
 */
export function errorText(error: unknown): string {
  if (!isErrorLike(error)) return visible(String(error));
  if (error.name === '') return visible(error.message);
  const head = `${error.name}: ${error.message}`;
  const stack = error.stack ?? head;
  const frames = stack.startsWith(head) ? stack.slice(head.length) : `\n${stack}`;
  return visible(head) + frames.split('\n').map(visible).join('\n');
}

/** An Error, or an {@link ErrorFact} a warning carries (a thrown value that was not an Error has no name). */
function isErrorLike(value: unknown): value is ErrorFact {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ErrorFact).name === 'string' &&
    typeof (value as ErrorFact).message === 'string'
  );
}

/** The line after a second SIGINT/SIGTERM, which exits at once. */
export function interruptedAgainText(owner: string | undefined): string {
  const recover = owner ? ` with owner ${owner}: run again here (or pass --owner ${owner}) to recover it` : '';
  return `\nreclazz-build: interrupted again, exiting now; the hold may be left${recover}\n`;
}
