/**
 * The DOCTOR observation (protocol.md, "DOCTOR"; "Commands": early in agent start-up), as the
 * agent's DoctorReport.snapshot and FileWatcher.doctorEvidence build it: the watched directories
 * are the watcher's registrations (every folder under a root is one), sorted in String order,
 * of which the first 8 of at most 256 characters are the sample.
 */
import type { Hostility } from './hostile.js';
import type { DoctorStringField, HoldKind, JavaFacts } from './types.js';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Receipt } from './ledger.js';
import type { PathReporter } from './paths.js';

/** At most this many sampled watched directories. */
const SAMPLE_DIRS = 8;
/** A watched directory longer than this (characters) is left out of the sample. */
const SAMPLE_PATH_CHARS = 256;
/** A string field longer than this (characters) makes the observation unavailable. */
const STRING_CHARS = 512;
/** An observation JSON longer than this (characters) is unavailable, so the 4096-character message cut never hits it. */
const JSON_CHARS = 3900;

/**
 * How far the agent's start-up wiring has got (agent ReclazzAgent.initialize): nothing but the
 * status server, then VERIFY (and DIAGNOSE, SCAN, HEALTH), then the owned BUILD listener, DOCTOR's
 * hold view and RELOAD together.
 */
export type Wiring = 'none' | 'verify' | 'all';

/** The watcher's state as DOCTOR reports it once everything is wired (agent FileWatcher.doctorEvidence): `stopped` once its loop ended. */
export type WatcherState = 'starting' | 'watching' | 'stopped';

/** What DOCTOR reports; paths are already as the agent reports them. */
export interface DoctorFacts {
  wiring: Wiring;
  /** The watcher's state once everything is wired: `starting` until it has registered its directories. */
  watcher: WatcherState;
  sessionId: string;
  agentVersion: string;
  /** The Java it reports; its VM name is marked as the fake agent's. */
  java: JavaFacts;
  pid: string;
  workingDirectory: string;
  buildHold: HoldKind;
  /** The watcher's registrations that exist, as reported, in any order (empty before it registered anything). */
  registered: string[];
  /** Report `watchSampleTruncated` true whatever the sample. */
  forceTruncated: boolean;
  /** Registrations the OS refused (FileWatcher: DOCTOR's `unwatchableDirectoryCount`). */
  refused: number;
}

/**
 * `DOCTOR_RESULT` JSON for `token`: the observed fields in the agent's order, or "unavailable"
 * when a string field is over 512 characters or the whole over 3900; the starting shapes while
 * not all is wired.
 */
export function doctorJson(token: string, facts: DoctorFacts, hostile: Hostility): string {
  const text = (field: DoctorStringField, value: string): string => hostile.doctorField(field, value);
  const { wiring } = facts;
  const all = wiring === 'all';
  // String order (UTF-16 code units), as the agent's TreeSet of paths.
  const registered = all ? [...new Set(facts.registered)].sort() : [];
  const sample = registered.filter((dir) => dir.length <= SAMPLE_PATH_CHARS).slice(0, SAMPLE_DIRS);
  const observation = {
    requestId: token,
    status: 'observed',
    detail: text('detail', 'fake agent observation; not readiness and not reload proof'),
    sessionId: text('sessionId', wiring === 'none' ? '' : facts.sessionId),
    agentVersion: text('agentVersion', facts.agentVersion),
    pid: text('pid', facts.pid),
    javaVersion: text('javaVersion', facts.java.version),
    vmName: text('vmName', `${facts.java.vmName} (reclazz fake agent)`),
    workingDirectory: text('workingDirectory', facts.workingDirectory),
    watcherState: text('watcherState', all ? facts.watcher : 'unavailable'),
    buildHold: text('buildHold', all ? facts.buildHold : 'unavailable'),
    watchedDirectoryCount: registered.length,
    unwatchableDirectoryCount: all ? facts.refused : 0,
    watchSampleTruncated: facts.forceTruncated || sample.length < registered.length,
    watchedDirectories: sample.map((dir) => text('watchedDirectories', dir)),
    buildOwnershipSupported: all,
    verifySupported: wiring !== 'none',
    scanSupported: wiring !== 'none',
    reloadConfirmed: false,
  };
  const strings = Object.values(observation).flatMap((value) => (Array.isArray(value) ? value : [value]));
  const json = JSON.stringify(observation);
  if (json.length > JSON_CHARS || strings.some((value) => typeof value === 'string' && value.length > STRING_CHARS)) {
    return JSON.stringify({ requestId: token, status: 'unavailable', detail: 'observation exceeds its bounds (512 characters a field, 3900 in all)' });
  }
  return json;
}

