/**
 * `reclazz-build verify [class files or directories...]`: asks the running agent whether the
 * bytes on disk now (by SHA-256) are applied, with the same VERIFY loop, deadline, capacity
 * and exit statuses as a build (0 all applied, 75 not proven, 69 refused, 2 usage).
 *
 * A point-in-time check: without a build there are no "bytes from before", so a `mismatch`
 * receipt is final here (after a build it may mean "not captured yet").
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentTarget } from '../agent/handshake.js';
import { closeSession } from '../session/session.js';
import { openFor } from './open.js';
import { isVerifiableClassName } from '../agent/protocol.js';
import { declaredClassName } from '../classes/classfile.js';
import { hashFile, listClassFiles } from '../classes/scan.js';
import { binaryClassName } from '../classes/names.js';
import { SHOWN_AGENT_LEVELS, type RunEvent } from '../outcome/events.js';
import type { AgentInfo, ChangeSummary, ClassChange } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildRunResult, type RunFacts, type RunResult } from '../outcome/result.js';
import { describeOutcome } from '../report/words.js';
import { verdictOutcome } from '../verify/verdict.js';
import { verifyClasses } from '../verify/verify.js';

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
    buildRunResult(outcome, describeOutcome(outcome), { ...known, ...facts }, performance.now() - started);

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
    const targets = files.filter((f) => f.verifiable).map((f) => ({ className: f.className, path: f.path, sha256: f.after! }));
    if (targets.length === 0) return end({ reason: 'ok', proof: { kind: 'none-verifiable', files: files.length } });
    const report = await verifyClasses(session.connection, targets, {
      sessionId: agent.sessionId,
      timeoutMs: options.verifyTimeoutMs,
      onProgress: (p) => emit({ type: 'verify-progress', ...p }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const { verdicts, ...verify } = report;
    const scope = {
      files: true,
      skipped: files.length - targets.length,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    return end(verdictOutcome(report, scope), {
      verify,
      verdicts,
    });
  } finally {
    await closeSession(session);
  }
}
