/**
 * `reclazz-build verify [class files or directories...]`: are the bytes on disk now applied? The
 * build's VERIFY loop, evidence rule and exit statuses (0 all applied, 75 not proven, 69 refused,
 * 2 usage). Without a build there are no "bytes from
 * before", so a `mismatch` receipt is final here (after a build it may mean "not captured yet").
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentTarget } from '../agent/handshake.js';
import { closeSession, findAppStart, type Session, type SessionHost } from '../session/options.js';
import { openFor } from './doctor.js';
import { isVerifiableClassName } from '../agent/protocol.js';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import { declaredClassName, hashFile, listClassFiles, statOf } from '../classes/scan.js';
import { baselineOf } from '../classes/baseline.js';
import { type ClassIndex, IndexBuilder, sameStampAsRow, shaHex } from '../classes/columns.js';
import { cutOf, EVIDENCE, type Facts, type Verdict, verdictOf } from '../classes/evidence.js';
import { binaryClassName } from '../classes/changes.js';
import { movedSinceRecord } from '../classes/copies.js';
import { classWatched, jvmPathsOf } from '../classes/coverage.js';
import { neverReloadedBy, warnNeverLive } from '../session/detect.js';
import {
  type AgentInfo,
  type ChangeSummary,
  type ClassChange,
  type ClassVerdict,
  SHOWN_AGENT_LEVELS,
  type VerifyReport,
} from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildRunResult, type RunFacts, type RunResult } from '../outcome/result.js';
import { proveClasses, recordAt } from '../session/proof.js';
import { verdictOutcome } from '../verify/verdict.js';

/** Options for {@link verifyClassFiles}. */
export interface VerifyFilesOptions extends Omit<AgentTarget, 'onEvent'> {
  /** Class files and directories, relative to `cwd` or absolute; a directory means every `.class` below it. */
  paths: string[];
  /** Known class output directories (absolute): a path below one is named relative to it. */
  roots: string[];
  /** One deadline for all VERIFY polling, in ms. */
  verifyTimeoutMs: number;
  onEvent?: (event: RunEvent) => void;
}

/** A usage problem with the paths given: nothing was sent. */
export class ClassPathError extends Error {
  override readonly name = 'ClassPathError';
}

/**
 * Lists the class files under `paths` with their binary names and SHA-256. A file or directory
 * below one of `roots` is named relative to the innermost such root; a directory outside them
 * is itself a class output directory; a file outside them is named by the class it declares.
 * @throws ClassPathError for a missing path, a file that is not a `.class`, or an unnamed class.
 */
export function collectClassFiles(paths: readonly string[], roots: readonly string[], cwd: string): ClassChange[] {
  const found = new Map<string, ClassChange>();
  const rootOf = (target: string): string | undefined =>
    [...roots]
      .map((r) => path.resolve(r))
      .filter((r) => target === r || target.startsWith(r + path.sep))
      .sort((a, b) => b.length - a.length)[0];
  for (const given of paths) {
    const full = path.resolve(cwd, given);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(full);
    } catch {
      throw new ClassPathError(`no such file or directory: ${given}`);
    }
    if (stat.isDirectory()) {
      const root = rootOf(full) ?? full;
      for (const file of listClassFiles(full)) add(found, file, binaryClassName(root, file));
    } else {
      if (!full.endsWith('.class'))
        throw new ClassPathError(`not a class file: ${given} (give .class files or the directories holding them)`);
      const root = rootOf(full);
      const name = root !== undefined ? binaryClassName(root, full) : declaredClassName(readOrEmpty(full));
      if (name === undefined) {
        throw new ClassPathError(
          `cannot tell the binary class name of ${given}: it is outside every known class output directory and is not a readable class file; give its class output directory instead, or name it with --classes-dir`,
        );
      }
      add(found, full, name);
    }
  }
  return [...found.values()].sort((a, b) => (a.className < b.className ? -1 : a.className > b.className ? 1 : 0));
}

function add(found: Map<string, ClassChange>, file: string, className: string): void {
  if (found.has(file)) return;
  const sha256 = hashFile(file);
  if (sha256 === undefined) return;
  found.set(file, { path: file, className, verifiable: isVerifiableClassName(className), after: sha256 });
}

function readOrEmpty(file: string): Uint8Array {
  try {
    return fs.readFileSync(file);
  } catch {
    return new Uint8Array();
  }
}

