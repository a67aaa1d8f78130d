/**
 * The words of a class verdict (outcome/facts.ts `VerdictWhy`): the agent's own text as it came,
 * or why there is no proof, by the kind the core gave it. Facts are made visible where the kind's
 * words were made visible before; renderers make the whole detail visible again as they show it.
 */
import type { ClassVerdict, EvidenceKind, HoldKeptCause, NotLiveWhy, VerdictWhy } from '../outcome/facts.js';
import { visible } from './palette.js';

/** The detail of `verdict`, as the terminal and the `class` lines of `--json` show it. */
export function verdictWords(verdict: Pick<ClassVerdict, 'why' | 'agentDetail'>): string {
  return whyWords(verdict.why, verdict.agentDetail ?? '');
}

function whyWords(why: VerdictWhy, agent: string): string {
  switch (why.kind) {
    case 'none':
      return '';
    case 'receipt':
      return agent || RECEIPT_SAYS_NOTHING[why.status];
    case 'mismatch': {
      const base = `the agent applied other bytes (${why.observedSha256.slice(0, 12)}…, ${why.source || 'unknown source'})`;
      return agent ? `${base}: ${agent}` : base;
    }
    case 'deadline':
      return why.last === undefined ? 'no receipt before the deadline' : `still ${why.last} at the deadline`;
    case 'settle-by':
      return `still ${why.last} ${why.settleByMs} ms after asking; these bytes were there before this build, so the agent has had its capture of them`;
    case 'interrupted':
      return 'interrupted before a final receipt';
    case 'connection-closed':
      return 'the agent connection closed before a final receipt';
    case 'beyond-capacity':
      return `more than ${why.capacity} classes changed; the agent keeps receipts for only ${why.capacity}`;
    case 'session-changed':
      return `the agent session changed (${why.from} -> ${why.to}): the app restarted`;
    case 'paused':
      return 'automatic reload is paused: the agent keeps this change pending until reclazz-build resume';
    case 'hold-kept':
      return holdKeptWords(why.cause);
    case 'capture-over':
      return "no reload attempt with these bytes once the agent's capture of this build was over: the agent does not see this file (a folder it does not watch, or a name it excludes)";
    default:
      return readWords(why, agent);
  }
}

/** The kinds the VERIFY round gives (verify/round.ts, session/check.ts). */
type RoundKind =
  | 'none'
  | 'receipt'
  | 'mismatch'
  | 'deadline'
  | 'settle-by'
  | 'interrupted'
  | 'connection-closed'
  | 'beyond-capacity'
  | 'session-changed'
  | 'paused'
  | 'hold-kept'
  | 'capture-over';

/** The words of the kinds the proof gives as it reads an answer (session/proof.ts), and of `verify` and a watch's gone app. */
function readWords(why: Exclude<VerdictWhy, { kind: RoundKind }>, agent: string): string {
  switch (why.kind) {
    case 'applied-earlier':
      return `applied earlier in this agent session (at ${why.completedAt.slice(11, 19)} UTC), not by this build: the app runs these bytes${agent === '' ? '' : ` (${agent})`}`;
    case 'new-to-jvm':
      return `new to the JVM: ${why.receipt === 'unverified' ? 'its receipt is unverified (the agent never applies a class the JVM had not loaded)' : 'no receipt'}, and DIAGNOSE says the JVM has not loaded it, so it loads these bytes on first use`;
    case 'watcher-saw':
      return 'no reload attempt, and the agent had nothing pending: identical bytes';
    case 'kept-unseen':
      return 'rewritten with the bytes known live: no reload attempt since (the agent skips identical bytes)';
    case 'rewritten':
      return 'the class file changed again after it was checked (its change time moved: written again, or only its mode or times changed): run again';
    case 'not-live':
      return unseenWords(why.why, why.rechecked);
    case 'not-watched':
      return visible(`the agent does not watch ${why.dir}: this change never reloads`);
    case 'excluded':
      return visible(`the agent's excludePatterns ${why.pattern} skips ${why.fileName}: this change never reloads`);
    case 'new-jvm':
      return NEW_JVM_SIGHT[why.sight];
    case 'away':
      return "the app's agent is gone: not proven in its JVM until it is back";
    case 'live-without-asking':
      return liveWords(why.evidence);
    case 'outside':
      return "the app's JVM does not load classes from this folder (its class path) and its agent does not watch it: not the bytes the app runs";
    case 'pending': {
      const detail = whyWords(why.of, agent);
      return `${detail === '' ? '' : `${detail}; `}PENDING lists it from earlier in this agent session (history, not these bytes): "${why.entry}"`;
    }
    case 'diagnosed': {
      const detail = whyWords(why.of, agent);
      return `${detail}${detail === '' ? '' : '; '}DIAGNOSE: ${why.words.join(' ')}`;
    }
  }
}

/** A receipt's detail when the agent sent none, by its status: an `applied` needs none, a `not_observed` says no receipt. */
const RECEIPT_SAYS_NOTHING: Record<Extract<VerdictWhy, { kind: 'receipt' }>['status'], string> = {
  applied: '',
  running: 'running',
  not_observed: 'no receipt for this class in this agent session',
  failed: 'failed',
  mismatch: 'mismatch',
  unverified: 'unverified',
};

/** The detail of a class whose wait ended because the agent kept its hold after `ok`. */
function holdKeptWords(cause: HoldKeptCause): string {
  return cause.kind === 'unreadable-file'
    ? visible(`the agent's capture of this build could not read ${cause.file}: nothing of this build reloaded`)
    : "the agent's scan of this build did not finish (its file watcher is not running): nothing of this build reloaded";
}

