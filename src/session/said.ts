/**
 * What the agent says of a build's classes besides their receipts (protocol.md "What the agent's
 * source shows": restart notes, DIAGNOSE): whether the JVM has loaded a class and which files
 * hold it (DIAGNOSE, agent ReloadDiagnostics), and what needs a restart (a receipt's words, agent
 * reload/StructuralReloader; PENDING's entries, agent ui/RestartLedger, which are the agent
 * session's history: a later `applied` for the bytes on disk wins over an old entry).
 */
import type { AgentConnection } from '../agent/connection.js';
import { lineNaming, restartRequiredBy, type Diagnosis } from '../agent/reports.js';
import { askDiagnose, askPending } from '../agent/requests.js';
import type { ClassVerdict } from '../outcome/facts.js';
import { verdictWords } from '../report/shortfall-words.js';

/** At most this many classes are asked DIAGNOSE for their words alone (a `failed` or `unverified` verdict): each walks the agent's folders. */
const MAX_WORDS = 16;

/** What the agent is asked on the proof's connection. Times in ms. */
export interface SaidInput {
  connection: AgentConnection;
  /** Bound per marker reply. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Asks DIAGNOSE for every class of `needed` (whose verdict needs to know whether the JVM has
 * loaded it) and, for their words, for at most {@link MAX_WORDS} others whose verdict is `failed`
 * or `unverified`. Empty when there is nothing to ask or no answer came.
 */
export async function diagnoseVerdicts(
  input: SaidInput,
  verdicts: readonly ClassVerdict[],
  needed: ReadonlySet<number>,
): Promise<ReadonlyMap<string, Diagnosis>> {
  const words = verdicts.filter((v, i) => !needed.has(i) && (v.status === 'failed' || v.status === 'unverified')).slice(0, MAX_WORDS);
  const names = [...new Set([...[...needed].map((i) => verdicts[i]!.className), ...words.map((v) => v.className)])];
  if (names.length === 0) return new Map();
  return (await askDiagnose(input.connection, names, input.timeoutMs, input.signal)) ?? new Map();
}

/** `verdict` with DIAGNOSE's words in its detail when it is not live and the agent said something of it. */
export function withDiagnosis(verdict: ClassVerdict, diagnoses: ReadonlyMap<string, Diagnosis>): ClassVerdict {
  const said = diagnoses.get(verdict.className);
  if (said === undefined || said.words.length === 0 || !SHOWN_WITH_WORDS.has(verdict.status)) return verdict;
  return { ...verdict, detail: verdictWords.diagnosed(verdict.detail, said.words) };
}
const SHOWN_WITH_WORDS: ReadonlySet<string> = new Set(['failed', 'unverified', 'not-observed', 'timeout']);

/**
 * Verdicts of classes the agent says need a restart become `restart-required`: a `failed` or
 * `unverified` receipt whose detail says so of the class itself, or one PENDING names (asked
 * only when a receipt does not say). An `applied` (or any live verdict) stays: PENDING's
 * entries are history.
 */
export async function restartRequired(input: SaidInput, verdicts: ClassVerdict[]): Promise<ClassVerdict[]> {
  const candidate = (v: ClassVerdict) => v.status === 'unverified' || v.status === 'failed';
  const byReceipt = (v: ClassVerdict) => restartRequiredBy(v.detail, v.className);
  if (!verdicts.some(candidate)) return verdicts;
  const entries = verdicts.some((v) => candidate(v) && !byReceipt(v))
    ? await askPending(input.connection, input.timeoutMs, input.signal)
    : undefined;
  return verdicts.map((verdict) => {
    if (!candidate(verdict)) return verdict;
    if (byReceipt(verdict)) return { ...verdict, status: 'restart-required' as const };
    const entry = entries === undefined ? undefined : lineNaming(entries, verdict.className);
    return entry === undefined
      ? verdict
      : { ...verdict, status: 'restart-required' as const, detail: verdictWords.pending(entry, verdict.detail) };
  });
}
