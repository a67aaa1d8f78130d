/**
 * The lines `reclazz-build watch` prints for its cycles: a local `HH:MM:SS` clock, then a mark an
 * editor's background problem matcher keys on. `▶` starts a cycle; `✔`, `⚠` and `✖` end one; `•`
 * is news between cycles. The patterns allow SGR colour codes around the clock and the mark.
 * The marks, sample lines and a VS Code task using these patterns: docs/editors.md.
 */
import path from 'node:path';
import { LIVE_VERDICTS } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import type { CycleEnd, WatchNews } from '../outcome/watch.js';
import { visible } from './palette.js';
import { describeOutcome, describeResult } from './words.js';

const SGR = '(?:\\u001b\\[[0-9;]*m)*';
const CLOCK = `^${SGR}\\d\\d:\\d\\d:\\d\\d${SGR} ${SGR}`;

/**
 * The source of the regular expression that matches a cycle's start line, for `beginsPattern`.
 * @internal for its tests
 */
export const CYCLE_BEGINS_PATTERN = `${CLOCK}▶${SGR} building`;
/**
 * The source of the regular expression that matches a cycle's end line, for `endsPattern`.
 * @internal for its tests
 */
export const CYCLE_ENDS_PATTERN = `${CLOCK}[✔⚠✖]${SGR} \\S`;

/**
 * The local time of `at` as `HH:MM:SS`.
 * @internal for its tests
 */
