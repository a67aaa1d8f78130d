/**
 * `runWatch`: watch mode's core. Each cycle is a whole safe build (session/cycle.ts) under its own
 * run lock. The agent going away is news, not the end; the watch ends on the signal, on agent loss
 * with `exitOnAgentLoss`, or on a refusal a new try cannot mend (an agent too old).
 */
import path from 'node:path';
import { findClassDirs } from '../classes/dirs.js';
import type { HoldLeft } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type ResultBase, type RunResult } from '../outcome/result.js';
import { type BuildCommand, failureOutcome, type Host, hostWith, prepareBuild } from '../session/options.js';
import { reachAgents } from './apps.js';
import { WatchCycles, type WatchHooks, type WatchOptions } from './cycles.js';
import { findWatchSources, WatchPathError, type WatchSources } from './sources.js';

/** How a watch ended: the reason and exit status, and its last cycle. */
export interface WatchResult extends ResultBase {
  /** Cycles run. */
  cycles: number;
  last?: RunResult;
  owner?: string;
  /** Where the last cycle left the hold. */
  hold: HoldLeft;
}

/**
 * Watches until `hooks.signal` aborts (exit 130/143, the last cycle's outcome in `last`) or
 * another end (see the module's doc). Never throws for expected failures.
 */
export async function runWatch(options: WatchOptions, hooks: WatchHooks, base: Host): Promise<WatchResult> {
  const host = hostWith(base, options);
  const startedMs = host.clock.now();
  const ended = (outcome: Outcome, cycles = 0, last?: RunResult): WatchResult =>
    watchResult(outcome, cycles, last, host.clock.now() - startedMs);
  const prepared = await prepareBuild(options, host);
  if (prepared.kind === 'refused') return ended(prepared.outcome);
  const sources = sourcesOf(options, host);
  if (!('roots' in sources)) return ended(sources);
  const emit = hooks.onEvent ?? (() => undefined);
  for (const missing of sources.missing) emit({ type: 'warning', kind: 'missing-watch', entry: missing });
  let first;
  try {
    first = await reachAgents(options, host, hooks);
  } catch (error) {
    return ended(failureOutcome(error, emit));
  }
  if (first.kind === 'refused' || (first.kind === 'away' && options.exitOnAgentLoss)) return ended(first.outcome);
  const cycles = new WatchCycles({
    options,
    host,
    hooks,
    command: prepared.command,
    classDirs: initialClassDirs(options, host, prepared.command),
  });
  const end = await cycles.run(first, sources);
  return ended(finalOutcome(end, cycles.last), cycles.count, cycles.last);
}

/** The source folders to watch, or the usage error of a bad `--watch` entry or of nothing to watch. */
function sourcesOf(options: WatchOptions, host: Host): WatchSources | Outcome {
  try {
    const sources = findWatchSources({ projectDir: host.cwd, extra: options.watch ?? [] });
    // A missing --watch entry is watched once it exists; with none, no save could ever start a build.
    if (sources.roots.length === 0 && sources.missing.length === 0)
      return { reason: 'usage', problem: { kind: 'no-sources', projectDir: path.resolve(host.cwd) } };
    return sources;
  } catch (error) {
    if (!(error instanceof WatchPathError)) throw error;
    return { reason: 'usage', problem: { kind: 'input', text: error.message } };
  }
}

/** The class output directories to watch from the start: found ones and --classes-dir. */
function initialClassDirs(options: WatchOptions, host: Host, command: BuildCommand): string[] {
  return [...new Set([...findClassDirs(host.cwd, command.kind), ...(options.classDirs ?? [])])];
}

/**
 * The watch's outcome: what ended it; after a signal between cycles, an interrupt that names a
 * hold the last cycle left (a failed build) and how it is recovered.
 */
function finalOutcome(end: Outcome, last: RunResult | undefined): Outcome {
  if (end.reason !== 'interrupted') return end;
  if (last?.outcome.reason === 'interrupted') return last.outcome;
  if (last === undefined || last.hold === 'none' || last.owner === undefined) return end;
  // `held`: the last cycle's BUILD failed was acknowledged, so the agent keeps the hold.
  return { ...end, holdOwner: last.owner, ...(last.hold === 'held' ? { holdKept: true as const } : {}) };
}

function watchResult(outcome: Outcome, cycles: number, last: RunResult | undefined, durationMs: number): WatchResult {
  const facts = {
    cycles,
    hold: last?.hold ?? ('none' as HoldLeft),
    ...(last === undefined ? {} : { last }),
    ...(last?.owner === undefined ? {} : { owner: last.owner }),
  };
  return buildResult(outcome, facts, durationMs);
}
