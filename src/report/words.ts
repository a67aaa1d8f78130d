/**
 * Every sentence a user reads about how a command ended, and its `next:` hint, keyed by reason
 * (modelled on wireit's `default-logger.ts`). Facts are made visible (palette.ts) before they
 * go into a sentence, so the words are safe to show as they are. A result (outcome/result.ts)
 * carries facts only: {@link describeResult} makes its words from its outcome's, and with several
 * agents says which agent's they are; the terminal, the JSON `result` line and the library's
 * callers all read them from here.
 */
import type { InterruptPoint, Outcome, OutcomeOf, Proof, Shortfall } from '../outcome/outcome.js';
import type { BuildGroup, LockHolder } from '../outcome/facts.js';
import { decidingAgent, type ResultBase, type RunResult, type Words } from '../outcome/result.js';
import { describeAgentAfterLoss, describeAgentOutcome, reloadUncertain } from './agent-words.js';
import { agentShortfallWords, notWatchedWords } from './shortfall-words.js';
import { appGoneWords, restartedProofWords, restartFailedWords } from './restart-words.js';
import { describeDone } from './done-words.js';
import { describePortFault, describeUsage } from './input-words.js';
import { visible, visibleFacts } from './palette.js';
import { WRITTEN_OUTSIDE } from './verdict-words.js';

/** The words for `outcome`: text to show as it is (every fact in it is made visible first). */
export function describeOutcome(outcome: Outcome): Words {
  return describe(visibleFacts(outcome));
}

/** What {@link describeResult} reads of a result: its outcome, and for a build or `verify` its parts with several agents. */
type Described = ResultBase & Partial<Pick<RunResult, 'agents' | 'among' | 'ofAgent'>>;

/**
 * The words of `result`: one plain sentence and, when there is something to do, what to do next.
 * With several agents: every agent proven, or how many were and the deciding agent's words
 * (`agents`); which agent refused among which (`among`); whose own result it is (`ofAgent`).
 */
export function describeResult(result: Described): Words {
  if (result.agents !== undefined) return describeAgents(result.agents);
  let words = describeOutcome(result.outcome);
  if (result.among !== undefined) words = describeAmong(result.among.source, result.among.sources, words);
  if (result.ofAgent !== undefined) words = describeOneOf(result.ofAgent, words);
  return words;
}

/**
 * The words for a run over several agents (each agent's own words are its result's): all of
 * them proven, or how many were and the deciding one's words (outcome/result.ts `decidingAgent`); its next step either way.
 */
function describeAgents(agents: NonNullable<RunResult['agents']>): Words {
  const proven = agents.filter((a) => a.provenLive && a.exitCode === 0).length;
  const deciding = decidingAgent(agents);
  const own = describeResult(deciding);
  const hint = own.hint === undefined ? {} : { hint: own.hint };
  if (proven === agents.length) {
    const names = agents.map((a) => visible(a.agentSource));
    return { message: `every one of the ${agents.length} agents proved its classes live (${names.join(', ')})`, ...hint };
  }
  return {
    message: `${proven} of ${agents.length} agents proved their classes live; the agent of ${visible(deciding.agentSource)}: ${own.message}`,
    ...hint,
  };
}

/**
 * The words of a refusal by one of several agents (`words` are its own): which one, every port
 * file found, and how to leave some out.
 */
function describeAmong(source: string, sources: readonly string[], words: Words): Words {
  const all = sources.map((s) => `  ${visible(s)}`).join('\n');
  return {
    message: `${words.message}\n(the agent of ${visible(source)}; this run found ${sources.length} agents:\n${all})`,
    hint: `${words.hint === undefined ? '' : `${words.hint}; `}or build against some of them only: --port-file <path> for each`,
  };
}

/** The words of one agent's own outcome in a run over several (a watch cycle that ended before its build): which agent, then its words. */
function describeOneOf(source: string, words: Words): Words {
  return { ...words, message: `the agent of ${visible(source)}: ${words.message}` };
}

