/**
 * Reading what the agent says in words (protocol.md "SCAN, PENDING, HEALTH, DIAGNOSE", "What the
 * agent's source shows"): DIAGNOSE (agent ReloadDiagnostics), the PENDING digest (ui/RestartLedger;
 * its SuperclassReportingVerificationTest pins the closing sentences) and a receipt's `detail`
 * (ReloadVerification, reload/StructuralReloader). Pure.
 */
import type { HoldKeptCause } from '../outcome/outcome.js';

/** What DIAGNOSE said of one class. */
export interface Diagnosis {
  /** The class files the agent found under its watched class output directories (its paths; empty: none), when it said. */
  files?: string[];
  /** Whether the JVM has loaded the class, when it said: false is "The JVM has not loaded this class yet". */
  loaded?: boolean;
  /** Its sentences after the header, but for the last attempt (the receipt says that). */
  words: string[];
}

const DIAGNOSIS_HEADER = 'Reclazz diagnosis for ';
const NO_CLASS_FILE = 'No compiled .class file for this name under any watched directory.';
const NOT_WATCHED = 'Either the build has not run, or this class is built somewhere Reclazz is not watching.';
const COMPILED_FILE = 'Compiled file: ';
const MORE_THAN_ONE = 'More than one build output holds this class.';
const NOT_LOADED = 'The JVM has not loaded this class yet';
const NO_STATE = 'The agent has no watched-class state';
/** The sentences that say the JVM has loaded the class (once, by several loaders, before the agent, outside the watched set). */
const LOADED =
  /^(?:Loaded and prepared by the agent|Loaded, but not in the watched set|This class was loaded before the agent arrived|Loaded \d+ times)/;
/** The sentences about the last reload attempt, which the receipt already gives. */
const ATTEMPT = /^(?:Last attempt |Reclazz has not attempted a reload of this class)/;

/** Where in its answer a DIAGNOSE is: its files, the load state, the last attempt (files found), or ended. */
type DiagnosisPart = 'files' | 'load' | 'attempt' | 'ended';

/**
 * Reads the agent's DIAGNOSE lines (agent ReloadDiagnostics.explain): after `Reclazz diagnosis
 * for <name>`, its files (`No compiled .class file ...` and the watched directories, or one
 * `Compiled file: <path> (last built ...)` each and a note when several), whether the JVM has loaded
 * it, and with files found, the last attempt. Call {@link read} with each broadcast INFO message in
 * order. The answer has no end marker and other INFO lines may come between its lines (another
 * client's, a requester-only reply), so only the sentences `explain` writes, in its order, are
 * taken: the answer ends after its load state (no file) or its last-attempt line.
 */
export class DiagnosisReader {
  private current: Diagnosis | undefined;
  private part: DiagnosisPart = 'ended';
  readonly diagnoses = new Map<string, Diagnosis>();

  read(message: string): void {
    if (message.startsWith(DIAGNOSIS_HEADER)) {
      this.current = { words: [] };
      this.part = 'files';
      this.diagnoses.set(message.slice(DIAGNOSIS_HEADER.length), this.current);
      return;
    }
    const current = this.current;
    if (current === undefined) return;
    if (this.part === 'files' && this.readFiles(current, message)) return;
    if (this.part !== 'ended' && this.part !== 'files' && ATTEMPT.test(message) && (current.files?.length ?? 0) > 0) this.part = 'ended';
    else if (this.part === 'files' || this.part === 'load') this.readLoad(current, message);
  }

  /** A line of the files part, taken; false for any other line. */
  private readFiles(current: Diagnosis, message: string): boolean {
    if (message === NO_CLASS_FILE) current.files = [];
    else if (message.startsWith(COMPILED_FILE)) {
      const cut = message.lastIndexOf(' (last built ');
      current.files = [...(current.files ?? []), message.slice(COMPILED_FILE.length, cut < 0 ? undefined : cut)];
    } else if (!message.startsWith(NOT_WATCHED) && !message.startsWith(MORE_THAN_ONE)) return false;
    current.words.push(message);
    return true;
  }

  /** A line of the load state: taken when it is one; the last one ends the answer, or leads to the last attempt. */
  private readLoad(current: Diagnosis, message: string): void {
    const last = message.startsWith(NOT_LOADED) || message.startsWith(NO_STATE);
    if (!last && !LOADED.test(message)) return;
    this.part = 'load';
    if (message.startsWith(NOT_LOADED)) current.loaded = false;
    else if (!last) current.loaded = true;
    current.words.push(message);
    // Without a file there is no attempt line: the load state is the answer's end (a later loaded-sentence can only be another's).
    if (last) this.part = (current.files?.length ?? 0) > 0 ? 'attempt' : 'ended';
  }
}

