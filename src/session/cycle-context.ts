/**
 * What the steps of one cycle share (cycle.ts, check.ts), and how a cycle's result is made.
 */
import type { OwnerRecord } from '../hold/owner.js';
import { mayBeOurs } from '../hold/hold.js';
import { signalOf } from '../outcome/exit.js';
import type { InterruptPoint, Outcome } from '../outcome/outcome.js';
import type { RunFacts, RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import { StateError } from '../state/store.js';
import type { BuildCommand } from '../tool/resolve.js';
import type { CycleOptions } from './options.js';
import { runResult } from './result.js';
import type { Session } from './session.js';

/** A session that builds: opened with `builds` (owner and hold chosen, DOCTOR asked). */
export type BuildSession = Session & Required<Pick<Session, 'owner' | 'hold' | 'agent' | 'doctor' | 'view'>>;

/** What the steps of one cycle share. */
export interface Cycle {
  session: BuildSession;
  command: BuildCommand;
  options: CycleOptions;
  /** `clock.now()` when the cycle (or the run it belongs to) started. */
  startedMs: number;
  record: OwnerRecord;
  /** With several agents: of the class output directories found, those this agent checks. */
  dirsFor?: (dirs: string[]) => string[];
  /**
   * The agent's file watcher was still starting, so no hold was taken (a hold then keeps the
   * build's classes back after BUILD ok): the build runs unheld, and no BUILD ok or failed is sent.
   */
  unheld?: boolean;
  /** A hold existed before this cycle took it (ours from a failed build, or named when the session opened): its output is held too. */
  holdBefore?: boolean;
  /** The class file the agent's capture of this build said it could not read, from before `ok` on (capture-watch.ts). */
  readFailure?: () => string | undefined;
}

/** The result of `outcome` at the end of this cycle. */
export function end(cycle: Cycle, outcome: Outcome, facts: RunFacts = {}): RunResult {
  return runResult(
    { session: cycle.session, command: cycle.command, startedMs: cycle.startedMs, now: () => cycle.session.host.clock.now() },
    outcome,
    facts,
  );
}

/** The interrupt outcome at `at`, naming the owner while the hold may be ours. */
export function interrupted(cycle: Cycle, at: InterruptPoint, facts: RunFacts = {}): RunResult {
  const hold = cycle.session.hold;
  const holdOwner = mayBeOurs(hold.state) ? { holdOwner: hold.owner, ...(hold.state === 'left' ? { holdKept: true as const } : {}) } : {};
  return end(cycle, { reason: 'interrupted', signal: signalOf(cycle.session.signal), at, ...holdOwner }, facts);
}

/** Writes state after `BUILD ok` was acknowledged: a failure there only means the next run checks more, so it is a warning. */
export function saveAfterOk(session: Session, write: () => void): void {
  try {
    write();
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    session.emit({ type: 'warning', message: warningText.notSaved(error.message) });
  }
}
