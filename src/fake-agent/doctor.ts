/**
 * The DOCTOR observation (protocol.md, "DOCTOR"; "Commands": early in agent start-up), as the
 * agent's DoctorReport.snapshot and FileWatcher.doctorEvidence build it: the watched directories
 * are the watcher's registrations (every folder under a root is one), sorted in String order,
 * of which the first 8 of at most 256 characters are the sample.
 */
import type { Hostility } from './hostile.js';
import type { DoctorStringField, HoldKind } from './types.js';

/** At most this many sampled watched directories. */
const SAMPLE_DIRS = 8;
/** A watched directory longer than this (characters) is left out of the sample. */
const SAMPLE_PATH_CHARS = 256;
/** A string field longer than this (characters) makes the observation unavailable. */
const STRING_CHARS = 512;
/** An observation JSON longer than this (characters) is unavailable, so the 4096-character message cut never hits it. */
const JSON_CHARS = 3900;

/**
 * How far the agent's start-up wiring has got (agent ReclazzAgent.initialize): nothing but the
 * status server, then VERIFY (and DIAGNOSE, SCAN, HEALTH), then the owned BUILD listener, DOCTOR's
 * hold view and RELOAD together.
 */
export type Wiring = 'none' | 'verify' | 'all';

/** What DOCTOR reports; paths are already as the agent reports them. */
export interface DoctorFacts {
  wiring: Wiring;
  /** The watcher's state once everything is wired: `starting` until it has registered its directories. */
  watcher: 'starting' | 'watching';
  sessionId: string;
  agentVersion: string;
  pid: string;
  workingDirectory: string;
  buildHold: HoldKind;
  /** The watcher's registrations that exist, as reported, in any order (empty before it registered anything). */
  registered: string[];
  /** Report `watchSampleTruncated` true whatever the sample. */
  forceTruncated: boolean;
}

/**
 * `DOCTOR_RESULT` JSON for `token`: every observed field in the agent's order, or
 * `{"requestId","status":"unavailable","detail"}` when a string field is longer than 512
 * characters or the whole is longer than 3900. Before anything is wired: sessionId "",
 * watcherState and buildHold "unavailable", no directories, every `*Supported` false. With
 * VERIFY wired but not the rest: the session, `verifySupported` and `scanSupported`, the hold and
 * the watcher still "unavailable", ownership unsupported.
 */
export function doctorJson(token: string, facts: DoctorFacts, hostile: Hostility): string {
  const text = (field: DoctorStringField, value: string): string => hostile.doctorField(field, value);
  const { wiring } = facts;
  const all = wiring === 'all';
  // String order (UTF-16 code units), as the agent's TreeSet of paths.
  const registered = all ? [...new Set(facts.registered)].sort() : [];
  const sample = registered.filter((dir) => dir.length <= SAMPLE_PATH_CHARS).slice(0, SAMPLE_DIRS);
  const observation = {
    requestId: token,
    status: 'observed',
    detail: text('detail', 'fake agent observation; not readiness and not reload proof'),
    sessionId: text('sessionId', wiring === 'none' ? '' : facts.sessionId),
    agentVersion: text('agentVersion', facts.agentVersion),
    pid: text('pid', facts.pid),
    javaVersion: text('javaVersion', '21.0.4'),
    vmName: text('vmName', 'OpenJDK 64-Bit Server VM (reclazz fake agent)'),
    workingDirectory: text('workingDirectory', facts.workingDirectory),
    watcherState: text('watcherState', all ? facts.watcher : 'unavailable'),
    buildHold: text('buildHold', all ? facts.buildHold : 'unavailable'),
    watchedDirectoryCount: registered.length,
    unwatchableDirectoryCount: 0,
    watchSampleTruncated: facts.forceTruncated || sample.length < registered.length,
    watchedDirectories: sample.map((dir) => text('watchedDirectories', dir)),
    buildOwnershipSupported: all,
    verifySupported: wiring !== 'none',
    scanSupported: wiring !== 'none',
    reloadConfirmed: false,
  };
  const strings = Object.values(observation).flatMap((value) => (Array.isArray(value) ? value : [value]));
  const json = JSON.stringify(observation);
  if (json.length > JSON_CHARS || strings.some((value) => typeof value === 'string' && value.length > STRING_CHARS)) {
    return JSON.stringify({ requestId: token, status: 'unavailable', detail: 'observation exceeds its bounds (512 characters a field, 3900 in all)' });
  }
  return json;
}
