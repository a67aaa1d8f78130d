/** The result of a cycle, or of a session that ended before one: its outcome, words and facts. */
import { holdLeft } from '../hold/machine.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildRunResult, type RunFacts, type RunResult } from '../outcome/result.js';
import { describeOutcome } from '../report/words.js';
import { describeCommand, type BuildCommand } from '../tool/resolve.js';
import type { Session } from './session.js';

/** What a result knows of the session and the command, besides its own facts. */
export interface ResultContext {
  session?: Pick<Session, 'agent' | 'owner' | 'hold'>;
  command?: BuildCommand;
  /** `clock.now()` when the run or cycle started. */
  startedMs: number;
  now: () => number;
}

/** The result of `outcome` in `context`. */
export function runResult(context: ResultContext, outcome: Outcome, facts: RunFacts = {}): RunResult {
  const { session, command } = context;
  return buildRunResult(
    outcome,
    describeOutcome(outcome),
    {
      hold: session?.hold === undefined ? 'none' : holdLeft(session.hold.state),
      ...(session?.agent === undefined ? {} : { agent: session.agent }),
      ...(session?.owner === undefined ? {} : { owner: session.owner.owner }),
      ...(command === undefined ? {} : { command: describeCommand(command) }),
      ...facts,
    },
    context.now() - context.startedMs,
  );
}