/** Verifies the class files under `paths` against the running agent. Never throws for the agent's behaviour. */
export async function verifyClassFiles(options: VerifyFilesOptions): Promise<RunResult> {
  const started = performance.now();
  const emit = options.onEvent ?? (() => undefined);
  /** What is known so far: the agent once DOCTOR described it, the class files once found. */
  const known: { agent?: AgentInfo; changes?: ChangeSummary } = {};
  const end = (outcome: Outcome, facts: RunFacts = {}): RunResult =>
    buildRunResult(outcome, { ...known, ...facts }, performance.now() - started);

  let files: ClassChange[];
  try {
    files = collectClassFiles(options.paths, options.roots, options.cwd);
  } catch (error) {
    if (!(error instanceof ClassPathError)) throw error;
    return end({ reason: 'usage', problem: { kind: 'class-path', text: error.message } });
  }
  if (files.length === 0) return end({ reason: 'usage', problem: { kind: 'no-class-files', paths: options.paths } });
  known.changes = {
    changed: files,
    checks: [],
    added: [],
    removed: [],
    notVerifiable: files.filter((f) => !f.verifiable),
    resources: [],
    total: files.length,
  };

  const opening = await openFor(
    {
      ...options,
      onEvent: (event) => {
        if (SHOWN_AGENT_LEVELS.has(event.level)) emit({ type: 'agent-event', level: event.level, message: event.message });
      },
    },
    { requires: { need: 'VERIFY', verify: true, session: true }, announce: true },
    emit,
  );
  if (opening.kind === 'refused') {
    if (opening.agent !== undefined) known.agent = opening.agent;
    return end(opening.outcome);
  }
  const { session } = opening;
  const agent = session.agent!;
  known.agent = agent;
  try {
    const verifiable = files.filter((f) => f.verifiable);
    if (verifiable.length === 0) return end({ reason: 'ok', proof: { kind: 'none-verifiable', files: files.length } });
    const { verdicts, ...verify } = await proveFiles(session, verifiable, options);
    const scope = {
      files: true,
      skipped: files.length - verifiable.length,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    return end(verdictOutcome({ ...verify, verdicts }, scope), { verify, verdicts });
  } finally {
    await closeSession(session);
  }
}

/**
 * The verdicts for `files` by the build's rule and records (classes/evidence.ts; classes.idx of
 * this agent session, classes/baseline.ts for folders it does not cover, session/proof.ts), in
 * name order: live by the record or the disk, else asked; `rewritten` when moved while read.
 */
async function proveFiles(
  session: Session<SessionHost>,
  files: readonly ClassChange[],
  options: VerifyFilesOptions,
): Promise<VerifyReport> {
  const agent = session.agent!;
  const emit = options.onEvent ?? (() => undefined);
  const warn = (problem: string) => emit({ type: 'warning', kind: 'state-file', problem });
  const start = await findAppStart(agent.pid, session.view!.workingDirectory);
  if (start.kind === 'unknown') emit({ type: 'warning', kind: 'app-start-unknown', why: start.why });
  const paths = jvmPathsOf(session.view!, session.checkout);
  const roots = outermost(files.flatMap(rootOf));
  const scanned = await baselineOf(recordAt(session.state, warn), roots, agent.sessionId, start, paths);
  const index = withRows(scanned.baseline, files);
  const rows = rowsByPath(index);
  // A file whose bytes moved between its listing and the scan is not judged on bytes it no longer has.
  const sameBytes = (f: ClassChange) => rows.has(f.path) && shaHex(index, rows.get(f.path)!) === f.after;
  const moved = files.filter((f) => !sameBytes(f));
  // Another copy of the class moved since the record (or the JVM's start): the agent may have reloaded the class from it.
  const cut = start.kind === 'known' ? { startMs: start.startMs, errorMs: start.errorMs } : undefined;
  const others = [...index.dirs, ...paths.classPath.map((entry) => entry.local)];
  const copyMoved = (f: ClassChange, row: number) =>
    movedSinceRecord(index, rows, { file: f.path, dir: index.dirs[index.dirOf[row]!]!, others }, cut, paths.watched);
  const judged = files.filter(sameBytes).map((f) => {
    const row = rows.get(f.path)!;
    const file = copyMoved(f, row) ? { ...f, othersMoved: true } : f;
    return { file, verdict: verdictOf({ ...factsOf(index, row, f.path), othersMoved: file.othersMoved === true }) };
  });
  const live = judged.flatMap(({ file, verdict }) => (verdict.kind === 'live' ? [liveBy(file, verdict)] : []));
  const outside = judged.flatMap(({ file, verdict }) => (verdict.kind === 'outside' ? [notTheApps(file)] : []));
  const asked = judged.flatMap(({ file, verdict }) => (verdict.kind === 'ask' ? [askedAs(file, verdict.liveUnknown)] : []));
  warnNeverLive({ view: session.view!, emit }, paths, roots, asked);
  // The agent attempts bytes only once written after the app started (its watcher arms then): older ones are asked once.
  const once = (f: ClassChange) => start.kind === 'known' && Math.max(f.ctimeMs!, f.mtimeMs!) < cutOf(start);
  const proof =
    asked.length === 0
      ? NOTHING_ASKED
      : await proveClasses({
          connection: session.connection,
          sessionId: agent.sessionId,
          verifyTimeoutMs: options.verifyTimeoutMs,
          receiptTimeoutMs: options.timeoutMs,
          onProgress: (p) => emit({ type: 'verify-progress', ...p }),
          ...(options.signal === undefined ? {} : { signal: options.signal }),
          changes: { changed: asked.filter((f) => !once(f)), checks: asked.filter(once), added: [] },
          index,
          // Nothing is shown watched here; what the agent never reloads is asked once, briefly.
          watched: () => false,
          refused: 0,
          noticeMs: 0,
          unwatched: neverReloadedBy((file) => classWatched(session.view!, file), roots),
        });
  const verdicts = [...live, ...outside, ...moved.map(movedWhileRead), ...proof.verdicts].sort((a, b) =>
    a.className < b.className ? -1 : a.className > b.className ? 1 : 0,
  );
  const { capacityLimited, capacity, requests, lostReplies, elapsedMs, sessionChangedTo } = proof;
  return {
    verdicts,
    capacityLimited,
    capacity,
    requests,
    lostReplies,
    elapsedMs,
    ...(sessionChangedTo === undefined ? {} : { sessionChangedTo }),
  };
}

/** The rule's facts (evidence.ts) of `file` at `row` of `index`, seen now; what is asked is polled, as a build's own change. */
function factsOf(index: ClassIndex, row: number, file: string): Facts & { answer?: never } {
  const stat = statOf(file);
  const sameStamp = stat !== undefined && sameStampAsRow(index, row, stat);
  return {
    row: { code: index.evidence[row]!, gone: index.gone[row] === 1, sameBytes: true, sameStamp },
    ctimeMs: stat?.ctimeMs ?? Number.POSITIVE_INFINITY,
    byBuild: true,
    newInSession: false,
  };
}

/** `file` to ask, with its times now (epoch ms; infinite when it cannot be read) and whether nothing records what the app has of it. */
function askedAs(file: ClassChange, liveUnknown: boolean): ClassChange {
  const stat = statOf(file.path);
  return { ...file, liveUnknown, ctimeMs: stat?.ctimeMs ?? Number.POSITIVE_INFINITY, mtimeMs: stat?.mtimeMs ?? Number.POSITIVE_INFINITY };
}

/** The report of a round with nothing to ask. */
const NOTHING_ASKED: VerifyReport = {
  verdicts: [],
  capacityLimited: false,
  capacity: AGENT_RECEIPT_CAPACITY,
  requests: 0,
  lostReplies: 0,
  elapsedMs: 0,
};

/**
 * The class output directory of `file`: the folder its binary name is relative to. None when the
 * file does not lie where its name says (a class file named by the class it declares, elsewhere).
 */
function rootOf(file: ClassChange): string[] {
  let root = file.path;
  for (let i = 0; i < file.className.split('.').length; i++) root = path.dirname(root);
  return binaryClassName(root, file.path) === file.className ? [root] : [];
}

/** `dirs` without duplicates and without any that lies below another (a scan's directories must not nest). */
function outermost(dirs: readonly string[]): string[] {
  const unique = [...new Set(dirs)].sort((a, b) => a.length - b.length);
  return unique.filter((dir, i) => !unique.slice(0, i).some((outer) => dir.startsWith(outer + path.sep)));
}

/** The row of each path of `index`. */
function rowsByPath(index: ClassIndex): Map<string, number> {
  return new Map(index.paths.map((file, row) => [file, row]));
}

/**
 * `index` with a row (evidence unknown) for each file of `files` it lacks, so its answer is read
 * as any other. A file unreadable now, or changed since `after`, gets no row.
 */
function withRows(index: ClassIndex, files: readonly ClassChange[]): ClassIndex {
  const known = new Set(index.paths);
  const missing = files.filter((f) => !known.has(f.path));
  if (missing.length === 0) return index;
  const dirs = [...index.dirs, ...new Set(missing.map((f) => path.dirname(f.path)))];
  const builder = new IndexBuilder(index.sessionId, dirs, index.paths.length + missing.length);
  builder.copyRows(index, 0, index.paths.length);
  for (const file of missing) {
    const stat = statOf(file.path);
    if (stat === undefined || hashFile(file.path) !== file.after) continue;
    builder.add(file.path, dirs.indexOf(path.dirname(file.path)), stat, Buffer.from(file.after!, 'hex'), EVIDENCE.unknown, []);
  }
  return builder.finish(index.folders, index.folderHistory);
}

/** The verdict of a class file live by the rule without asking (`verdict`), with its kind's words. */
function liveBy(file: ClassChange, verdict: Extract<Verdict, { kind: 'live' }>): ClassVerdict {
  const evidence = verdict.of === undefined ? { by: verdict.by } : { by: verdict.by, of: verdict.of };
  return {
    className: file.className,
    path: file.path,
    sha256: file.after!,
    status: 'unchanged',
    why: { kind: 'live-without-asking', evidence },
    evidence,
  };
}

/** The verdict of a class file in a folder the app's JVM neither loads from nor watches: not live there. */
function notTheApps(file: ClassChange): ClassVerdict {
  return { className: file.className, path: file.path, sha256: file.after!, status: 'not-watched', why: { kind: 'outside' } };
}

/** The verdict of a class file whose bytes moved while `verify` read it: never live. */
function movedWhileRead(file: ClassChange): ClassVerdict {
  return { className: file.className, path: file.path, sha256: file.after!, status: 'rewritten', why: { kind: 'rewritten' } };
}