/** PENDING's first line once the agent's RELOAD control is wired (exact prefix). */
const PENDING_STATE = 'Automatic reload: ';
/** The digest's closing sentences (exact): one of them ends PENDING's lines. */
const PENDING_CLOSING = new Set(['Everything else you changed is already live.', 'Nothing from this session needs a restart.']);

/**
 * Reads PENDING's lines: its entries are the lines between the optional `Automatic reload: ...`
 * line and a closing sentence. The exact entry format is not the agent's contract (only its
 * words are: the binary class name and the reason), so an entry is found by the class name.
 */
export class PendingReader {
  readonly entries: string[] = [];
  private closed = false;

  read(message: string): void {
    if (this.closed || message.startsWith(PENDING_STATE)) return;
    if (PENDING_CLOSING.has(message)) this.closed = true;
    else this.entries.push(message);
  }

  /** True once a closing sentence came. */
  get complete(): boolean {
    return this.closed;
  }
}

/** The first of `lines` that names `className` as a whole name (not a prefix of another), if any. */
export function lineNaming(lines: readonly string[], className: string): string | undefined {
  return lines.find((line) => namesClass(line, className));
}

/** A character that can continue a Java identifier (letters, digits, currency symbols, connectors). */
const IDENTIFIER = /[\p{L}\p{N}\p{Sc}\p{Pc}\p{Mn}\p{Mc}]/u;

/** True when `text` holds `className` bounded by what cannot continue a binary name (`app.Service` is not in `app.ServiceImpl`). */
function namesClass(text: string, className: string): boolean {
  for (let at = text.indexOf(className); at >= 0; at = text.indexOf(className, at + 1)) {
    const before = text[at - 1] ?? '';
    const [next = '', then = ''] = text.slice(at + className.length, at + className.length + 2);
    const preceded = IDENTIFIER.test(before) || before === '.';
    const continued = IDENTIFIER.test(next) || (next === '.' && IDENTIFIER.test(then));
    if (!preceded && !continued) return true;
  }
  return false;
}

/** The words of a receipt that say a change needs a restart (StructuralReloader's and the refused superclass save's). */
const RESTART_WORDS = /superclass change not applied|changed its superclass|restart required/i;

/**
 * True when a receipt's `detail` says that `className` itself needs a restart: a superclass
 * change not applied (`unverified`, the StructuralReloader's WARN, `WARN: <class>: superclass
 * change not applied; restart required. ...`) or refused (`failed`, `<class> changed its
 * superclass, ... restart required to pick it up.`, maybe cut at 200 characters). A batch's
 * warning about another class is every class's detail, and names that class, not this one.
 */
export function restartRequiredBy(detail: string, className: string): boolean {
  const text = detail.replace(/^(?:WARN|ERROR): /, '');
  return RESTART_WORDS.test(text) && (text.startsWith(`${className}:`) || text.startsWith(`${className} `));
}

/**
 * A batch-wide cause of `unverified` in a receipt's `detail` (protocol.md "Batch-wide verdicts",
 * "A client that stops reading harms others"): `not-unique` for `Class was not uniquely loaded
 * before the batch, or input class names were ambiguous`, `slow-client` for "not keeping up".
 */
export function batchWideCause(detail: string): 'not-unique' | 'slow-client' | undefined {
  if (detail.includes('input class names were ambiguous')) return 'not-unique';
  if (detail.includes('not keeping up')) return 'slow-client';
  return undefined;
}

/** The agent's ERROR when its capture cannot read a pending class file (agent ReloadQueue.capture, exact prefix). */
const READ_FAILED = /^Failed to read class file (.+?): [A-Z][A-Za-z0-9_$]*(?:Exception|Error)\b/;

/**
 * The agent's ERROR when a held capture's scan did not finish: `BUILD ok`'s scan waits for the file
 * watcher's loop, 10 s at most, and a watcher starting or stopped never gets to it (agent
 * FileWatcher.scanNow; ReloadQueue.acceptBuild, whose failure Supervised reports as `<task> failed: ...`).
 */
const SCAN_UNFINISHED = /^Accepting build output failed: IllegalStateException: Build scan did not finish\b/;

/**
 * Why the agent's held capture failed, from one of its ERROR messages, or undefined for any other
 * message: `Failed to read class file <path>: <exception>[: <message>]` (its watcher's path;
 * relative when `watchDirs` was) or the unfinished scan. Either way the agent keeps the hold with
 * its owner although `ok` was acknowledged (protocol.md "What the agent's source shows").
 */
export function keptHoldCause(message: string): HoldKeptCause | undefined {
  const file = READ_FAILED.exec(message)?.[1];
  if (file !== undefined) return { kind: 'unreadable-file', file };
  return SCAN_UNFINISHED.test(message) ? { kind: 'scan-unfinished' } : undefined;
}
