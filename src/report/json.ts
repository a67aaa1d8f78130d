/**
 * `--json` output: one JSON line per event, then one `class` line per class and a `result` line.
 * Schemas: schema.ts; documented in docs/json.md.
 */
import type { BuildRun } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { Outcome, UsageProblem } from '../outcome/outcome.js';
import { buildResult, buildRunResult, type CommandResult, type JsonAction, type ResultBase, type RunResult } from '../outcome/result.js';
import { terminalSafeJson } from './palette.js';
import { describeResult } from './words.js';
import { LOADS_ON_FIRST_USE, verdictWords } from './verdict-words.js';
import { waitingWords, warningWords } from './step-words.js';
import type { classLineSchema, runResultLineSchema } from './schema.js';
import type * as z from 'zod';

/** One class in a `result` line's `classes` (and, with `type: 'class'`, one `class` line): its schema's type (schema.ts). */
export type JsonClass = Omit<z.infer<typeof classLineSchema>, 'type'>;

/** The schema's type of a `result` line, with `reason` as wide as a run result's (the schema lists those a build ends with). */
type WithRunReason<T> = Omit<T, 'reason'> & { reason: RunResult['reason'] };

/** One agent's part of a `result` line with several agents. */
export type JsonAgentResult = WithRunReason<NonNullable<z.infer<typeof runResultLineSchema>['agents']>[number]>;

/** The final line of a build's or `verify`'s `--json` output: its schema's type (schema.ts). */
export type JsonResult = WithRunReason<Omit<z.infer<typeof runResultLineSchema>, 'agents'>> & { agents?: JsonAgentResult[] };

/** One `--json` line of `value` (no newline), terminal-safe ({@link terminalSafeJson}). Every JSON line goes through here. */
export function jsonLine(value: unknown): string {
  return terminalSafeJson(JSON.stringify(value));
}

/** The JSON line for an event. */
export function eventToJson(event: RunEvent): string {
  return jsonLine(eventLine(event));
}

/**
 * The JSON object of `event`: a warning or a wait as its kind and words (`message`, `what`), the
 * fields every version wrote; every other event as it is.
 */
function eventLine(event: RunEvent): object {
  const source = event.agentSource === undefined ? {} : { agentSource: event.agentSource };
  if (event.type === 'warning') return { type: event.type, kind: event.kind, message: warningWords(event), ...source };
  if (event.type === 'waiting')
    return { type: event.type, kind: event.kind, what: waitingWords(event), elapsedMs: event.elapsedMs, ...source };
  return event;
}

/**
 * Every class of a result: verdicts, then added, removed and not-verifiable files with those
 * statuses; with several agents, each agent's, naming it.
 */
export function resultClasses(result: RunResult): JsonClass[] {
  if (result.agents !== undefined) return result.agents.flatMap((a) => ownClasses(a).map((c) => ({ ...c, agentSource: a.agentSource })));
  return ownClasses(result);
}

function ownClasses(result: Omit<RunResult, 'agents'>): JsonClass[] {
  const c = result.changes;
  const listed =
    (status: JsonClass['status'], detail: string) =>
    (change: { className: string; path: string; after?: string }): JsonClass => ({
      className: change.className,
      path: change.path,
      sha256: change.after ?? null,
      status,
      detail,
    });
  return [
    ...result.verdicts.map((v) => ({ className: v.className, path: v.path, sha256: v.sha256, status: v.status, detail: verdictWords(v) })),
    ...(c?.added.map((a) => listed('added', a.verifiable ? LOADS_ON_FIRST_USE : 'new class: nothing was loaded to replace')(a)) ?? []),
    ...(c?.removed.map(listed('removed', 'class file deleted')) ?? []),
    ...(c?.notVerifiable.map(listed('not-verifiable', 'not a name VERIFY accepts')) ?? []),
  ];
}

/** The final JSON object: outcome, exit status, owner, build status and time, and the classes. */
export function resultToJson(result: RunResult, action: 'build' | 'verify' = 'build'): JsonResult {
  const agents = result.agents?.map((a) => ({ agentSource: a.agentSource, ...resultFields(a, ownClasses(a)) }));
  return { type: 'result', action, ...resultFields(result, resultClasses(result)), ...(agents === undefined ? {} : { agents }) };
}

