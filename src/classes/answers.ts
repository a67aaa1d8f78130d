/**
 * The facts of VERIFY's answers as the evidence rule reads them (evidence.ts `AnswerFacts`): what
 * a round's verdict says, what DIAGNOSE said and of which file, how many receipts HEALTH may not
 * count, and whether a file still has the stamp it was read with. Read from the record and the
 * disk; the answers are plain facts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type PathMapEntry, toLocal } from '../agent/path-map.js';
import type { Diagnosis } from '../agent/reports.js';
import type { ClassChange, ClassVerdict } from '../outcome/facts.js';
import { type ClassIndex, sameStampAsRow } from './columns.js';
import { type AnswerFacts, type Asked, type DiagnoseFacts, EVIDENCE, type LiveEvidence, RECHECK } from './evidence.js';

/** The codes of rows whose class the JVM has loaded (a receipt applied), or that no receipt of the agent can be about. */
const COUNTED = new Set<number>([
  EVIDENCE.proven,
  EVIDENCE.preStart,
  EVIDENCE.elsewhere,
  RECHECK + EVIDENCE.proven,
  RECHECK + EVIDENCE.preStart,
]);

/**
 * How many classes of this agent session may have receipts HEALTH does not count (a class new to
 * the JVM that the agent registered as a bean: agent SessionReport counts reloads and failures
 * only): the record's rows but those the JVM is known to run; unbounded once a folder's history is
 * not whole (a class may have come and gone unrecorded).
 */
export function uncountedOf(index: ClassIndex): number {
  for (const history of index.folderHistory.values()) if (!history.whole) return Number.POSITIVE_INFINITY;
  let uncounted = 0;
  for (const code of index.evidence) if (!COUNTED.has(code)) uncounted += 1;
  return uncounted;
}

/**
 * What DIAGNOSE said of `change`'s class: its load state, and whether it is of this file. The agent
 * looks for `<binary name>.class` under each watched directory and, failing that, for any file of
 * the simple name, and reports the load state of the first file found (agent
 * ReloadDiagnostics.findClassFiles): of this class only when that file is this one, or none was found.
 */
export function diagnosisOf(
  said: Diagnosis | undefined,
  change: ClassChange,
  agent: { map: readonly PathMapEntry[]; workingDirectory: string } | undefined,
): DiagnoseFacts | undefined {
  if (said === undefined) return undefined;
  const local = (file: string) => path.resolve(agent?.workingDirectory ?? '', toLocal(agent?.map ?? [], file));
  // It said which files, and the first is this one (or there is none: then it looked up this very name).
  const first = said.files?.[0];
  const thisFile = said.files !== undefined && (first === undefined || sameFile(local(first), change.path));
  return said.loaded === undefined ? { thisFile } : { thisFile, loaded: said.loaded };
}

/** The class output directory of `change`: the folder its binary name is relative to. */
export function classDirOf(change: ClassChange): string {
  let dir = change.path;
  for (let i = change.className.split('.').length; i > 0; i -= 1) dir = path.dirname(dir);
  return dir;
}

/** What the rule asked of `change` (classes/snapshot.ts put it in the change). */
export function askedOf(change: ClassChange, once: boolean): Asked {
  const keeps = change.keeps as LiveEvidence | undefined;
  return {
    once,
    liveUnknown: change.liveUnknown === true,
    ...(keeps === undefined ? {} : { keeps }),
    ...(change.othersMoved === true ? { othersMoved: true } : {}),
  };
}

/** A round's verdict as the rule reads an answer. */
export function answerOf(verdict: ClassVerdict): AnswerFacts['status'] {
  switch (verdict.status) {
    case 'applied':
    case 'not-observed':
    case 'unverified':
    case 'not-watched':
      return verdict.status;
    case 'timeout':
      return verdict.receipt?.status === 'not_observed' ? 'still-not-observed' : 'no-answer';
    case 'interrupted':
    case 'connection-lost':
    case 'session-changed':
      return 'no-answer';
    default:
      return 'other';
  }
}

/** A verdict that may leave a class new to the JVM: `unverified`, or no attempt (no receipt, or the capture ended without one). */
export function mayBeNew(verdict: ClassVerdict): boolean {
  const status = answerOf(verdict);
  return status === 'unverified' || status === 'not-watched' || status === 'not-observed' || status === 'still-not-observed';
}

/** The rows of `paths` in `index`. */
export function rowsOf(index: ClassIndex, paths: ReadonlySet<string>): Map<string, number> {
  const rows = new Map<string, number>();
  index.paths.forEach((file, row) => {
    if (paths.has(file)) rows.set(file, row);
  });
  return rows;
}

/** True when `change`'s file still has the stamp its row was scanned with. */
export function unmovedOf(index: ClassIndex, rows: ReadonlyMap<string, number>, change: ClassChange): boolean {
  const row = rows.get(change.path);
  if (row === undefined) return false;
  try {
    return sameStampAsRow(index, row, fs.statSync(change.path));
  } catch {
    return false;
  }
}

/** True when `a` and `b` are the same file (symbolic links resolved). */
export function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}
