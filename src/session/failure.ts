/** A thrown error as an outcome: a state file that cannot be read or written (69), or a bug (70). */
import path from 'node:path';
import type { RunEvent } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { warningText } from '../report/step-words.js';
import { StateError } from '../state/store.js';

/**
 * The outcome of `error`; a bug's stack goes out as a warning first.
 * @param holdOwner the owner of a hold that may be left, to name it.
 */
export function failureOutcome(error: unknown, emit: (event: RunEvent) => void, holdOwner?: string): Outcome {
  const owner = holdOwner === undefined ? {} : { holdOwner };
  if (error instanceof StateError) {
    return { reason: 'state-error', problem: error.message, dir: path.dirname(error.path), file: path.basename(error.path), ...owner };
  }
  emit({ type: 'warning', message: warningText.internalError(error) });
  return { reason: 'internal-error', problem: (error as Error).message ?? String(error), ...owner };
}
