/** The result of a cycle, or of a session that ended before one: its outcome, words and facts. */
import { holdLeft } from '../hold/hold.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildRunResult, type AgentRunResult, type RunFacts, type RunResult } from '../outcome/result.js';
import { describeAgents, describeAmong, describeOneOf } from '../report/shortfall-words.js';
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

/**
 * The result of a cycle over several agents (see `RunResult.agents`): the deciding agent's
 * outcome and exit status, the words for every agent, and every agent's verdicts.
 * @param durationMs how long the run took, in ms.
 */
export function combineResults(agents: AgentRunResult[], durationMs: number): RunResult {
  const deciding = agents.find((a) => a.exitCode !== 0) ?? agents.find((a) => !a.provenLive) ?? agents[0]!;
  const provenLive = agents.every((a) => a.provenLive);
  const words = describeAgents(
    agents.map((a) => ({ source: a.agentSource, exitCode: a.exitCode, provenLive: a.provenLive, message: a.message })),
  );
  const { agentSource: _source, changes: _changes, hint, ...rest } = deciding;
  return {
    ...rest,
    message: words.message,
    ...(hint === undefined ? {} : { hint }),
    verdicts: agents.flatMap((a) => a.verdicts),
    provenLive,
    agents,
    durationMs: Math.max(0, Math.round(durationMs)),
  };
}

/** `result`, a refusal by the agent of `source`, in words that name every agent of the run (`sources`). */
export function refusedAmong<R extends RunResult>(result: R, source: string, sources: readonly string[]): R {
  const { hint: _hint, ...rest } = result;
  const words = describeAmong(source, sources, { message: result.message, ...(result.hint === undefined ? {} : { hint: result.hint }) });
  return { ...rest, message: words.message, ...(words.hint === undefined ? {} : { hint: words.hint }) } as R;
}

/** `result`, of the agent of `source` in a run over several agents, in words that name that agent. */
export function ofAgent<R extends RunResult>(result: R, source: string): R {
  const { hint: _hint, ...rest } = result;
  const words = describeOneOf(source, { message: result.message, ...(result.hint === undefined ? {} : { hint: result.hint }) });
  return { ...rest, message: words.message, ...(words.hint === undefined ? {} : { hint: words.hint }) } as R;
}
