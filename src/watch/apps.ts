/**
 * The apps a watch keeps in view: every agent it started with or found later in the checkout, each
 * by where it was found (its port file, or `--port`). An app whose agent goes away stays in view as
 * gone: a cycle is not proven for what it runs (session/away.ts) until its agent is back, at its port
 * file, in the same agent session or in a new one (then the change is proven in the new JVM, group.ts
 * `proveReturn`). One whose port file is gone too (its agent stopped normally and deleted it) and
 * which no longer answers where it was leaves the view.
 */
import { type AgentLocation, discoverAgents, readPortFile } from '../agent/discover.js';
import type { AgentView } from '../classes/coverage.js';
import type { Outcome } from '../outcome/outcome.js';
import type { AgentRunResult } from '../outcome/result.js';
import type { AwayApp } from '../session/away.js';
import { closeSessions } from '../session/group.js';
import { openSessionAt, openSessions, type OpenPlan } from '../session/open.js';
import { type BuildSession, findAppStart, type Host, type SessionHooks, type SessionOptions } from '../session/options.js';
import { sameAppView } from '../session/identity.js';
import type { AppStart } from '../outcome/facts.js';

/** One app in view. */
export interface App {
  /** Where it was found: `location.source` (its port file's path, or `--port`, the environment). */
  key: string;
  /** Its session while its agent is there. */
  session?: BuildSession;
  /** Its last session: `session` while its agent is there; closed once it is gone. */
  last: BuildSession;
  /** When the JVM of `last` started, looked up when it was taken in view (a killed JVM's is gone). */
  start: Promise<AppStart>;
  /** When its agent went away, while it is gone. */
  awaySince?: Date;
  /** Its app restarts for the running cycle's change (group.ts `restartIfNeeded`): its agent going away is no news. */
  restarting?: boolean;
  /**
   * Its part of the last cycle it took part in, when that left classes not proven in its JVM, and
   * the agent session it was of: while that session runs, the proof of another app's return is no
   * ✔ for those classes (group.ts `proveReturn`).
   */
  owes?: { sessionId: string; part: AgentRunResult };
}

/** The apps in view, by key; their sessions in key order, the order their holds are taken in. */
export class AppView {
  private readonly apps = new Map<string, App>();

  get size(): number {
    return this.apps.size;
  }

