/** The words of a build over several agents: all proven, or which agent refused and how to pick some. */
import type { Words } from '../outcome/result.js';
import { visible } from './visible.js';

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
