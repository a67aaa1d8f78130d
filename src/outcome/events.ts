/**
 * What a build (and `verify`) reports while it runs, in the order it happens. The core never
 * prints: report/ renders these as text or JSON lines. Times in ms.
 */
import type { AgentInfo } from './facts.js';

/**
 * Events in the order a run emits them. With several agents, an event of one agent's session
 * names it in `agentSource` (its `source`: the port file's path).
 */
export type RunEvent = RunEventBody & { agentSource?: string };

/** What each event says. */
type RunEventBody =
  | { type: 'agent'; agent: AgentInfo }
  | { type: 'warning'; message: string }
  | { type: 'waiting'; what: string; elapsedMs: number }
  /** `recovers`: the agent still holds the build an earlier run with this owner token left held (a failed build): this one recovers it. */
  | { type: 'hold'; owner: string; ownerSource: 'option' | 'saved' | 'new'; recovers: boolean }
  /**
   * Class output directories taken from the agent's watched directories (translated by
   * --path-map) because discovery did not find them (`fromAgent`), and its watched directories
   * that do not exist here (`missing`). `--verbose` shows it.
   */
  | { type: 'agent-dirs'; fromAgent: string[]; missing: string[] }
  /** `movedFrom`: the folder the run started in, when the build runs in `cwd` instead (`mvn` where the pom.xml is). */
  | { type: 'build-start'; command: string; wrapper: boolean; cwd: string; movedFrom?: string; classDirs: string[]; held: boolean }
  | { type: 'build-end'; exitCode: number; durationMs: number; signal?: string }
  | { type: 'finish'; state: 'ok' | 'failed'; acknowledged: boolean }
  /** `checks`: class files there before this build that no record shows live, asked once. */
  | { type: 'changes'; changed: number; checks: number; added: number; removed: number; notVerifiable: number; total: number }
  | { type: 'verify-progress'; final: number; applied: number; total: number }
  | { type: 'agent-event'; level: string; message: string }
  /**
   * A cycle ended with `classes` (binary names) needing an app restart: the run restarts the app
   * with `command`, or (null) waits for the user to, for at most `timeoutMs` (session/restart.ts).
   */
  | { type: 'restart-needed'; classes: string[]; command: string | null; timeoutMs: number }
  /** The restart command ended with `exitCode` (128+N for a signal) after `durationMs`. */
  | { type: 'restart'; command: string; exitCode: number; durationMs: number };

/** The agent's own event levels a run shows while it waits (marked as the agent's; `--quiet` hides them). */
export const SHOWN_AGENT_LEVELS: ReadonlySet<string> = new Set(['RELOAD', 'STRUCTURAL_RELOAD', 'COMPILE', 'WARN', 'ERROR']);