/**
 * HEALTH's lines, as agent/SessionReport.java writes them: its count of reloads and failures (per
 * class attempt, as ReloadQueue.java counts) tells a client whether a receipt can have been
 * evicted (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE").
 */

/** How many latencies the report remembers (SessionReport's ring). */
const REMEMBERED_LATENCIES = 512;

/** What the agent counted since it (re)started. */
export class SessionCounts {
  reloads = 0;
  failures = 0;
  /** Epoch ms of the start, and of the last reload or failure (0: none yet). */
  startedAtMs = Date.now();
  lastChangeAtMs = 0;
  private readonly latencies: number[] = [];

  /** A class whose reload landed, after `ms`. */
  reloaded(ms: number): void {
    this.reloads += 1;
    this.lastChangeAtMs = Date.now();
    this.latencies.push(ms);
    if (this.latencies.length > REMEMBERED_LATENCIES) this.latencies.shift();
  }

  /** A class whose reload failed. */
  failed(): void {
    this.failures += 1;
    this.lastChangeAtMs = Date.now();
  }

  /** The report's lines: the version and uptime, the counts and latencies, the watch (when wired), the last change, restarts. */
  lines(version: string, watch: { directories: number; files: number } | undefined, needingRestart: number): string[] {
    const now = Date.now();
    const lines = [`Reclazz ${version}, up ${humanDuration(now - this.startedAtMs)}.`];
    if (this.reloads === 0 && this.failures === 0) lines.push('Nothing has reloaded yet this session.');
    else {
      const failures = this.failures > 0 ? `, and ${plural(this.failures, 'failure')}` : '';
      lines.push(`${plural(this.reloads, 'reload')}: 0 structural, ${this.reloads} method bodies${failures}.`, this.latencyLine());
    }
    if (watch !== undefined) {
      lines.push(`${plural(watch.directories, 'directory', 'directories')} watched, holding ${plural(watch.files, 'file')}.`);
    }
    lines.push(
      this.lastChangeAtMs === 0 ? 'No file has changed under a watched directory yet.' : `Last change ${humanDuration(now - this.lastChangeAtMs)} ago.`,
    );
    lines.push(needingRestart === 0 ? 'Nothing is waiting on a restart.' : `${plural(needingRestart, 'thing')} waiting on a restart; ask PENDING for what.`);
    return lines;
  }

  private latencyLine(): string {
    const taken = [...this.latencies].sort((a, b) => a - b);
    const count = taken.length;
    if (count === 0) return 'None of them was timed, which is the batch path reloading a whole directory.';
    const from = count === this.reloads ? `over all ${count} of them` : `over the last ${count} of ${this.reloads}`;
    const at95 = taken[Math.max(0, Math.ceil(count * 0.95) - 1)]!;
    return `Save to reloaded: ${taken[Math.floor(count / 2)]}ms median, ${at95}ms at the 95th, ${taken[count - 1]}ms worst, ${from}.`;
  }
}

/** `<n> <word>`, singular only for 1 (the agent's Plural.of). */
function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** Whole seconds, minutes, hours or days (SessionReport.humanDuration). */
function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return plural(seconds, 'second');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  return hours < 24 ? plural(hours, 'hour') : plural(Math.floor(hours / 24), 'day');
}

/**
 * The lines of `DIAGNOSE <class>` (protocol.md, "SCAN, PENDING, HEALTH, DIAGNOSE"), in the
 * agent's order and words (agent ReloadDiagnostics.explain): whether a compiled file for the
 * name lies under a watched directory (a direct path under each, else a search by file name),
 * whether the application loaded the class, and the last reload attempt of it.
 */

/** Depth and count bounds of the search by file name under one watched directory (Files.walk(dir, 12), limit 4). */
const WALK_DEPTH = 12;
const WALK_LIMIT = 4;
/** The search stops after a watched directory once more than this many files were found. */
const FOUND_LIMIT = 8;
/** At most this many watched directories are named when none holds the class. */
const NAMED_DIRS = 3;

/** What the diagnosis looks at. Times in epoch ms. */
export interface DiagnoseFacts {
  /** The watched class output directories (local, absolute). */
  roots: readonly string[];
  reportPath: PathReporter;
  /** When the application's JVM started. */
  jvmStartMs: number;
  /** True when the application loaded `className`. */
  loaded: (className: string) => boolean;
  /** The latest reload receipt of `className`, if any. */
  receipt: (className: string) => Receipt | undefined;
  nowMs: number;
}

/**
 * The diagnosis of `name` (a binary class name), one line per finding. As the agent's `explain`,
 * the load state and the last attempt are of the class of the first file found, which a search by
 * file name may have found for another class of the same simple name.
 */
