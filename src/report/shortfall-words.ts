/**
 * The words of a build whose classes are not all proven live for a reason outside the VERIFY
 * round itself: folders or names the agent never reloads, and the agent's own state (its hold,
 * its compiles, its pause, its watcher, its restart notes).
 */
import type { NotLiveWhy } from '../outcome/facts.js';
import type { Shortfall } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';
import { visible } from './palette.js';
import { EXIT_TABLE, type ExitRow, reasonsOf } from '../outcome/exit.js';

/** Changed classes the agent never reloads (folders it does not watch, names it excludes), and the agent option that fixes it. */
export function notWatchedWords(shortfall: Extract<Shortfall, { kind: 'not-watched' }>, live: number, total: number): Words {
  const others = total - shortfall.classes;
  const rest = others === 0 ? '' : `; ${live} of the other ${others} class(es) checked are live`;
  const { dirs, watchDirs, excludedBy = [], unseen = [] } = shortfall;
  const where = [
    ...(dirs.length > 0 ? [`lie in ${dirs.join(', ')}, which the agent does not watch`] : []),
    ...(excludedBy.length > 0 ? [`match the agent's excludePatterns ${excludedBy.join(', ')}`] : []),
    ...(unseen.length > 0
      ? [
          `lie in ${unseen.join(', ')}, where the agent attempted nothing once its capture of this build was over (not watched, or excluded)`,
        ]
      : []),
  ].join(' or ');
  const addDirs =
    watchDirs !== undefined
      ? `restart the app with the agent option watchDirs=${watchDirs} (directories separated by ';', so quote it in a shell: -javaagent:reclazz-agent.jar='watchDirs=...'; Maven's prepare-agent: -Dreclazz.watchDirs='...')`
      : `add ${dirs.join(', ')} to the agent option watchDirs= (directories separated by ';', with the ones it watches now) and restart the app`;
  const fixes = [
    ...(dirs.length > 0 ? [addDirs] : []),
    ...(excludedBy.length > 0 ? [`restart the app without ${excludedBy.join(', ')} in the agent option excludePatterns=`] : []),
    ...(unseen.length > 0
      ? [
          `see what the agent watches with reclazz-build doctor; add ${unseen.join(', ')} to its watchDirs= option (or take the class out of its excludePatterns=) and restart the app`,
        ]
      : []),
  ];
  return {
    message: `build ok, but ${shortfall.classes} changed class(es) ${where}: they never reload, not proven live${rest}`,
    hint: `${fixes.join('; ')}, then run again`,
  };
}

/** The shortfalls that come from the agent's own state: its hold, its compiles, its pause, its watcher, its restart notes. */
type AgentShortfall = Extract<Shortfall, { kind: 'hold-kept' | 'auto-compile' | 'paused' | 'watcher-starting' | 'restart-required' }>;

