/**
 * The DOCTOR observation (protocol.md, "DOCTOR"; "Commands": early in agent start-up).
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

/** What DOCTOR reports; paths are already as the agent reports them. */
export interface DoctorFacts {
  /** False while the handlers are not wired (still starting). */
  wired: boolean;
  sessionId: string;
  agentVersion: string;
  pid: string;
  workingDirectory: string;
  buildHold: HoldKind;
  /** Watched directories that exist, as reported, in registration order. */
  watched: string[];
  /** Registered directories that do not exist. */
  unwatchable: number;
  /** Report `watchSampleTruncated` true whatever the sample. */
  forceTruncated: boolean;
}

/**
 * `DOCTOR_RESULT` JSON for `token`: every observed field in the agent's order, or
 * `{"requestId","status":"unavailable","detail"}` when a string field is longer than 512
 * characters or the whole is longer than 3900. While not wired: sessionId "", watcherState and
 * buildHold "unavailable", no directories, every `*Supported` false.
 */
export function doctorJson(token: string, facts: DoctorFacts, hostile: Hostility): string {
  const text = (field: DoctorStringField, value: string): string => hostile.doctorField(field, value);
  const { wired } = facts;
  const sample = wired ? facts.watched.filter((dir) => dir.length <= SAMPLE_PATH_CHARS).slice(0, SAMPLE_DIRS) : [];
  const observation = {
    requestId: token,
    status: 'observed',
    detail: text('detail', 'fake agent observation; not readiness and not reload proof'),
    sessionId: text('sessionId', wired ? facts.sessionId : ''),
    agentVersion: text('agentVersion', facts.agentVersion),
    pid: text('pid', facts.pid),
    javaVersion: text('javaVersion', '21.0.4'),
    vmName: text('vmName', 'OpenJDK 64-Bit Server VM (reclazz fake agent)'),
    workingDirectory: text('workingDirectory', facts.workingDirectory),
    watcherState: text('watcherState', wired ? 'watching' : 'unavailable'),
    buildHold: text('buildHold', wired ? facts.buildHold : 'unavailable'),
    watchedDirectoryCount: wired ? facts.watched.length : 0,
    unwatchableDirectoryCount: wired ? facts.unwatchable : 0,
    watchSampleTruncated: facts.forceTruncated || sample.length < (wired ? facts.watched.length : 0),
    watchedDirectories: sample.map((dir) => text('watchedDirectories', dir)),
    buildOwnershipSupported: wired,
    verifySupported: wired,
    scanSupported: wired,
    reloadConfirmed: false,
  };
  const strings = Object.values(observation).flatMap((value) => (Array.isArray(value) ? value : [value]));
  const json = JSON.stringify(observation);
  if (json.length > JSON_CHARS || strings.some((value) => typeof value === 'string' && value.length > STRING_CHARS)) {
    return JSON.stringify({ requestId: token, status: 'unavailable', detail: 'observation exceeds its bounds (512 characters a field, 3900 in all)' });
  }
  return json;
}
