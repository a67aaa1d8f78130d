/**
 * An open session with one agent: its connection and what the handshake found, the owner token
 * cycles hold the build with, and where the hold is. Cycles (cycle.ts) read and advance it;
 * {@link closeSession} ends it.
 */
import type { AgentConnection } from '../agent/connection.js';
import type { AgentView } from '../classes/coverage.js';
import type { AgentLocation } from '../agent/discover.js';
import type { OpenAgent } from '../agent/handshake.js';
import type { BuildHold } from '../hold/hold.js';
import type { OwnerChoice } from '../hold/owner.js';
import type { AgentEndpoint, AgentInfo, BuildGroup, DoctorObserved, RunEvent } from '../outcome/facts.js';
import type { StatePlace } from '../state/folder.js';
import type { Host, SessionOptions } from './options.js';

/** What every session needs of its host: where to search from and the environment discovery reads. */
export type SessionHost = Pick<Host, 'cwd' | 'env'>;

/** An open session; `H` is its host (a session that builds needs the whole {@link Host}). */
export interface Session<H extends SessionHost = Host> {
  host: H;
  options: SessionOptions;
  /** Bound per receipt, in ms. */
  timeoutMs: number;
  emit: (event: RunEvent) => void;
  signal: AbortSignal | undefined;
  location: AgentLocation;
  /** The checkout root: its `.reclazz/` holds the run lock (state/place.ts). */
  checkout: string;
  /** Where this agent's owner token and class index live (state/place.ts). */
  state: StatePlace;
  connection: AgentConnection;
  open: OpenAgent;
  endpoint: AgentEndpoint;
  /** DOCTOR's evidence and the agent as results report it, when the session asked DOCTOR. */
  doctor?: DoctorObserved;
  agent?: AgentInfo;
  /** What the agent watches and where it runs, seen from here (--path-map applied), when the session asked DOCTOR. */
  view?: AgentView;
  /** The owner token and the hold, for a session that builds. */
  owner?: OwnerChoice;
  hold?: BuildHold;
  /** Releases the run lock of the checkout, for a session that builds. */
  releaseLock?: (() => Promise<void>) | undefined;
  /** The `agent-dirs` event was emitted (once per session). */
  agentDirsTold?: boolean;
  /** Records a build's process group with the run lock (false: not written), for a session that builds. */
  recordBuild?: (group: BuildGroup) => boolean;
  /** Nested class output directories already warned about (each once per session). */
  nestedWarned: Set<string>;
}

/** Closes the connection and releases the run lock. Safe to call twice. */
export async function closeSession(session: Pick<Session, 'connection' | 'releaseLock'>): Promise<void> {
  session.connection.close();
  const release = session.releaseLock;
  session.releaseLock = undefined;
  await release?.();
}