export function clock(at: Date): string {
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** A cycle's start. */
export interface StartLine {
  at: Date;
  /** How many source paths changed (0 for a cycle started for another reason). */
  changed: number;
}

/** `12:04:29 ▶ building (2 sources changed)`. */
export function cycleStartLine(start: StartLine): string {
  const what = start.changed === 0 ? '' : ` (${count(start.changed, 'source', 'sources')} changed)`;
  return `${clock(start.at)} ▶ building${what}`;
}

/** Times of a cycle that ran its build, in ms. */
interface CycleTimes {
  /** From the cycle's start to its verdict. */
  totalMs: number;
  /** The build command's own time (undefined: no build ran, the proof in an app that came back). */
  buildMs?: number;
  /** Asking the agent to verify the changed classes (0 when nothing was verified). */
  verifyMs: number;
}

/**
 * How a cycle ended, for its end line. `returned`: the cycle is the proof in an app that came back
 * after its agent was gone (its port file when the watch has several apps, else `the app`).
 */
export type EndLine =
  /** The build passed and every changed class is proven live (exit 0); `classes` may be 0. */
  | ({ kind: 'live'; at: Date; classes: number; holdRecovered?: boolean; restarted?: boolean; returned?: string } & CycleTimes)
  /** The build passed but some changed classes were not proven live (exit 75 and the like). */
  | ({
      kind: 'not-proven';
      at: Date;
      live: number;
      notProven: number;
      exitCode: number;
      holdRecovered?: boolean;
      returned?: string;
    } & CycleTimes)
  /** The build command failed; `holding` when the agent still holds its reloads for us. */
  | { kind: 'build-failed'; at: Date; exitCode?: number; signal?: string; holding: boolean }
  /** The cycle was interrupted (Ctrl-C, SIGTERM). */
  | { kind: 'interrupted'; at: Date; signal: string; exitCode: number }
  /** Any other failure: `summary` is one plain sentence of what happened, without a final period. */
  | { kind: 'failed'; at: Date; summary: string; exitCode: number };

/** The line that ends a cycle; examples in docs/editors.md. */
export function cycleEndLine(end: EndLine): string {
  const at = clock(end.at);
  switch (end.kind) {
    case 'live': {
      const what = end.classes === 0 ? 'no class changed' : `${count(end.classes, 'class', 'classes')} live`;
      const restarted = end.returned !== undefined ? [backIn(end.returned)] : end.restarted ? ['after an app restart'] : [];
      const extra = [...(end.holdRecovered ? ['hold recovered'] : []), ...restarted];
      return `${at} ✔ ${what} in ${duration(end.totalMs)} (${times(end, extra)})`;
    }
    case 'not-proven': {
      const extra = [
        `exit ${end.exitCode}`,
        ...(end.holdRecovered ? ['hold recovered'] : []),
        ...(end.returned === undefined ? [] : [backIn(end.returned)]),
      ];
      return `${at} ⚠ ${count(end.live, 'class', 'classes')} live, ${end.notProven} not proven in ${duration(end.totalMs)} (${times(end, extra)})`;
    }
    case 'build-failed': {
      const status = end.signal !== undefined ? `signal ${visible(end.signal)}` : `exit ${end.exitCode ?? 'unknown'}`;
      return `${at} ✖ build failed (${status}): ${end.holding ? 'the agent keeps holding; fix and save' : 'fix and save'}`;
    }
    case 'interrupted':
      return `${at} ✖ interrupted by ${visible(end.signal)} (exit ${end.exitCode})`;
    case 'failed':
      return `${at} ✖ ${visible(end.summary)} (exit ${end.exitCode})`;
  }
}

/** A `•` line: neither starts nor ends a cycle. */
export function newsLine(news: WatchNews): string {
  const at = clock(news.at);
  const named = [
    ...('source' in news && news.source !== undefined ? [visible(news.source)] : []),
    ...('pid' in news && news.pid !== undefined ? [`pid ${news.pid}`] : []),
  ];
  const pid = named.length === 0 ? '' : ` (${named.join(', ')})`;
  switch (news.kind) {
    case 'agent-lost':
      return `${at} • agent lost${news.source === undefined ? '' : ` (${visible(news.source)})`}: still watching sources; reconnecting when it is back`;
    case 'no-agent-yet':
      return `${at} • no agent yet (${visible(sentence(describeOutcome(news.why).message))}): watching sources; connecting when it is there`;
    case 'agent-back':
      return `${at} • agent reconnected${pid}`;
    case 'new-app-session':
      return news.restarted === true
        ? `${at} • new app session${pid}: the app restarted for the last build's change (its line above says what was proven there); watching its new JVM`
        : `${at} • new app session${pid}: classes are proven again from scratch`;
    case 'agent-found':
      return `${at} • agent found${pid}: its app is in view too; every build holds its agent`;
    case 'agent-stopped':
      return `${at} • agent stopped${pid}: its port file is gone, so its app leaves the view until an agent writes it again`;
    case 'watching':
      return `${at} • watching ${count(news.folders.length, 'folder', 'folders')}${folderNames(news.folders, news.from)} (debounce ${news.debounceMs} ms); save a source to build`;
  }
}

/** The first folders watched, relative to `from`, and how many more: the user sees whether the watch took the right ones. */
function folderNames(folders: readonly string[], from: string): string {
  const shown = folders.slice(0, WATCHED_NAMED).map((folder) => visible(path.relative(from, folder) || '.'));
  const more = folders.length - shown.length;
  return shown.length === 0 ? '' : `: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** How many watched folders the start line names. */
const WATCHED_NAMED = 4;

/** The words of a cycle that is the proof in an app that came back. */
function backIn(returned: string): string {
  return `in the new JVM of ${visible(returned)}`;
}

function times(t: CycleTimes, extra: string[]): string {
  const parts = [
    ...(t.buildMs === undefined ? [] : [`build ${duration(t.buildMs)}`]),
    ...(t.verifyMs > 0 ? [`verify ${duration(t.verifyMs)}`] : []),
  ];
  return [...(parts.length === 0 ? [] : [parts.join(', ')]), ...extra].join('; ');
}

/** `40 ms` below a second, else `1.9 s`. */
function duration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  return whole < 1000 ? `${whole} ms` : `${(whole / 1000).toFixed(1)} s`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** How a cycle's result reads as its end line: one home for the mapping. */

/**
 * The end line of `result`, ended as `end` says (when; whether the hold was recovered; whether
 * it is the proof in an app that came back, see {@link EndLine}).
 */
export function endLineOf(result: RunResult, end: CycleEnd): EndLine {
  const { at, heldBefore, returned } = end;
  const times = {
    totalMs: result.durationMs,
    ...(returned === undefined ? { buildMs: result.build?.durationMs ?? 0 } : {}),
    verifyMs: result.verify?.elapsedMs ?? 0,
  };
  const recovered = heldBefore && result.hold === 'none' ? { holdRecovered: true } : {};
  const back = returned === undefined ? {} : { returned };
  const live = result.verdicts.filter((v) => LIVE_VERDICTS.has(v.status)).length + (result.changes?.added.length ?? 0);
  const outcome = result.outcome;
  switch (outcome.reason) {
    case 'ok':
      if (result.provenLive)
        return {
          kind: 'live',
          at,
          classes: live,
          ...times,
          ...recovered,
          ...(result.restart === undefined ? {} : { restarted: true }),
          ...back,
        };
      return {
        kind: 'not-proven',
        at,
        live,
        notProven: result.changes?.changed.length ?? 0,
        exitCode: result.exitCode,
        ...times,
        ...recovered,
        ...back,
      };
    case 'verify-incomplete': {
      const notProven = result.verdicts.length - result.verdicts.filter((v) => LIVE_VERDICTS.has(v.status)).length;
      if (notProven > 0) return { kind: 'not-proven', at, live, notProven, exitCode: result.exitCode, ...times, ...recovered, ...back };
      return { kind: 'failed', at, summary: sentence(describeResult(result).message), exitCode: result.exitCode };
    }
    case 'build-failed':
      return {
        kind: 'build-failed',
        at,
        exitCode: outcome.status,
        ...(result.build?.signal === undefined ? {} : { signal: result.build.signal }),
        holding: result.hold === 'held',
      };
    case 'interrupted':
      return { kind: 'interrupted', at, signal: outcome.signal, exitCode: result.exitCode };
    default:
      return { kind: 'failed', at, summary: sentence(describeResult(result).message), exitCode: result.exitCode };
  }
}

/** `message` without its final period. */
function sentence(message: string): string {
  return message.replace(/\.\s*$/, '');
}
