/**
 * The owner token in `owner.json`: saved before `BUILD started` (a lost receipt may still have
 * installed the hold), put back when refused, marked released once `BUILD ok` is acknowledged.
 */
import { newToken } from '../agent/protocol.js';
import type { AgentInfo } from '../outcome/facts.js';
import type { StatePlace } from '../state/folder.js';
import { readOwnerState, writeOwnerState, type SavedOwnerState } from '../state/store.js';

/** The token a cycle uses and where it came from. */
export interface OwnerChoice {
  owner: string;
  source: 'option' | 'saved' | 'new';
  /** What owner.json held when the session opened (any agent session). */
  saved: SavedOwnerState | undefined;
  /** True when the saved token belongs to this agent session and its last `ok` was acknowledged. */
  releasedBefore: boolean;
}

/**
 * `--owner` when given, else the token saved for this agent session, else a fresh one.
 * @param warn reports a corrupt owner.json (it is then ignored).
 * @throws StateError when owner.json exists but cannot be read.
 */
export function chooseOwner(
  place: StatePlace,
  sessionId: string,
  explicit: string | undefined,
  warn: (message: string) => void,
): OwnerChoice {
  const saved = readOwnerState(place, warn);
  const savedOwner = savedOwnerOf(saved, sessionId);
  const owner = explicit ?? savedOwner ?? newToken();
  const source = explicit !== undefined ? 'option' : savedOwner !== undefined ? 'saved' : 'new';
  return { owner, source, saved, releasedBefore: owner === savedOwner && saved?.held === false };
}

/**
 * `choice` with owner.json read again, for the next cycle of a session: its token stays, but what
 * was saved may have moved since (a one-shot run between two cycles, or this session's last cycle).
 * @throws StateError when owner.json exists but cannot be read.
 */
export function rereadOwner(place: StatePlace, sessionId: string, choice: OwnerChoice, warn: (message: string) => void): OwnerChoice {
  const saved = readOwnerState(place, warn);
  return { ...choice, saved, releasedBefore: choice.owner === savedOwnerOf(saved, sessionId) && saved?.held === false };
}

/** The token owner.json saved for agent session `sessionId`, if any. */
function savedOwnerOf(saved: SavedOwnerState | undefined, sessionId: string): string | undefined {
  // A token salvaged from a corrupt owner.json whose session id was lost is still tried: it may be the only way to recover a hold.
  const ours = saved !== undefined && (saved.sessionId === sessionId || (saved.recoveredFrom !== undefined && saved.sessionId === ''));
  return ours ? saved.owner : undefined;
}

/** Where and for whom the owner token is kept. */
export interface OwnerRecord {
  /** The agent's state folder (state/folder.ts). */
  state: StatePlace;
  owner: string;
  sessionId: string;
  port: number;
  /** DOCTOR's `pid`: with the port and session, the agent this checkout last used (session/open.ts). */
  pid: string;
  /** The port file the agent was found by (absolute), when one was. */
  portFile?: string;
}

/** The record of `owner` used against `agent` (its port, session and pid), found by `portFile` when one was read. */
export function ownerRecordOf(
  state: StatePlace,
  owner: string,
  agent: Pick<AgentInfo, 'port' | 'sessionId' | 'pid'>,
  portFile: string | undefined,
): OwnerRecord {
  const { port, sessionId, pid } = agent;
  return { state, owner, sessionId, port, pid, ...(portFile === undefined ? {} : { portFile }) };
}

/**
 * Saves the token as possibly holding, before `started` is sent.
 * @throws StateError when owner.json cannot be written.
 */
export function saveHolding(record: OwnerRecord, now: Date): void {
  writeOwnerState(record.state, {
    owner: record.owner,
    sessionId: record.sessionId,
    port: record.port,
    updatedAt: now.toISOString(),
    held: true,
    pid: record.pid,
    ...(record.portFile === undefined ? {} : { portFile: record.portFile }),
  });
}

/**
 * After our `started` was refused (another owner holds): owner.json as it was when it named another
 * token, else our token marked not holding. Left as {@link saveHolding} wrote it, a token that never
 * held would read as ours to recover, and `doctor` would take the other owner's hold for it.
 * @throws StateError when owner.json cannot be written.
 */
export function restoreSaved(record: OwnerRecord, choice: OwnerChoice, now: Date): void {
  if (choice.saved !== undefined && choice.saved.owner !== record.owner) writeOwnerState(record.state, choice.saved);
  else saveReleased(record, now);
}

/**
 * Marks the token as no longer holding, once `BUILD ok` was acknowledged.
 * @throws StateError when owner.json cannot be written.
 */
export function saveReleased(record: OwnerRecord, now: Date): void {
  writeOwnerState(record.state, {
    owner: record.owner,
    sessionId: record.sessionId,
    port: record.port,
    updatedAt: now.toISOString(),
    held: false,
    pid: record.pid,
    ...(record.portFile === undefined ? {} : { portFile: record.portFile }),
  });
}