function describe(outcome: Outcome): Words {
  switch (outcome.reason) {
    case 'ok':
      return 'proof' in outcome ? describeProof(outcome.proof) : describeDone(outcome.done);
    case 'no-agent-build':
      return { message: 'build ok without an agent: nothing is proven live' };
    case 'build-failed':
      if (outcome.released)
        return { message: `the build failed (exit status ${outcome.status}) and wrote nothing; hold released (BUILD ok captures nothing)` };
      return outcome.owner === undefined
        ? { message: `build failed (exit status ${outcome.status}) without an agent: nothing is proven live` }
        : {
            message: `the build failed (exit status ${outcome.status}); the agent keeps holding its output for owner ${outcome.owner}`,
            hint: 'fix the build and run again here: the next run reuses the owner and releases the hold (to release it now without a fix: reclazz-build -- true)',
          };
    case 'usage':
      return describeUsage(outcome.problem);
    case 'nested':
      return {
        message: `refusing to run inside another safe build (${outcome.variable}=1 is set)`,
        hint: 'run the inner build command directly; the outer reclazz-build already holds the agent',
      };
    case 'command-not-found':
      return {
        message: `build command not found: ${outcome.file}`,
        hint: outcome.tool === 'command' ? 'check the command after --' : `install ${outcome.tool} or add the project's wrapper script`,
      };
    case 'command-not-executable':
      return {
        message: `build command is not executable: ${outcome.path}`,
        hint: `make it executable (chmod +x ${outcome.path}) or run it through its interpreter`,
      };
    case 'no-agent':
      return {
        message: `${outcome.waitedMs === undefined ? 'no running agent found' : `no port file appeared within ${outcome.waitedMs} ms (--wait-for-agent)`}: no .reclazz/agent.port or .idea/reclazz/agent.port in ${outcome.cwd}, its parents, or up to ${outcome.depth} levels below`,
        hint: `start the app with the reclazz agent, or point at it with --port <n> or --port-file <path>${outcome.offerNoAgent ? ' (or run the build without a hold: --allow-no-agent)' : ''}`,
      };
    case 'ambiguous-agent':
      if (outcome.otherCheckouts)
        return {
          message: `${outcome.cwd} is in no checkout (no .git there or above), and agent port files found below it lie in other checkouts (folders with their own .git), whose agents a run from here does not hold:\n${outcome.portFiles.map((p) => `  ${p}`).join('\n')}`,
          hint: `a run holds only its own checkout's agents and keeps its state there: run inside the checkout whose app you build, or name its agent with --port-file <path> (e.g. --port-file ${outcome.portFiles[0]})`,
        };
      return {
        message: `${outcome.named ? `--port-file names ${outcome.portFiles.length} agent port files` : `found ${outcome.portFiles.length} agent port files below ${outcome.cwd}`}:\n${outcome.portFiles.map((p) => `  ${p}`).join('\n')}`,
        hint: `this command talks to one agent: pick one with --port-file <path> (e.g. --port-file ${outcome.portFiles[0]}), or run from the subproject the app runs in; a build holds them all`,
      };
    case 'bad-port-file':
      return describePortFault(outcome.fault, outcome.waitedMs);
    case 'lock-busy':
      if (outcome.orphan !== undefined) return describeOrphan(outcome.orphan, outcome.waitedMs);
      return {
        message: `another reclazz-build run in this checkout still holds ${outcome.lockPath} after ${outcome.waitedMs} ms${holderWords(outcome.holder)}`,
        hint: `wait for it to finish (a suspended one: fg), or raise --wait <ms>; if no run is left here, remove ${outcome.lockPath} and ${outcome.lockPath}.holder`,
      };
    case 'verify-incomplete':
      return describeShortfall(outcome);
    case 'interrupted':
      return { message: describeInterrupt(outcome) };
    case 'state-error':
      return {
        message: `${outcome.problem}; the build did not run${holdStays(outcome.holdOwner)}`,
        hint: `reclazz-build keeps its state in ${outcome.dir}: make it readable and writable for this user, or move away whatever is in the way of ${outcome.file}`,
      };
    case 'internal-error':
      return {
        message: `internal error: ${outcome.problem}${holdStays(outcome.holdOwner)}`,
        hint: 'this is a bug in reclazz-build: please report it with the output above',
      };
    case 'doctor-findings':
      return describeDone(outcome.done);
    case 'stream-ended':
      return {
        message: `the agent on port ${outcome.port} closed the stream after ${outcome.events} event(s): the app stopped or restarted`,
      };
    default:
      return describeAgentOutcome(outcome);
  }
}

