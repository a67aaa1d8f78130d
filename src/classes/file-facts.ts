/**
 * The facts the scan (snapshot.ts) finds of one class file, and the rule's facts (evidence.ts) they
 * make after a build.
 */
import { COARSE_CLOCK_MS, type Facts } from './evidence.js';

/** What the scan found of one class file that is not simply its row's live bytes. Times in epoch ms. */
export interface FileFacts {
  /** Its path, its folder and its class output directory (absolute). */
  file: string;
  folder: string;
  dir: string;
  /** The evidence code of its row in the record, or undefined when it has none. */
  recorded?: number;
  /** The row is a tombstone: the file was removed earlier in this agent session. */
  gone: boolean;
  /** The bytes on disk equal the row's (false without a row). */
  sameBytes: boolean;
  /** The file's stamp is the row's (false without a row, or for a tombstone). */
  sameStamp: boolean;
  /** The file's ctime (through a symbolic link, the target's). */
  ctimeMs: number;
  /** The symbolic link's own ctime when the file is one, else `ctimeMs`. */
  linkCtimeMs: number;
  /** The record of its folder is this run's own scan from before the build, or the folder was not there then. */
  scannedBeforeBuild: boolean;
  /** Without a row: the record shows that the path held no class in this agent session before this build (history.ts). */
  newInSession: boolean;
  /** Another file of its binary name may have changed, come or gone since the record (copies.ts): a reload of it replaces the class. */
  othersMoved?: boolean;
}

/**
 * The rule's facts (evidence.ts) of a file found after a build whose hold was acknowledged at
 * `holdAtMs` (epoch ms): a stamp within the clock's coarseness of the hold counts as after it.
 */
export function afterBuildFacts(file: FileFacts, holdAtMs: number): Omit<Facts, 'answer'> {
  const { recorded } = file;
  const row =
    recorded === undefined ? undefined : { code: recorded, gone: file.gone, sameBytes: file.sameBytes, sameStamp: file.sameStamp };
  const byBuild = file.scannedBeforeBuild || file.ctimeMs >= holdAtMs - COARSE_CLOCK_MS;
  return { row, ctimeMs: file.ctimeMs, byBuild, newInSession: file.newInSession, othersMoved: file.othersMoved === true };
}
