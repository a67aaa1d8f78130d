/**
 * `--json` output: one JSON object per line on stdout, one per event, then a final `result`
 * object. The shape is documented in the README ("JSON output") and checked by
 * `test/cli/json.test.ts`.
 */
import type { RunEvent, RunResult } from '../events.js';

/** The final line of `--json` output. */
export interface JsonResult {
  type: 'result';
  reason: RunResult['reason'];
  exitCode: number;
  provenLive: boolean;
  message: string;
  hint: string | null;
  owner: string | null;
  command: string | null;
  hold: RunResult['hold'];
  agent: RunResult['agent'] | null;
  build: { exitCode: number; durationMs: number; signal: string | null } | null;
  changes: { changed: number; added: number; removed: number; notVerifiable: number; total: number } | null;
  classes: Array<{ className: string; path: string; sha256: string | null; status: string; detail: string }>;
  durationMs: number;
}

/** The JSON line for an event. */
export function eventToJson(event: RunEvent): string {
  return JSON.stringify(event);
}

/**
 * The final JSON object: outcome, exit status, owner, build status and time, and one entry per
 * class (verdicts, then added, removed and not-verifiable files with those statuses).
 */
export function resultToJson(result: RunResult): JsonResult {
  const c = result.changes;
  const listed = (status: string, detail: string) => (change: { className: string; path: string; after?: string }) => ({
    className: change.className,
    path: change.path,
    sha256: change.after ?? null,
    status,
    detail,
  });
  return {
    type: 'result',
    reason: result.reason,
    exitCode: result.exitCode,
    provenLive: result.provenLive,
    message: result.message,
    hint: result.hint ?? null,
    owner: result.owner ?? null,
    command: result.command ?? null,
    hold: result.hold,
    agent: result.agent ?? null,
    build: result.build === undefined ? null : { exitCode: result.build.exitCode, durationMs: result.build.durationMs, signal: result.build.signal ?? null },
    changes:
      c === undefined
        ? null
        : { changed: c.changed.length, added: c.added.length, removed: c.removed.length, notVerifiable: c.notVerifiable.length, total: c.total },
    classes: [
      ...result.verdicts.map((v) => ({ className: v.className, path: v.path, sha256: v.sha256, status: v.status, detail: v.detail })),
      ...(c?.added.map(listed('added', 'new class: nothing was loaded to replace')) ?? []),
      ...(c?.removed.map(listed('removed', 'class file deleted')) ?? []),
      ...(c?.notVerifiable.map(listed('not-verifiable', 'not a name VERIFY accepts')) ?? []),
    ],
    durationMs: result.durationMs,
  };
}