/** The words of a build (or, `files`, a verify of class files) that ended unproven for a reason in the agent's state. */
export function agentShortfallWords(shortfall: AgentShortfall, files = false): Words {
  switch (shortfall.kind) {
    case 'hold-kept':
      if (shortfall.cause.kind === 'unreadable-file')
        return {
          message: `build ok, but the agent could not read ${shortfall.cause.file} when it captured this build: it reloaded nothing of it and STILL HOLDS the build for owner ${shortfall.owner}, and every later ok fails on that path until a class file exists there again or the app restarts: not proven live`,
          hint: 'rebuild that class (or put a class file back at that path), then run again here: the next run recovers the hold with the same owner',
        };
      return {
        message: `build ok, but the agent's scan of this build did not finish (its file watcher is not running: still starting, or stopped): it reloaded nothing of it and STILL HOLDS the build for owner ${shortfall.owner}: not proven live`,
        hint: `see reclazz-build doctor: once its watcher runs (the app ready, or restarted if the watcher stopped), run again here (or reclazz-build -- true): the next run recovers the hold with the same owner`,
      };
    case 'auto-compile': {
      const known =
        shortfall.from === 'options'
          ? 'its options say autoCompile=true'
          : "every receipt names bytes other than this build's, as an agent with autoCompile=true gives";
      return {
        message: `build ok, but the agent compiles the sources by itself (${known}), outside the build hold: the build's class files are not what it loads, so nothing the build wrote can be proven live`,
        hint: 'run the app without autoCompile=true in the agent options to have reclazz-build prove what the build wrote; with it, the agent reloads its own compiles and no build is needed',
      };
    }
    case 'paused':
      return {
        message: `build ok, but automatic reload is PAUSED agent-wide (by reclazz-build pause, the IDE or another client): ${shortfall.classes} changed class(es) wait as pending and reload only on resume, not proven live`,
        hint: 'reclazz-build resume (then reclazz-build verify, or run the build again, to prove them)',
      };
    case 'watcher-starting':
      return {
        message: `build ok, but the agent's file watcher had not started ${shortfall.waitedMs} ms after the build (${shortfall.option}), and until it runs the agent cannot capture a build: BUILD ok was not sent, nothing of this build reloaded, and the agent STILL HOLDS it for owner ${shortfall.owner}: not proven live`,
        hint: `once the app is ready, run again here (or reclazz-build -- true): the next run recovers the hold with owner ${shortfall.owner}, and its BUILD ok captures this build too${shortfall.option === '--verify-timeout' ? '; --wait-for-agent <ms> waits longer for the watcher' : ''}`,
      };
    case 'restart-required':
      return {
        message: `${files ? '' : 'build ok, but '}${shortfall.classes} class(es) need an app restart: the agent cannot apply their change (its words are above: "superclass change not applied; restart required", or its PENDING entry)`,
        hint: 'restart the app to load them: the agent cannot change the superclass of a loaded class (PENDING lists what waits on a restart)',
      };
  }
}

/** The words of a build over several agents: all proven, or which agent refused and how to pick some. */

/** One agent's part in a run with several agents. */
export interface AgentPart {
  source: string;
  exitCode: number;
  provenLive: boolean;
  message: string;
}

/**
 * The words for a run over several agents (each agent's own words are its result's): all of
 * them proven, or the first that was not, and how many were.
 */
export function describeAgents(parts: AgentPart[]): Words {
  const proven = parts.filter((p) => p.provenLive && p.exitCode === 0).length;
  const names = parts.map((p) => visible(p.source));
  if (proven === parts.length) return { message: `every one of the ${parts.length} agents proved its classes live (${names.join(', ')})` };
  const first = parts.find((p) => p.exitCode !== 0) ?? parts.find((p) => !p.provenLive)!;
  return {
    message: `${proven} of ${parts.length} agents proved their classes live; the agent of ${visible(first.source)}: ${first.message}`,
  };
}

/**
 * The words of a refusal by one of several agents (`words` are its own): which one, every port
 * file found, and how to leave some out.
 */
export function describeAmong(source: string, sources: readonly string[], words: Words): Words {
  const all = sources.map((s) => `  ${visible(s)}`).join('\n');
  return {
    message: `${words.message}\n(the agent of ${visible(source)}; this run found ${sources.length} agents:\n${all})`,
    hint: `${words.hint === undefined ? '' : `${words.hint}; `}or build against some of them only: --port-file <path> for each`,
  };
}

/** The words of one agent's own outcome in a run over several (a watch cycle that ended before its build): which agent, then its words. */
export function describeOneOf(source: string, words: Words): Words {
  return { ...words, message: `the agent of ${visible(source)}: ${words.message}` };
}

/**
 * The words of the command line's own usage errors (exit 2, nothing sent): a build command
 * it does not know, and one of its options placed where the build tool would get it.
 */

/**
 * An operand that is not gradle, mvn or a subcommand; `closest`: the name it was most likely meant
 * to be (a typo of `doctor`, `mvn`...).
 */
export function unknownToolText(word: string, closest: string | undefined): string {
  const guess = closest === undefined ? '' : ` (did you mean ${closest}?)`;
  return `unknown build tool ${JSON.stringify(word)}${guess}: use gradle, mvn, or put any other command after --`;
}

/**
 * `option` is reclazz-build's, but stands after the build tool's name `tool`, where it would go to
 * the build tool (Maven's "Unrecognized option", Gradle's "Unknown command-line option"), or,
 * when the tool has an option of that name too, would do what reclazz-build's does not: then
 * `short` is the tool's own short form. `watch`: the words before the tool name.
 */