  /** Every app, in key order. */
  all(): App[] {
    return [...this.apps.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The sessions of the apps whose agent is there. */
  present(): BuildSession[] {
    return this.all().flatMap((app) => (app.session === undefined ? [] : [app.session]));
  }

  /** The apps whose agent is gone. */
  away(): App[] {
    return this.all().filter((app) => app.session === undefined);
  }

  /** The gone apps as a cycle takes them (session/away.ts). */
  async awayApps(): Promise<AwayApp[]> {
    return Promise.all(this.away().map(async (app) => awayOf(app)));
  }

  /** The app of `session`, when it is that app's session now. */
  of(session: BuildSession): App | undefined {
    const app = this.apps.get(session.location.source);
    return app?.session === session ? app : undefined;
  }

  has(key: string): boolean {
    return this.apps.has(key);
  }

  /** `session` is its app's from now on (an app found, or back). */
  take(session: BuildSession): App {
    const key = session.location.source;
    const app: App = {
      key,
      session,
      last: session,
      start: findAppStart(session.agent.pid, session.view.workingDirectory, session.host.proc),
    };
    this.apps.set(key, app);
    return app;
  }

  /** The agent of `app` went away at `at`: its session is closed. */
  gone(app: App, at: Date): void {
    const session = app.session;
    if (session === undefined) return;
    delete app.session;
    app.awaySince = at;
    session.connection.close();
  }

  /** `app` leaves the view. */
  drop(app: App): void {
    this.apps.delete(app.key);
  }
}

/** Gone `app` as a cycle takes it (session/away.ts). */
export async function awayOf(app: App): Promise<AwayApp> {
  return { session: app.last, since: app.awaySince ?? new Date(), start: await app.start };
}

/** The first and the longest pause between two looks for gone agents, in ms (the agent keeps only 5 client slots, and a closed one lingers). */
export const RECONNECT_MS = { first: 250, max: 5000 } as const;

/**
 * Refusals that mean "the agent is not there (yet)" (no port file, nothing listening, clients full,
 * still starting): a watch keeps trying; any other refusal (an old agent, no VERIFY) ends it.
 */
const AWAY: ReadonlySet<Outcome['reason']> = new Set([
  'no-agent',
  'stale-port',
  'bad-port-file',
  'handshake',
  'agent-not-ready',
  'agent-disconnected',
]);

/** What a try to reach agents gave: sessions, nothing there yet (`outcome` says why), or a refusal a new try cannot mend. */
export type Reached =
  { kind: 'open'; sessions: BuildSession[] } | { kind: 'away'; outcome: Outcome } | { kind: 'refused'; outcome: Outcome };

/** How a watch opens a session: one that builds, the run lock per cycle, announced. */
function planOf(options: SessionOptions): OpenPlan {
  return {
    builds: true,
    lockPerCycle: true,
    announce: true,
    requires: { need: 'owned builds', ownedBuilds: true, verify: options.verify !== false, offerNoVerify: true, session: true },
  };
}

/**
 * The agents of the checkout, as a build finds them (`options`' waits included): every one that
 * answers. When several are found and some are not there yet, the others are taken.
 * @throws StateError when owner.json cannot be read.
 */
export async function reachAgents(options: SessionOptions, host: Host, hooks: SessionHooks): Promise<Reached> {
  const opening = await openSessions(options, host, hooks, planOf(options));
  if (opening.kind === 'open') return { kind: 'open', sessions: opening.sessions as BuildSession[] };
  const kind = AWAY.has(opening.outcome.reason) ? 'away' : 'refused';
  if (kind === 'refused' || opening.among === undefined) return { kind, outcome: opening.outcome };
  const found = await findNew(new Set(), options, host, hooks);
  return found.kind === 'open' && found.sessions.length === 0 ? { kind: 'away', outcome: opening.outcome } : found;
}

/**
 * The agents found in the checkout now whose key is not in `known`, each opened without waiting:
 * those that answer (an app found later); a refusal a new try cannot mend ends it.
 * @throws StateError when owner.json cannot be read.
 */
export async function findNew(known: ReadonlySet<string>, options: SessionOptions, host: Host, hooks: SessionHooks): Promise<Reached> {
  const found = discoverAgents({ ...options, cwd: host.cwd, env: host.env });
  if (found.kind === 'refused') return { kind: 'open', sessions: [] };
  const sessions: BuildSession[] = [];
  for (const location of found.locations.filter((l) => !known.has(l.source))) {
    const opened = await openQuickly(location, options, host, hooks);
    if (opened.kind === 'refused') {
      await closeSessions({ sessions });
      return opened;
    }
    if (opened.kind === 'open') sessions.push(opened.session);
  }
  return { kind: 'open', sessions };
}

/** A session at `location` without waiting: open, not there (yet), or refused for good. */
async function openQuickly(
  location: AgentLocation,
  options: SessionOptions,
  host: Host,
  hooks: SessionHooks,
): Promise<{ kind: 'open'; session: BuildSession } | { kind: 'away' } | { kind: 'refused'; outcome: Outcome }> {
  const opened = await openSessionAt(location, { ...options, waitMs: 0, waitForAgentMs: 0 }, host, hooks, planOf(options));
  if (opened.kind === 'open') return { kind: 'open', session: opened.sessions[0] as BuildSession };
  await opened.releaseLock?.();
  return AWAY.has(opened.outcome.reason) ? { kind: 'away' } : { kind: 'refused', outcome: opened.outcome };
}

/** What a look at a gone app found. */
export type Look =
  /** Its agent answers in the same agent session (the same JVM). */
  | { kind: 'same'; session: BuildSession }
  /** Its app's agent answers in a new agent session (a new JVM): `view` says it is the app's. */
  | { kind: 'new'; session: BuildSession; view: AgentView }
  /** Its port file is gone, and nothing of it answers where it was: it stopped. */
  | { kind: 'stopped' }
  /** Not back yet. */
  | { kind: 'away' }
  | { kind: 'refused'; outcome: Outcome };

/**
 * One look at gone `app`: its agent at the port its port file names now, or, with the port file
 * gone, where it was (an agent that kept running: another JVM may have deleted its port file,
 * protocol.md "The port file is anyone's to delete"). A new agent session counts only when its
 * agent is the app's (session/options.ts `sameAppView`: its working directory from before).
 * @throws StateError when owner.json cannot be read.
 */
export async function lookAt(app: App, options: SessionOptions, host: Host, hooks: SessionHooks): Promise<Look> {
  const { location, agent, view } = app.last;
  const read = location.portFile === undefined ? location.port : readPortFile(location.portFile);
  const missing = typeof read !== 'number' && read.problem === 'missing';
  if (typeof read !== 'number' && !missing) return { kind: 'away' };
  const opened = await openQuickly({ ...location, port: typeof read === 'number' ? read : agent.port }, options, host, hooks);
  if (opened.kind !== 'open') return opened.kind === 'refused' ? opened : { kind: missing ? 'stopped' : 'away' };
  const { session } = opened;
  if (session.agent.sessionId === agent.sessionId) return { kind: 'same', session };
  const roots = [host.cwd, location.projectDir];
  const back = await sameAppView(session.doctor, options.pathMap ?? [], roots, view.workingDirectory);
  if (back !== undefined) return { kind: 'new', session, view: back };
  await closeSessions({ sessions: [session] });
  return { kind: missing ? 'stopped' : 'away' };
}
