/**
 * The one exit-status table: the status each reason exits with, and what each status means
 * per kind of command. `--help` is written from it (report/shortfall-words.ts) and so is the README's
 * exit-status table (`npm run docs`; test/outcome/exit.test.ts checks it is up to date).
 * Kept free of imports that cost start-up time: `--help` reads it.
 */
import type { Outcome, Reason } from './outcome.js';
import type { StopSignal } from './facts.js';

/** Exit status for a usage error; nothing was sent. */
export const EXIT_USAGE = 2;
/** Exit status for refusals: the build never ran (EX_UNAVAILABLE). */
export const EXIT_REFUSED = 69;
/** Exit status when the build ran but the hold was not completed safely, or a bug (EX_SOFTWARE). */
export const EXIT_NOT_SAFE = 70;
/** Exit status when the build is ok but not every class file is proven live, or some could not be checked (EX_TEMPFAIL). */
export const EXIT_UNPROVEN = 75;
/** Exit status when the build command exists but may not be executed (the shell's convention). */
export const EXIT_NOT_EXECUTABLE = 126;
/** Exit status when the build command does not exist (the shell's convention). */
export const EXIT_COMMAND_NOT_FOUND = 127;
/** Exit status after a handled signal: 128+N, as a shell reports it. */
export const EXIT_SIGNALLED: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

/** A reason's exit status: a number, the build's own status (`build`), or 128+N of the signal (`signal`). */
type ExitRule = number | 'build' | 'signal';

/** Every reason's exit status. */
export const REASON_EXIT: Readonly<Record<Reason, ExitRule>> = {
  ok: 0,
  'no-agent-build': 0,
  'stream-ended': 0,
  'build-failed': 'build',
  usage: EXIT_USAGE,
  nested: EXIT_REFUSED,
  'no-agent': EXIT_REFUSED,
  'ambiguous-agent': EXIT_REFUSED,
  'bad-port-file': EXIT_REFUSED,
  'lock-busy': EXIT_REFUSED,
  'stale-port': EXIT_REFUSED,
  handshake: EXIT_REFUSED,
  'old-agent': EXIT_REFUSED,
  'agent-not-ready': EXIT_REFUSED,
  unsupported: EXIT_REFUSED,
  'hold-busy': EXIT_REFUSED,
  'no-receipt': EXIT_REFUSED,
  'agent-disconnected': EXIT_REFUSED,
  'unexpected-receipt': EXIT_REFUSED,
  'state-error': EXIT_REFUSED,
  'not-safe': EXIT_NOT_SAFE,
  'internal-error': EXIT_NOT_SAFE,
  'verify-incomplete': EXIT_UNPROVEN,
  'doctor-findings': EXIT_UNPROVEN,
  'command-not-executable': EXIT_NOT_EXECUTABLE,
  'command-not-found': EXIT_COMMAND_NOT_FOUND,
  interrupted: 'signal',
};

/** The exit status of `outcome`. */
export function exitStatus(outcome: Outcome): number {
  const rule = REASON_EXIT[outcome.reason];
  if (rule === 'build') return outcome.reason === 'build-failed' ? outcome.status : 1;
  if (rule === 'signal') return outcome.reason === 'interrupted' ? EXIT_SIGNALLED[outcome.signal] : EXIT_SIGNALLED.SIGINT;
  return rule;
}

/** True when `outcome` proves every class file live by evidence (or there was nothing to prove). */
export function provesLive(outcome: Outcome): boolean {
  if (outcome.reason !== 'ok' || !('proof' in outcome)) return false;
  const { kind } = outcome.proof;
  return kind === 'proven' || kind === 'nothing-to-prove' || kind === 'none-verifiable' || kind === 'restarted';
}

/** One row of the table: a status and what it means for a build, for `verify`, and for the other subcommands. */
export interface ExitRow {
  /** `0`, `N` (the build's own), `130 / 143` (the signals), or a number. */
  status: string;
  rule: ExitRule;
  build: string;
  verify?: string;
  agent?: string;
}

/** What each exit status means, by kind of command (the README's exit-status table, `--help`). */
export const EXIT_TABLE: readonly ExitRow[] = [
  {
    status: '0',
    rule: 0,
    build:
      'build ok and acknowledged; every class file is live by evidence: VERIFY applied, unchanged since the app started, new, or identical bytes, or proven after a restart (--restart-command, --await-restart); or --no-verify, which proves nothing',
    verify: 'every class given is live: applied, or unchanged since the app started',
    agent: 'done: the receipt came and says what was asked (events: the agent closed the stream)',
  },
  {
    status: 'N',
    rule: 'build',
    build: 'the build failed with status N (killed by a signal: 128+N) and BUILD failed was acknowledged',
  },
  {
    status: '2',
    rule: EXIT_USAGE,
    build: 'usage error, invalid config, or a working directory that no longer exists; nothing was sent',
    verify: 'same',
    agent: 'same',
  },
  {
    status: '69',
    rule: EXIT_REFUSED,
    build:
      'refused: no agent, bad or stale port file, handshake, old agent, missing or rejected BUILD started receipt, hold or lock busy, a state file in .reclazz/ that cannot be written; the build never ran',
    verify: 'refused: no agent, handshake, old agent, agent not ready, VERIFY not supported',
    agent: 'refused or UNCERTAIN: no agent, stale port file, handshake, old agent, or the receipt never came',
  },
  {
    status: '70',
    rule: EXIT_NOT_SAFE,
    build:
      'not completed safely: the build ran but a finish receipt was lost or the agent went away; or an internal error (a bug: BUILD failed is sent first if the hold may be ours)',
  },
  {
    status: '75',
    rule: EXIT_UNPROVEN,
    build:
      "build ok, but not every class file is proven live: not applied by the deadline, the agent's file watcher not running (the hold left with the run's owner), a restart required (or a restart that failed, did not come back, or cannot be proven from here), or not checked (no class output directory, unreadable files or folders)",
    verify: 'not every class was proven live (a restart required, not applied by the deadline)',
    agent:
      "doctor: something here keeps classes from being proven (a class output directory NOT watched, reloads paused, a hold that is not this checkout's, the watcher not running)",
  },
  { status: '126', rule: EXIT_NOT_EXECUTABLE, build: 'the build command exists but is not executable (chmod +x); nothing was sent' },
  { status: '127', rule: EXIT_COMMAND_NOT_FOUND, build: 'the build command was not found; nothing was sent' },
  { status: '130 / 143', rule: 'signal', build: 'interrupted (SIGINT / SIGTERM)', verify: 'same', agent: 'same' },
];

/** The reasons that exit with `row`'s status. */
export function reasonsOf(row: ExitRow): Reason[] {
  return (Object.keys(REASON_EXIT) as Reason[]).filter((reason) => REASON_EXIT[reason] === row.rule);
}

/** The signal an AbortSignal was aborted with (the CLI aborts with `'SIGINT'` or `'SIGTERM'`); SIGINT for any other reason. */
export function signalOf(signal: AbortSignal | undefined): StopSignal {
  return signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
}