export function diagnosisLines(name: string, facts: DiagnoseFacts): string[] {
  const lines = [`Reclazz diagnosis for ${name}`];
  const found = classFilesOf(name, facts.roots);
  const files = found.map((f) => f.file);
  const resolved = found[0] === undefined ? name : binaryNameOf(found[0].root, found[0].file);
  if (files.length === 0) {
    lines.push('No compiled .class file for this name under any watched directory.');
    lines.push(
      'Either the build has not run, or this class is built somewhere Reclazz is not watching. Watched output directories: ' +
        namedDirs(facts.roots.map(facts.reportPath)),
    );
  }
  let newest: number | undefined;
  for (const file of files) {
    const modifiedMs = mtimeOf(file);
    let when = 'unknown';
    if (modifiedMs !== undefined) {
      newest = Math.max(newest ?? modifiedMs, modifiedMs);
      when = ago(modifiedMs, facts.nowMs) + (modifiedMs < facts.jvmStartMs ? ', which is before this JVM started' : '');
    }
    lines.push(`Compiled file: ${facts.reportPath(file)} (last built ${when})`);
  }
  if (files.length > 1) {
    lines.push(
      'More than one build output holds this class. The JVM uses whichever its classloader found first, so an edit to the other one changes nothing.',
    );
  }
  lines.push(
    facts.loaded(resolved)
      ? 'Loaded and prepared by the agent, so a reload of it would be applied.'
      : 'The JVM has not loaded this class yet, so there is nothing to reload. It will use the current code the first time it is used.',
  );
  if (files.length > 0) lines.push(lastAttempt(facts.receipt(resolved), newest, facts));
  return lines;
}

/** The binary class name of class file `file` below the watched directory `root` (agent PlatformContext.resolveClassName). */
function binaryNameOf(root: string, file: string): string {
  return relative(root, file).slice(0, -'.class'.length).split(sep).join('.');
}

function lastAttempt(receipt: Receipt | undefined, newestMs: number | undefined, facts: DiagnoseFacts): string {
  if (receipt === undefined) {
    return newestMs !== undefined && newestMs < facts.jvmStartMs
      ? 'Reclazz has not attempted a reload of this class, and the compiled file has not been rebuilt since this JVM started. The build did not reach it.'
      : 'Reclazz has not attempted a reload of this class. The file was rebuilt, so its bytes came out identical to the ones already loaded and there was nothing to apply: a rebuild of unchanged source does that.';
  }
  const atMs = receipt.completedAt === '' ? facts.nowMs : Date.parse(receipt.completedAt);
  const detail = receipt.detail === '' ? '' : ` (${receipt.detail})`;
  const source = receipt.source === '' ? '' : `, from ${receipt.source}`;
  return `Last attempt ${ago(atMs, facts.nowMs)}: ${receipt.status === 'failed' ? 'failed' : 'reloaded'}${detail}${source}`;
}

/**
 * Class files for `name` under `roots`, with the root each is under: its direct path under each,
 * else up to 4 files of its simple file name, whatever class they hold (agent ReloadDiagnostics.findClassFiles).
 */
function classFilesOf(name: string, roots: readonly string[]): { file: string; root: string }[] {
  const found: { file: string; root: string }[] = [];
  const fileName = `${name.slice(name.lastIndexOf('.') + 1)}.class`;
  for (const root of roots) {
    const direct = join(root, ...name.split('.')) + '.class';
    if (isFile(direct)) found.push({ file: direct, root });
    else found.push(...byFileName(root, fileName).map((file) => ({ file, root })));
    if (found.length > FOUND_LIMIT) break;
  }
  return found;
}

function byFileName(root: string, fileName: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // not an answer, just a gap
    }
    for (const entry of entries) {
      if (found.length >= WALK_LIMIT) return;
      const path = join(dir, entry.name);
      if (entry.isFile() && entry.name === fileName) found.push(path);
      else if (entry.isDirectory() && depth < WALK_DEPTH) walk(path, depth + 1);
    }
  };
  walk(root, 1);
  return found;
}

/** The first 3 directories, then `and others` (the agent says so once it has named 3). */
function namedDirs(dirs: readonly string[]): string {
  if (dirs.length === 0) return 'none';
  const named = dirs.slice(0, NAMED_DIRS).join(', ');
  return dirs.length >= NAMED_DIRS ? `${named} and others` : named;
}

function ago(thenMs: number, nowMs: number): string {
  const seconds = Math.floor((nowMs - thenMs) / 1000);
  if (nowMs < thenMs) return 'just now';
  if (seconds < 90) return `${seconds}s ago`;
  if (seconds < 5400) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)}h ago`;
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