/** A command as a message names it: at most 120 characters. */
export function shortCommand(command: string): string {
  return command.length > 120 ? `${command.slice(0, 117)}...` : command;
}

/**
 * A build that left processes running in a session of their own (a daemon that called setsid):
 * whatever they write after the check was never checked. `checked` undefined: no class that was
 * loaded changed bytes.
 */
function detachedWords(shortfall: Extract<Shortfall, { kind: 'detached' }>, checked: { live: number; total: number } | undefined): Words {
  const { processes } = shortfall;
  const named = processes
    .slice(0, 3)
    .map((p) => `${p.pid} ${shortCommand(p.command)}`)
    .join('; ');
  const more = processes.length > 3 ? `; and ${processes.length - 3} more` : '';
  const sofar =
    checked === undefined ? 'no class that was loaded changed bytes' : `${checked.live} of ${checked.total} class(es) checked are live`;
  return {
    message: `build ok; ${sofar} so far, but ${processes.length} process(es) the build started still run after it, in a session of their own: ${named}${more}; they may still write class files after this check: not proven live`,
    hint: `make the build wait for the processes it starts, or stop them (kill ${processes.map((p) => p.pid).join(' ')}); once they are gone, reclazz-build verify <class output directory> proves what is live`,
  };
}

/** The run holding the lock, when its holder file names it: its pid and its build's command. */
function holderWords(holder: LockHolder | undefined): string {
  if (holder === undefined) return '';
  return ` (its process ${holder.pid}${holder.command === undefined ? '' : `, building with ${shortCommand(holder.command)}`})`;
}

function describeOrphan(group: BuildGroup, waitedMs: number): Words {
  return {
    message: `the build of an earlier run that is gone (killed?) still runs after ${waitedMs} ms: process group ${group.pgid}, ${shortCommand(group.command)}; it may still write class files, so the build did not run`,
    hint: `let it end, or raise --wait <ms>; reclazz-build never signals a process group it did not start: stop it yourself if it is stuck (kill -TERM -${group.pgid})`,
  };
}

function holdStays(owner: string | undefined): string {
  return owner === undefined ? '' : `; the hold stays with owner ${owner}: run again here once fixed to recover it`;
}

function describeProof(proof: Proof): Words {
  switch (proof.kind) {
    case 'proven': {
      const unchanged = proof.unchanged ?? 0;
      const changed = proof.files ? '' : 'changed ';
      const verifiable = proof.skipped ? 'verifiable ' : '';
      const all =
        unchanged === 0
          ? `all ${proof.applied} ${verifiable}${changed}class(es) proven live (VERIFY applied, SHA-256 matched)`
          : `all ${proof.applied + unchanged} ${verifiable}class(es) checked are live: ${proof.applied} VERIFY applied (SHA-256 matched), ${unchangedWords(proof)}`;
      return { message: proof.skipped ? `${all}; ${notAccepted(proof.skipped, changed)}` : all };
    }
    case 'nothing-to-prove': {
      const added = proof.added ? `${proof.added} new class(es) the JVM has not loaded (DIAGNOSE), which load on first use; ` : '';
      return {
        message: proof.skipped
          ? `build ok and acknowledged; ${added}${notAccepted(proof.skipped, 'changed ')}, and no other class that was loaded before changed bytes: nothing to prove`
          : `build ok and acknowledged; ${added}no class that was loaded before changed bytes: nothing to prove`,
      };
    }
    case 'not-verified':
      return { message: `build ok and acknowledged; ${proof.changed} changed class(es) not verified (--no-verify): NOT proven live` };
    case 'none-verifiable':
      return { message: `none of the ${proof.files} class file(s) has a name VERIFY accepts: nothing to prove` };
    case 'restarted':
      return restartedProofWords(proof);
  }
}

