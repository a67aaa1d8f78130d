/**
 * The watch's link to the agent: one session for as long as the agent stays (one connection:
 * the agent keeps only 5 clients, and a closed slot lingers, protocol.md "Slots linger"), and
 * when it goes away, a new one once its port file is back, tried with a growing pause. The
 * opening is a build session's (DOCTOR, owner), with the run lock left to each cycle.
 */
import type { Outcome } from '../outcome/outcome.js';
import type { BuildSession } from '../session/cycle-context.js';
import { openSessions } from '../session/open.js';
import type { Host, SessionHooks, SessionOptions } from '../session/options.js';
import { closeSessions } from '../session/group.js';
import { pause } from '../util/wait.js';

/** The first and the longest pause between two tries to reach the agent again, in ms. */
const RECONNECT_MS = { first: 250, max: 5000 } as const;

/**
 * Refusals that mean "the agent is not there (yet)": no or a stale port file, a port file being
 * written, nothing listening, a full set of clients, an agent still starting. A watch keeps
 * trying after these; any other refusal (an old agent, one without VERIFY) ends it.
 */
const AWAY: ReadonlySet<Outcome['reason']> = new Set([
  'no-agent',
  'stale-port',
  'bad-port-file',
  'handshake',
  'agent-not-ready',
  'agent-disconnected',
]);

/** What a try to reach the agent gave. */
export type Reached =
  { kind: 'open'; sessions: BuildSession[] } | { kind: 'away'; outcome: Outcome } | { kind: 'refused'; outcome: Outcome };

/**
 * One try: opens a build session with every agent of the checkout (without the run lock).
 * @throws StateError when owner.json cannot be read.
 */
export async function reachAgent(options: SessionOptions, host: Host, hooks: SessionHooks): Promise<Reached> {
  const opening = await openSessions(options, host, hooks, {
    builds: true,
    lockPerCycle: true,
    announce: true,
    requires: { need: 'owned builds', ownedBuilds: true, verify: options.verify !== false, offerNoVerify: true, session: true },
  });
  if (opening.kind === 'open') return { kind: 'open', sessions: opening.sessions as BuildSession[] };
  return { kind: AWAY.has(opening.outcome.reason) ? 'away' : 'refused', outcome: opening.outcome };
}

/**
 * Tries until the agent is reached, a refusal other than "away" comes, or `signal` aborts
 * (then undefined), pausing {@link RECONNECT_MS} first, doubling up to its max.
 * @throws StateError when owner.json cannot be read.
 */
export async function awaitAgent(
  options: SessionOptions,
  host: Host,
  hooks: SessionHooks,
  backoff: { first: number; max: number } = RECONNECT_MS,
): Promise<Exclude<Reached, { kind: 'away' }> | undefined> {
  let backoffMs = backoff.first;
  for (;;) {
    if (!(await pause(backoffMs, hooks.signal))) return undefined;
    const reached = await reachAgent(options, host, hooks);
    if (hooks.signal?.aborted) {
      if (reached.kind === 'open') await closeSessions(reached);
      return undefined;
    }
    if (reached.kind !== 'away') return reached;
    backoffMs = Math.min(backoffMs * 2, backoff.max);
  }
}