export function ownOptionAfterToolText(option: string, tool: string, watch: boolean, short?: string): string {
  const prefix = watch ? 'reclazz-build watch' : 'reclazz-build';
  const where = `put it before ${tool} (${prefix} ${option} ${tool} ...)`;
  return short === undefined
    ? `${option} is an option of reclazz-build, not of ${tool}: ${where}; after ${tool} every word but --help and -h goes to ${tool}`
    : `${option} after ${tool} is refused, as reclazz-build has an option of that name: for reclazz-build's, ${where}; for ${tool}'s own, write ${short} after ${tool}`;
}

/**
 * The details of verdicts the proof reads beyond a receipt (session/proof.ts):
 * bytes kept live by a single ask, a class new to the JVM, the agent's PENDING entry and its
 * DIAGNOSE words. The agent's own words are put in as they came; renderers make them visible.
 */

export const verdictWords = {
  /** A rewritten file whose bytes are known live, kept by a `not_observed`. */
  keptUnseen: 'rewritten with the bytes known live: no reload attempt since (the agent skips identical bytes)',
  /** A class new to the JVM by the record, kept `added` because DIAGNOSE says the JVM has not loaded it. */
  added: (receipt: string) =>
    `new to the JVM: ${receipt === 'unverified' ? 'its receipt is unverified (the agent never applies a class the JVM had not loaded)' : 'no receipt'}, and DIAGNOSE says the JVM has not loaded it, so it loads these bytes on first use`,
  /** A class new to the JVM by the record that DIAGNOSE did not say the JVM has not loaded. */
  newNotProven: 'new to the JVM by the record, but DIAGNOSE did not say that the JVM has not loaded it: what it runs is unknown',
  /** A class new to the JVM that stays new, as listed with the class files a build added. */
  loadsOnFirstUse: 'new: the JVM has not loaded it (DIAGNOSE), so it loads these bytes on first use',
  /** A `failed` or `unverified` verdict PENDING lists: the agent session's history, not these bytes' receipt. */
  pending: (entry: string, detail: string) =>
    `${detail === '' ? '' : `${detail}; `}PENDING lists it from earlier in this agent session (history, not these bytes): "${entry}"`,
  /** A verdict that is not live, with what DIAGNOSE said of the class. */
  diagnosed: (detail: string, words: readonly string[]) => `${detail}${detail === '' ? '' : '; '}DIAGNOSE: ${words.join(' ')}`,
  /** A single ask answered `not_observed` that the evidence rule does not read as live, by why (`rechecked`: bytes known live, rewritten). */
  unseen: (why: NotLiveWhy, rechecked: boolean): string => {
    switch (why.kind) {
      case 'new-not-shown':
        return newNotShown[why.because];
      case 'refused-registrations':
        return `no reload attempt, but the OS refused ${why.refused} of the agent's watch registrations (DOCTOR unwatchableDirectoryCount): it may never have seen this file, so what the app runs is unknown`;
      case 'not-attempted':
        return 'no reload attempt with these bytes in this agent session: the app still runs earlier bytes';
      case 'not-shown-watched':
        return 'no reload attempt, but nothing shows the agent has watched this folder since the app started (named or found by it, and there then): what the app runs is unknown';
      case 'loads-elsewhere':
        return "no reload attempt, but the JVM does not load this file (its class output directory is not on the JVM's class path, or an earlier entry there holds the class): what the app runs is not these bytes";
      case 'old-mtime':
        return "no reload attempt, but these bytes came to the file after the app started: the agent's watcher, armed after the start, takes the bytes it finds then as they are and never reloads a copy that kept an older modification time (cp -p, rsync -a, tar x), whatever stamp a touch or the same bytes written again give it since: what the app runs is unknown";
      case 'busy-before-build':
        return 'no reload attempt, but the agent had changes pending (or a hold) before this build: what the app runs is unknown';
      case 'other-copy-moved':
        return 'not proven: another class file of this binary name, in another class output directory, changed, came or went in this run, and the agent reloads the class from whichever watched file of that name changed, so its answer may come before that reload: asked again in the next run (remove the stale copy: a clean build)';
      case 'too-recent':
        return `no reload attempt, but the file changed too recently for the agent to have noticed it (its watcher may take ${seconds(why.noticeMs)}): run again then`;
      default:
        return `no reload attempt${rechecked ? ' with these bytes' : ''}, but ${evictedWords(why)}`;
    }
  },
  /** An `applied` receipt completed at `completedAt` (ISO), before this build's hold: an earlier run's, not this build's. */
  appliedEarlier: (completedAt: string, detail: string) =>
    `applied earlier in this agent session (at ${completedAt.slice(11, 19)} UTC), not by this build: the app runs these bytes${detail === '' ? '' : ` (${detail})`}`,
  /** A single ask answered `not_observed` read as identical bytes the agent's watcher saw. */
  watcherSaw: 'no reload attempt, and the agent had nothing pending: identical bytes',
};

