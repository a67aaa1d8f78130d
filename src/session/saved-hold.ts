/**
 * Whether a hold the agent has is this checkout's own, by its saved owner state: what `doctor`
 * needs to tell a hold the next run here recovers from one a build here would wait on.
 */
import type { AgentLocation } from '../agent/discover.js';
import type { DoctorObserved } from '../outcome/facts.js';
import { agentStatePlace, checkoutRoot } from '../state/folder.js';
import { readOwnerState } from '../state/store.js';

/**
 * A hold that a build here would wait on: a legacy one, or a named one that this checkout's
 * owner.json does not record as held by its token in this agent session (then the next run here
 * would not recover it). An owner.json that cannot be read counts as not recording it.
 * @param cwd the folder the command runs in; `location` the agent's port file.
 */
export function holdFinding(doctor: DoctorObserved, cwd: string, location: AgentLocation): { hold?: 'not-ours' | 'legacy' } {
  if (doctor.buildHold === 'legacy') return { hold: 'legacy' };
  if (doctor.buildHold !== 'named') return {};
  let saved;
  try {
    saved = readOwnerState(agentStatePlace(checkoutRoot(cwd, [location]), location), () => undefined);
  } catch {
    saved = undefined;
  }
  return saved?.held === true && saved.sessionId === doctor.sessionId ? {} : { hold: 'not-ours' };
}
