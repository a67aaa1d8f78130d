/**
 * The words of a result (outcome/result.ts), which carries facts only: its outcome's words
 * (words.ts), and with several agents which agent's they are. The terminal, the JSON `result`
 * line and the library's callers all read them from here.
 */
import { decidingAgent, type ResultBase, type RunResult, type Words } from '../outcome/result.js';
import { visible } from './palette.js';
import { describeOutcome } from './words.js';

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