/** Why DIAGNOSE's word does not show a class new to the JVM unloaded, by what failed (classes/evidence.ts, kind `not-loaded`). */
const newNotShown = {
  'no-word': verdictWords.newNotProven,
  'other-file':
    "new to the JVM by the record, but DIAGNOSE described another file (its search by the class file's name found that first): whether the JVM has loaded this class is unknown",
  loaded:
    'new to the JVM by the record, but DIAGNOSE says the JVM has loaded it (a registered bean): it runs the bytes it loaded, which no receipt proves',
  'class-path':
    "new to the JVM by the record, but its class output directory is not first for it on the JVM's class path: it may load other bytes on first use",
} as const;

/** `ms` as whole seconds, rounded up. */
function seconds(ms: number): string {
  return `${Math.ceil(ms / 1000)} s`;
}

/** Why a receipt may have been evicted from the agent's ledger of 512. */
function evictedWords(why: NotLiveWhy): string {
  if (why.kind !== 'receipts-unbounded' || why.counted === undefined)
    return 'the agent did not say how many classes it reloaded in this app session (HEALTH), so a receipt may have been evicted';
  const uncounted = Number.isFinite(why.uncounted)
    ? `up to ${why.uncounted} here`
    : 'and a class may have come and gone unrecorded in this app session';
  return `the agent made ${why.counted} reload attempts in this app session, so a receipt may have been evicted (it keeps ${why.capacity}; HEALTH does not count the new classes it registers as beans, ${uncounted})`;
}

/**
 * The exit-status table (outcome/exit.ts) as `--help` shows it and as the README's section
 * "The last line and the exit status" has it (`npm run docs` writes that table from here).
 */

/** The kinds of command the table has a column for. */
export type ExitColumn = 'build' | 'verify' | 'agent';

function meaning(row: ExitRow, column: ExitColumn): string | undefined {
  const text = row[column];
  return text === 'same' ? row.build : text;
}

/** The `Exit status:` block of `--help` for `column`, wrapped to `width` characters. */
export function exitHelp(column: ExitColumn, width = 92): string {
  const indent = 11;
  const lines = ['Exit status:'];
  for (const row of EXIT_TABLE) {
    const text = meaning(row, column);
    if (text === undefined) continue;
    const words = text.split(' ');
    let line = `  ${row.status.replace(' / ', '/').padEnd(indent - 2)}`;
    for (const word of words) {
      if (line.length + word.length + 1 > width && line.trim() !== row.status.replace(' / ', '/')) {
        lines.push(line.trimEnd());
        line = ' '.repeat(indent);
      }
      line += line.endsWith(' ') ? word : ` ${word}`;
    }
    lines.push(line.trimEnd());
  }
  return lines.join('\n');
}

/**
 * The README's exit-status table, in Markdown.
 * @internal for `npm run docs` and its test
 */
export function exitMarkdown(): string {
  const cell = (text: string | undefined) => (text === undefined ? '' : text.replace(/\|/g, '\\|'));
  const reasons = (row: ExitRow) =>
    reasonsOf(row)
      .map((r) => `\`${r}\``)
      .join(', ');
  const rows = EXIT_TABLE.map(
    (row) => `| ${row.status} | ${cell(row.build)} | ${cell(row.verify)} | ${cell(row.agent)} | ${reasons(row)} |`,
  );
  return [
    '| status | build (`gradle`, `mvn`, `--`) | `verify` | `doctor`, `status`, `pause`, `resume`, `scan`, `events` | `reason` (JSON) |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
