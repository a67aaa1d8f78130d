/** What a watch is given (watch/loop.ts `runWatch`) and what it tells as it goes. */
import type { RunEvent } from '../outcome/events.js';
import type { ToolKind } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import type { CycleOptions, HostOverrides, SessionOptions } from '../session/options.js';
import type { RestartOptions } from '../session/restart.js';
import type { EndLine, NewsLine } from './lines.js';

/** Options of `runWatch`. Times in ms. */
export interface WatchOptions extends SessionOptions, Omit<CycleOptions, 'changedFolders'>, HostOverrides, RestartOptions {
  tool: ToolKind;
  /** The quiet period after a change before a cycle starts (default 300). */
  debounceMs?: number;
  /** More folders or files to watch (`--watch`), relative to the project unless absolute. */
  watch?: readonly string[];
  /** End the watch when the agent goes away (default: keep watching and reconnect). */
  exitOnAgentLoss?: boolean;
  /** Pauses between tries to reach the agent again (default link.ts RECONNECT_MS). */
  reconnect?: { first: number; max: number };
}

/** What a watch tells as it goes, and who may stop it. */
export interface WatchHooks {
  /** The events of each cycle, as a single run emits them. */
  onEvent?: (event: RunEvent) => void;
  /** A cycle starts: its number, the source paths that changed, and its start line. */
  onCycleStart?: (start: { cycle: number; changed: readonly string[]; line: string }) => void;
  /** A cycle ended: its whole result, its end line. */
  onCycleEnd?: (end: { cycle: number; changed: readonly string[]; result: RunResult; end: EndLine; line: string }) => void;
  /** News between cycles (the agent lost or back, the watch started). */
  onNews?: (news: NewsLine, line: string) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop (a running build is stopped and `failed` sent). */
  signal?: AbortSignal;
}
