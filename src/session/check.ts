/**
 * The last steps of a cycle, after `BUILD ok` was acknowledged: find the class files whose
 * bytes changed, VERIFY each under one deadline, and keep what is live for the next cycle.
 */
import { observeAgentAfterLoss } from '../agent/after-loss.js';
import { recordProof } from '../classes/baseline.js';
import type { ClassIndex } from '../classes/columns.js';
import { detectChanges, type ChangeSet } from '../classes/snapshot.js';
import type { BuildRun, ChangeSummary } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import { writeClassIndex } from '../state/store.js';
import { verdictOutcome } from '../verify/verdict.js';
import type { VerifyTarget } from '../verify/types.js';
import { verifyClasses } from '../verify/verify.js';
import { end, saveAfterOk, type Cycle } from './cycle-context.js';
import { DEFAULTS } from './options.js';

/**
 * How long VERIFY waits on a class whose bytes an earlier run already built and could not prove
 * (the agent has had its capture of them: beyond its receipts, failed, or not reloaded), in ms.
 */
const SETTLED_WAIT_MS = 3000;

/** Detects, verifies and records; the cycle's result. */
/** @param searchRoot where class output directories were looked for (named when there is none). */
export async function checkChanges(
  cycle: Cycle,
  build: BuildRun,
  baseline: ClassIndex,
  dirs: string[],
  searchRoot: string,
): Promise<RunResult> {
  const { session } = cycle;
  const detected = await detectChanges(baseline, dirs);
  if (detected.unreadable.length > 0) session.emit({ type: 'warning', message: warningText.unreadable(detected.unreadable) });
  if (dirs.length === 0) {
    session.emit({ type: 'warning', message: warningText.noClassDirs(searchRoot) });
    return end(cycle, { reason: 'ok', proof: { kind: 'no-class-dirs', searchRoot } }, { build });
  }
  const result = await verifyChanges(cycle, detected.changes, build, detected.unreadable.length);
  if (recordProof(detected, baseline, result.verdicts))
    saveAfterOk(session, () => writeClassIndex(session.location.projectDir, detected.index));
  return result;
}

/** @param unreadable class files that could not be read: their change is unknown, so the cycle is never "proven live". */
async function verifyChanges(cycle: Cycle, changes: ChangeSet, build: BuildRun, unreadable: number): Promise<RunResult> {
  const { session, options } = cycle;
  const notVerifiable = changes.changed.filter((c) => !c.verifiable);
  const targets: VerifyTarget[] = changes.changed
    .filter((c) => c.verifiable)
    .map((c) => ({
      className: c.className,
      path: c.path,
      sha256: c.after!,
      previousSha256: c.before,
      ...(c.settled ? { settleByMs: SETTLED_WAIT_MS } : {}),
    }));
  const summary: ChangeSummary = {
    changed: changes.changed,
    added: changes.added,
    removed: changes.removed,
    notVerifiable,
    total: changes.total,
  };
  const counts = { changed: changes.changed.length, added: changes.added.length, removed: changes.removed.length };
  session.emit({ type: 'changes', ...counts, notVerifiable: notVerifiable.length, total: changes.total });
  const facts = { build, changes: summary };
  if (options.verify === false) return end(cycle, { reason: 'ok', proof: { kind: 'not-verified', changed: targets.length } }, facts);
  if (targets.length === 0) {
    const skipped = notVerifiable.length > 0 ? { skipped: notVerifiable.length } : {};
    if (unreadable === 0) return end(cycle, { reason: 'ok', proof: { kind: 'nothing-to-prove', ...skipped } }, facts);
    return end(
      cycle,
      { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'unreadable', unreadable }, noneChanged: true },
      facts,
    );
  }
  const report = await verifyClasses(session.connection, targets, {
    sessionId: session.agent.sessionId,
    timeoutMs: options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
    onProgress: (p) => session.emit({ type: 'verify-progress', ...p }),
    ...(session.signal === undefined ? {} : { signal: session.signal }),
  });
  const { verdicts, ...verify } = report;
  const lost = verdicts.some((v) => v.status === 'connection-lost');
  const found = lost ? await observeAgentAfterLoss(session.agent.port, session.agent.sessionId, session.timeoutMs) : undefined;
  const outcome = verdictOutcome(report, {
    files: false,
    signal: session.signal,
    unreadable,
    skipped: notVerifiable.length,
    ...(found === undefined ? {} : { found }),
  });
  return end(cycle, outcome, { ...facts, verify, verdicts });
}