/**
 * A class file's detail after a restart, by its evidence in the new JVM (classes/evidence.ts, kind
 * `restart`) or what the disk shows of it (classes/scan.ts `sightSince`).
 */
const NEW_JVM_SIGHT = {
  gone: 'the class file is gone since the build: not proven in the new JVM',
  'other-bytes': 'the class file has other bytes than the build wrote: not proven in the new JVM',
  'pre-start': 'at its path since before the new JVM started: the bytes it loads when it loads the class (no receipt says it has)',
  receipt: 'VERIFY applied in the new agent session: the bytes it loaded',
} as const;

/**
 * The detail of a class file live without asking, by the evidence that makes it so
 * (classes/evidence.ts): at its path since before the app's JVM started, or what this agent
 * session's record shows an earlier run proved.
 */
function liveWords(evidence: { by: EvidenceKind; of?: EvidenceKind }): string {
  if (evidence.by === 'pre-start' || (evidence.by === 'recorded' && evidence.of === 'pre-start'))
    return "unchanged at this path since before the app's JVM started: the app runs these bytes (or loads them on first use), nothing to ask";
  switch (evidence.of) {
    case 'receipt':
      return 'unchanged since an earlier run in this agent session proved it (VERIFY applied these bytes then): nothing to ask';
    case 'watcher-saw':
      return "unchanged since an earlier run in this agent session found the agent's watcher saw these bytes: nothing to ask";
    default:
      return 'unchanged since an earlier run in this agent session found the JVM had not loaded the class: it loads these bytes on first use';
  }
}

/** A class new to the JVM that stays new, as listed with the class files a build added. */
export const LOADS_ON_FIRST_USE = 'new: the JVM has not loaded it (DIAGNOSE), so it loads these bytes on first use';

/** A single ask answered `not_observed` that the evidence rule does not read as live, by why (`rechecked`: bytes known live, rewritten). */
function unseenWords(why: NotLiveWhy, rechecked: boolean): string {
  switch (why.kind) {
    case 'new-not-shown':
      return NEW_NOT_SHOWN[why.because];
    case 'refused-registrations':
      return `no reload attempt, but the OS refused ${why.refused} of the agent's watch registrations (DOCTOR unwatchableDirectoryCount): it may never have seen this file, so what the app runs is unknown`;
    case 'not-attempted':
      return 'no reload attempt with these bytes in this agent session: the app still runs earlier bytes';
    case 'not-shown-watched':
      return 'no reload attempt, but nothing shows the agent has watched this folder since the app started (named or found by it, and there then): what the app runs is unknown';
    case 'loads-elsewhere':
      return why.unknown === true
        ? "no reload attempt, and the JVM may not load this file: an entry before its class output directory on the JVM's class path cannot be read, is a wildcard, or changed since the app started, so whether it holds the class is unknown: what the app runs is unknown"
        : "no reload attempt, but the JVM does not load this file (its class output directory is not on the JVM's class path, or an earlier entry there holds the class): what the app runs is not these bytes";
    case 'old-mtime':
      return `no reload attempt, but these bytes came to the file after the app started, before any run recorded the bytes it had (${WRITTEN_OUTSIDE}); the agent's watcher skips bytes it has seen, which need not be the ones the app loaded: what the app runs is unknown until the class changes or the app restarts`;
    case 'busy-before-build':
      return 'no reload attempt, but the agent had changes pending (or a hold) before this build: what the app runs is unknown';
    case 'other-copy-moved':
      return 'not proven: another class file of this binary name, in another class output directory, changed, came or went in this run, and the agent reloads the class from whichever watched file of that name changed, so its answer may come before that reload: asked again in the next run (remove the stale copy: a clean build)';
    case 'too-recent':
      return `no reload attempt, but the file changed too recently for the agent to have noticed it (its watcher may take ${seconds(why.noticeMs)}): run again then`;
    default:
      return `no reload attempt${rechecked ? ' with these bytes' : ''}, but ${evictedWords(why)}`;
  }
}

/** Why DIAGNOSE's word does not show a class new to the JVM unloaded, by what failed (classes/evidence.ts, kind `not-loaded`). */
const NEW_NOT_SHOWN = {
  'no-word': 'new to the JVM by the record, but DIAGNOSE did not say that the JVM has not loaded it: what it runs is unknown',
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

/** What writes a class file after the app started without a run recording the bytes before. */
export const WRITTEN_OUTSIDE = 'a build outside reclazz-build, an IDE, or a copy that kept an older time: cp -p, rsync -a, tar x';

/** Why a receipt may have been evicted from the agent's ledger of 512. */
function evictedWords(why: NotLiveWhy): string {
  if (why.kind !== 'receipts-unbounded' || why.counted === undefined)
    return 'the agent did not say how many classes it reloaded in this app session (HEALTH), so a receipt may have been evicted';
  const uncounted = Number.isFinite(why.uncounted)
    ? `up to ${why.uncounted} here`
    : 'and a class may have come and gone unrecorded in this app session';
  // Below the capacity by its count, the eviction can only come from what HEALTH leaves out.
  if (why.counted < why.capacity)
    return `a receipt may have been evicted: the agent counts only ${why.counted} reload attempts in this app session (it keeps ${why.capacity} receipts), but HEALTH does not count the new classes it registers as beans, ${uncounted}`;
  return `the agent made ${why.counted} reload attempts in this app session, so a receipt may have been evicted (it keeps ${why.capacity}; HEALTH does not count the new classes it registers as beans, ${uncounted})`;
}
