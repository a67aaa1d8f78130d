/**
 * A watch's app whose agent went away (the app stopped, was killed, or restarts): it stays in the
 * watch's view, and what it runs is not proven while it is gone. What it owes is read from its own
 * record, as a cycle's baseline reads it (classes/baseline.ts; a file the record has no row for, by
 * its age against that JVM's start): the class files of the class output directories it runs whose
 * bytes are not shown live in its JVM. group.ts `proveReturn` proves them in the new JVM when the
 * app is back.
 */
import { baselineOf } from '../classes/baseline.js';
import { jvmPathsOf, runsFrom } from '../classes/coverage.js';
import { verdictOf } from '../classes/evidence.js';
import { afterBuildFacts } from '../classes/file-facts.js';
import { detectChanges } from '../classes/snapshot.js';
import type { AppStart, ClassVerdict } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import type { AgentRunResult, RunResult } from '../outcome/result.js';
import type { BuildCommand } from '../tool/resolve.js';
import { classDirsOf } from './cycle.js';
import { type BuildSession, type CycleOptions, runResult } from './options.js';
import { recordAt } from './proof.js';

/** A watch's app whose agent is gone. */
export interface AwayApp {
  /** Its last session: its agent, what it watches and loads (`view`), its record. Closed. */
  session: BuildSession;
  /** When its agent went away. */
  since: Date;
  /** When its JVM started, as seen while it ran (a killed JVM's is gone). */
  start: AppStart;
}

/**
 * The class output directories found for `session`'s app (as a cycle finds them, without its
 * warnings) that it runs (coverage.ts `runsFrom`).
 */
export function dirsRunBy(session: BuildSession, command: BuildCommand, options: CycleOptions): string[] {
  const found = classDirsOf({ session, command, options }, false).now();
  return found.filter((dir) => runsFrom(session.view, dir));
}

/**
 * What the app of `app` owes in `dirs`: each class file whose bytes are not shown live in its agent
 * session, by its record or, without a row, by its age against its JVM's start (changed since, never
 * proven), as a verdict not proven (`connection-lost`). Reads, never writes, the record. Never
 * throws for the file system.
 */
export async function owedBy(app: AwayApp, dirs: readonly string[]): Promise<ClassVerdict[]> {
  if (dirs.length === 0) return [];
  const { session } = app;
  const record = recordAt(session.state, (problem) => session.emit({ type: 'warning', kind: 'state-file', problem }));
  const paths = jvmPathsOf(session.view, session.checkout);
  const { baseline } = await baselineOf(record, dirs, session.agent.sessionId, app.start, paths);
  const { changes } = await detectChanges(baseline, dirs, {
    judge: (file) => verdictOf(afterBuildFacts(file, Number.POSITIVE_INFINITY)),
  });
  return [...changes.changed, ...changes.checks, ...changes.added]
    .filter((c) => c.verifiable && c.after !== undefined)
    .map((c) => ({
      className: c.className,
      path: c.path,
      sha256: c.after!,
      status: 'connection-lost' as const,
      why: { kind: 'away' as const },
    }));
}

/**
 * The part of `app` in a cycle (or at its return) that started at `startedMs`: not proven for the
 * classes it owes (`owed`, from {@link owedBy}), naming it. Undefined when it owes none.
 */
export function awayPart(app: AwayApp, owed: ClassVerdict[], command: BuildCommand, startedMs: number): RunResult | undefined {
  if (owed.length === 0) return undefined;
  const { session } = app;
  const { portFile, source } = session.location;
  const since = app.since.toISOString();
  const outcome: Outcome = {
    reason: 'verify-incomplete',
    applied: 0,
    total: owed.length,
    shortfall: { kind: 'app-gone', classes: owed.length, source, since, ...(portFile === undefined ? {} : { portFile }) },
  };
  const context = { session: { agent: session.agent }, command, startedMs, now: () => session.host.clock.now() };
  return runResult(context, outcome, { verdicts: owed });
}

/** The parts of the apps whose agent is gone (`away`) in a cycle that started at `startedMs`, each naming its source: those that owe classes. */
export async function awayParts(
  away: readonly AwayApp[],
  command: BuildCommand,
  options: CycleOptions,
  startedMs: number,
): Promise<AgentRunResult[]> {
  const parts: AgentRunResult[] = [];
  for (const app of away) {
    const owed = await owedBy(app, dirsRunBy(app.session, command, options));
    const part = awayPart(app, owed, command, startedMs);
    if (part !== undefined) parts.push({ ...part, agentSource: app.session.location.source });
  }
  return parts;
}
