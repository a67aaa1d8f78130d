/**
 * The details of verdicts the proof reads beyond a receipt (session/proof.ts, session/said.ts):
 * bytes kept live by a single ask, a class new to the JVM, the agent's PENDING entry and its
 * DIAGNOSE words. The agent's own words are put in as they came; renderers make them visible.
 */
export const verdictWords = {
  /** A rewritten file whose bytes are known live, kept by a `not_observed`. */
  keptUnseen: 'rewritten with the bytes known live: no reload attempt since (the agent skips identical bytes)',
  /** A class new to the JVM by the record, kept `added` because DIAGNOSE says the JVM has not loaded it. */
  added: (receipt: string) =>
    `new to the JVM: ${receipt === 'unverified' ? 'its receipt is unverified (the agent never applies a class the JVM had not loaded)' : 'no receipt'}, and DIAGNOSE says the JVM has not loaded it, so it loads these bytes on first use`,
  /** A class new to the JVM by the record that DIAGNOSE did not say the JVM has not loaded. */
  newNotProven: 'new to the JVM by the record, but DIAGNOSE did not say that the JVM has not loaded it: what it runs is unknown',
  /** A class new to the JVM that stays new, as listed with the class files a build added. */
  loadsOnFirstUse: 'new: the JVM has not loaded it (DIAGNOSE), so it loads these bytes on first use',
  /** A `failed` or `unverified` verdict PENDING lists as needing a restart. */
  pending: (entry: string, detail: string) =>
    `PENDING lists it as needing a restart: "${entry}"${detail === '' ? '' : `; receipt: ${detail}`}`,
  /** A verdict that is not live, with what DIAGNOSE said of the class. */
  diagnosed: (detail: string, words: readonly string[]) => `${detail}${detail === '' ? '' : '; '}DIAGNOSE: ${words.join(' ')}`,
};