function resultFields(result: Omit<RunResult, 'agents'>, classes: JsonClass[]): Omit<JsonResult, 'type' | 'action' | 'agents'> {
  const c = result.changes;
  return {
    reason: result.reason,
    exitCode: result.exitCode,
    provenLive: result.provenLive,
    ...wordsOf(result),
    owner: result.owner ?? null,
    command: result.command ?? null,
    hold: result.hold,
    agent: result.agent ?? null,
    build: result.build === undefined ? null : buildFields(result.build),
    changes:
      c === undefined
        ? null
        : {
            changed: c.changed.length,
            checks: c.checks.length,
            added: c.added.length,
            removed: c.removed.length,
            notVerifiable: c.notVerifiable.length,
            resources: c.resources.length,
            total: c.total,
          },
    classes,
    resources: c?.resources ?? [],
    durationMs: result.durationMs,
    ...(result.restart === undefined ? {} : { restarted: true as const, restartSessionId: result.restart.sessionId }),
    ...holdKeptOf(result.outcome),
  };
}

/** A result line's `message` and `hint` (null when there is nothing to do): its words (words.ts `describeResult`). */
export function wordsOf(result: Parameters<typeof describeResult>[0]): { message: string; hint: string | null } {
  const { message, hint } = describeResult(result);
  return { message, hint: hint ?? null };
}

/** The `build` object: its last lines only when it failed (a passing build's result stays small). */
function buildFields(build: BuildRun): JsonResult['build'] {
  const { exitCode, durationMs, signal, output } = build;
  return { exitCode, durationMs, signal: signal ?? null, ...(exitCode !== 0 && output !== undefined ? { output } : {}) };
}

/** `holdKept` of a result whose agent kept the hold after its ok: the cause (and the file it could not read). */
function holdKeptOf(outcome: Outcome): Pick<JsonResult, 'holdKept'> {
  if (outcome.reason !== 'verify-incomplete' || outcome.shortfall.kind !== 'hold-kept') return {};
  const { cause } = outcome.shortfall;
  return { holdKept: cause.kind === 'unreadable-file' ? { cause: cause.kind, file: cause.file } : { cause: cause.kind } };
}

/** The lines that end a build's or `verify`'s `--json` output: one `class` line per class, then `result`. */
export function finalLines(result: RunResult, action: 'build' | 'verify' = 'build'): string[] {
  const json = resultToJson(result, action);
  return [...json.classes.map((c) => jsonLine({ type: 'class', ...c })), jsonLine(json)];
}

/** The final line of a subcommand's `--json` output (doctor, status, pause, resume, scan, events). */
export function commandResultToJson(result: CommandResult): Record<string, unknown> {
  const base = {
    type: 'result',
    action: result.action,
    reason: result.reason,
    exitCode: result.exitCode,
    ...wordsOf(result),
    endpoint: result.endpoint ?? null,
  };
  switch (result.action) {
    case 'doctor':
      return {
        ...base,
        doctor: result.doctor ?? null,
        classDirs: result.classDirs,
        watched: result.watched,
        watchedFrom: result.watchedFrom,
        reload: result.reload,
        durationMs: result.durationMs,
      };
    case 'status':
    case 'pause':
    case 'resume':
      return { ...base, state: result.state ?? null, durationMs: result.durationMs };
    case 'scan':
      return { ...base, sent: result.sent, delivered: result.delivered, durationMs: result.durationMs };
    case 'events':
      return { ...base, events: result.events, durationMs: result.durationMs };
  }
}

/** `Omit` over each member of a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The `--json` lines of a usage error (exit 2, nothing sent) for `action`: a `result` line
 * with reason `usage`, so that a pipeline reading stdout gets one for every run.
 * @param problem what was wrong: the text of a bad input (a string), or a {@link UsageProblem}.
 */
export function usageLines(action: JsonAction, problem: string | UsageProblem): string[] {
  const outcome: Outcome = { reason: 'usage', problem: typeof problem === 'string' ? { kind: 'input', text: problem } : problem };
  if (action === 'build' || action === 'verify') return finalLines(buildRunResult(outcome, {}, 0), action);
  const facts: DistributiveOmit<CommandResult, keyof ResultBase> =
    action === 'doctor'
      ? { action, classDirs: [], watched: [], watchedFrom: 'none' as const, reload: null }
      : action === 'scan'
        ? { action, sent: false, delivered: false }
        : action === 'events'
          ? { action, events: 0 }
          : { action };
  return [jsonLine(commandResultToJson(buildResult(outcome, facts, 0)))];
}