/** What `unchanged` classes are, after their count: of a build, then of `verify` (commands/verify.ts). */
const UNCHANGED_WHY = 'rewritten since the app started with the bytes it has (asked once: the agent saw no change to reload)';
const SINCE_START_WHY = "unchanged since before the app's JVM started (the bytes it runs, nothing to ask)";
const RECORDED_WHY = "live by this agent session's record (an earlier run's evidence, said above for each: nothing to ask)";
const NEW_TO_JVM_WHY = 'new to the JVM (DIAGNOSE: not loaded yet, so it loads these bytes on first use)';

/** The `unchanged` of a proof, by what makes them live: of a build, identical bytes; of `verify`, their age or the record; new to the JVM. */
function unchangedWords(proof: Extract<Proof, { kind: 'proven' }>): string {
  const newToJvm = proof.newToJvm ?? 0;
  const recorded = proof.files ? (proof.recorded ?? 0) : 0;
  const rest = (proof.unchanged ?? 0) - newToJvm - recorded;
  return [
    rest > 0 ? `${rest} ${proof.files ? SINCE_START_WHY : UNCHANGED_WHY}` : '',
    recorded > 0 ? `${recorded} ${RECORDED_WHY}` : '',
    newToJvm > 0 ? `${newToJvm} ${NEW_TO_JVM_WHY}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}
/** The clause for class files whose names VERIFY does not accept (`module-info`, a name with a control character...). */
function notAccepted(count: number, changed: string): string {
  return `${count} ${changed}class file(s) not verified: no name VERIFY accepts (listed above as skipped)`;
}

/** The clause for a build that found no class output directory (its warning says the same). */
export function noClassDirs(searchRoot: string): string {
  return `no class output directory found under ${searchRoot} (target/classes, build/classes/*/main): nothing was checked`;
}

/** A VERIFY round that left classes without proof: what was proven, why the rest was not, and what to do. */
function describeShortfall(outcome: OutcomeOf<'verify-incomplete'>): Words {
  const { applied, total, shortfall, files } = outcome;
  const live = applied + (outcome.unchanged ?? 0);
  switch (shortfall.kind) {
    case 'unreadable': {
      const proven = outcome.noneChanged ? 'no class that was loaded before changed bytes' : `all ${live} class(es) checked are live`;
      const what = [
        ...(shortfall.unreadable > 0 ? [`${shortfall.unreadable} class file(s)`] : []),
        ...(shortfall.folders > 0 ? [`${shortfall.folders} folder(s) of class files`] : []),
      ].join(' and ');
      return {
        message: `build ok; ${proven}, but ${what} could not be read, so whether they changed is unknown: not proven live`,
        hint: 'make the class files and folders named in the warning above readable for this user, and run again',
      };
    }
    case 'not-verifiable': {
      const proven = outcome.noneChanged ? 'no other class that was loaded before changed bytes' : `all ${live} class(es) checked are live`;
      return {
        message: `build ok; ${proven}, but ${shortfall.classes} changed class file(s) have a name VERIFY does not accept (listed above as skipped), so whether the app runs them is unknown: not proven live`,
        hint: 'a class name with a control character is no class javac writes: remove the file; a multi-release class under META-INF/versions cannot be verified: restart the app if it must be live',
      };
    }
    case 'no-class-dirs':
      return {
        message: `build ok and acknowledged; ${noClassDirs(shortfall.searchRoot)}: not proven live`,
        hint: 'run from the project folder, or name the directory with --classes-dir <dir>',
      };
    case 'no-class-files':
      return {
        message: `build ok and acknowledged; the ${shortfall.dirs} class output director${shortfall.dirs === 1 ? 'y holds' : 'ies hold'} no class file: nothing was checked, not proven live`,
        hint: 'check that the build writes its classes there, or name the right directory with --classes-dir <dir>',
      };
    case 'not-watched':
      return notWatchedWords(shortfall, live, total);
    case 'hold-kept':
    case 'auto-compile':
    case 'paused':
    case 'watcher-starting':
    case 'restart-required':
      return agentShortfallWords(shortfall, files === true);
    case 'restart':
      return restartFailedWords(shortfall);
    case 'app-gone':
      return appGoneWords(shortfall);
    case 'detached':
      return detachedWords(shortfall, outcome.noneChanged === true ? undefined : { live, total });
    default: {
      const asked = outcome.checked !== undefined && outcome.checked > 0 ? 'class(es) checked' : 'changed class(es)';
      const what = files ? `only ${live} of ${total} class(es)` : `build ok, but only ${live} of ${total} ${asked}`;
      return {
        message: `${what} are proven live: ${shortfallWhy(shortfall, live, total, files === true)}`,
        hint: shortfallHint(shortfall, total - live, files === true),
      };
    }
  }
}

/** The shortfalls that end a VERIFY round early or leave classes without proof. */
type RoundShortfall = Extract<Shortfall, { kind: 'restarted' | 'connection-lost' | 'capacity' | 'not-proven' }>;

function shortfallWhy(shortfall: RoundShortfall, applied: number, total: number, files: boolean): string {
  switch (shortfall.kind) {
    case 'restarted':
      return 'the app restarted during VERIFY (new agent session)';
    case 'connection-lost':
      return `the agent closed the connection during VERIFY; ${describeAgentAfterLoss(shortfall.found)}`;
    case 'capacity':
      return `more classes ${files ? '' : 'changed '}than the agent keeps receipts for (${total} > ${shortfall.capacity})`;
    case 'not-proven':
      return `${total - applied} not proven`;
  }
}

function shortfallHint(shortfall: RoundShortfall, unproven: number, files: boolean): string {
  // Only a restart or a change proves these: no answer of the agent can (the evidence rule, seen-at-watcher-start).
  if (shortfall.kind === 'not-proven' && shortfall.writtenAfterStart === unproven)
    return `the class files not proven were written after the app started (${WRITTEN_OUTSIDE}), before any run here recorded what the app had, and the agent did not reload them: restart the app (or change those classes), and build through reclazz-build while it runs`;
  if (shortfall.kind === 'capacity' && !files) {
    return `the agent keeps receipts for the last ${shortfall.capacity} reloaded classes only, so the others cannot be proven in this app session: restart the app if they must be live`;
  }
  if (!files) return 'see the classes listed above; exercise the app or restart it if the change must be live';
  return shortfall.kind === 'not-proven' && shortfall.timedOut
    ? 'a class still not_observed at the deadline has no receipt in this agent session (never reloaded, evicted, or the app restarted); rebuild with reclazz-build, or raise --verify-timeout'
    : "see the agent's detail for each class; exercise the app, or restart it if the change must be live";
}

const WHEN: Readonly<Record<Exclude<InterruptPoint, 'following'>, string>> = {
  'waiting-for-lock': 'while waiting for another run',
  connecting: 'while connecting to the agent',
  doctor: 'while asking the agent for DOCTOR',
  'waiting-for-hold': 'while waiting for the build hold another owner holds; the build did not run',
  'started-receipt': 'while waiting for the BUILD started receipt',
  'before-build': 'before the build started',
  build: 'during the build',
  watcher: "after the build, while waiting for the agent's file watcher to start (BUILD failed was sent)",
  'ok-receipt': 'while waiting for the BUILD ok receipt',
  'failed-receipt': 'while waiting for the BUILD failed receipt',
  verify: 'during VERIFY',
  'reload-receipt': 'while waiting for the RELOAD_STATE receipt',
  'after-scan': 'after sending SCAN',
  watching: 'while watching, between builds',
  restart: 'while the app restarted (the build was acknowledged and nothing is held)',
};

function describeInterrupt(outcome: OutcomeOf<'interrupted'>): string {
  if (outcome.at === 'following') return `stopped following after ${outcome.events ?? 0} event(s)`;
  const uncertain = outcome.at === 'reload-receipt' && outcome.action !== undefined ? `: ${reloadUncertain(outcome.action)}` : '';
  const owner = outcome.holdOwner;
  const left = outcome.holdKept ? `the agent keeps the hold for owner ${owner}` : `the hold may be left with owner ${owner}`;
  const hold = owner === undefined ? '' : `; ${left}: the next run here reuses it and recovers`;
  return `interrupted (${outcome.signal}) ${WHEN[outcome.at]}${uncertain}${hold}`;
}
