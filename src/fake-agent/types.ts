/**
 * Public types of the fake reclazz agent. Section names refer to /work/shared/protocol.md.
 */

/** Final status of one reload attempt, as later reported by VERIFY (protocol.md, "VERIFY"). */
export type FinalStatus = 'applied' | 'failed' | 'unverified';

/** Every status a VERIFY_RESULT can carry (protocol.md, "VERIFY"). */
export type VerifyStatus = FinalStatus | 'running' | 'not_observed' | 'mismatch';

/** Kind of build hold (protocol.md, "BUILD" and "DOCTOR" `buildHold`). */
export type HoldKind = 'none' | 'named' | 'legacy';

/** One command line as offered to {@link FakeAgentOptions.intercept}. */
export interface InterceptCommand {
  /** The received line, without `\n` and with every `\r` removed. */
  line: string;
  /** First word upper-cased (`'BUILD'` for `build ok`); `''` for an empty line. Note VERIFY/DOCTOR/RELOAD stay case-sensitive when processed. */
  verb: string;
  /** The line split on single spaces, as sent (no case change). */
  words: string[];
  /** Id of the sending connection (1, 2, ... in accept order). */
  client: number;
}

/**
 * What to do with an intercepted command instead of normal processing.
 * "Reply" means the requester-only answer (BUILD_ACK/BUILD_REJECTED, VERIFY_RESULT,
 * DOCTOR_RESULT, RELOAD_STATE); broadcasts such as `Build started; holding ...` are not replies.
 */
export type InterceptAction =
  /** Act on the command but send no reply (a lost receipt). */
  | { kind: 'drop' }
  /** Neither act nor reply (as if never received). */
  | { kind: 'ignore' }
  /** Close this connection instead of processing. */
  | { kind: 'close' }
  /**
   * Send `lines` (raw line text, e.g. from `formatEvent`, no terminator; the agent adds `\n`
   * or `\r\n`) to the requester. `act` false/absent: instead of processing the command.
   * `act` true: the raw lines are sent first, then the command is processed normally
   * (with its real reply). `delayMs`: the raw lines are sent that many ms later.
   */
  | { kind: 'reply'; lines: string[]; act?: boolean; delayMs?: number }
  /** Process normally (state changes at once) but send the reply `ms` milliseconds late. */
  | { kind: 'delay'; ms: number };

/** Options of {@link startFakeAgent}. All durations in milliseconds. */
export interface FakeAgentOptions {
  /** Write the decimal port here (no newline, temp file + rename, parent dirs created); deleted on stop(). Relative paths resolve against process.cwd(). */
  portFile?: string;
  /** TCP port; default 0 = ephemeral. Always listens on 127.0.0.1 only. */
  port?: number;
  /** Class output directories the agent "watches" (relative paths resolve against process.cwd()). Snapshotted at start: those classes count as loaded. */
  watchDirs?: string[];
  /** HEARTBEAT period in ms, fixed rate; default 10000; 0 or less disables heartbeats. */
  heartbeatMs?: number;
  /** `agent` field of CONNECTED; default `'1.4.0-fake'`. `null` simulates an agent from before build ownership: CONNECTED has no `agent`, `owner=` is accepted but not enforced and never echoed, VERIFY/DOCTOR/RELOAD get no reply. */
  agentVersion?: string | null;
  /** `version` field of CONNECTED; default 1. */
  protocolVersion?: number;
  /** Session id reported by VERIFY/DOCTOR; default a random UUID (a new one on restart()). */
  sessionId?: string;
  /** Delay in ms between the `ok` receipt (or SCAN / resume) and the capture (the real agent: ~500 ms debounce + ~100 ms batch); default 100. */
  captureDelayMs?: number;
  /** How long in ms a captured class reads `running` before its final status; default 50. */
  reloadMs?: number;
  /** End every sent line with `\r\n` instead of `\n` (a Windows JVM). */
  crlf?: boolean;
  /** Handlers not wired yet: BUILD, VERIFY, DOCTOR and RELOAD get no reply and change nothing; SCAN does nothing. */
  notReady?: boolean;
  /** Final status of a reload attempt of a class that was loaded at start; `undefined` => `'applied'`. Classes not loaded before the reload are always `'unverified'`. A returned `'unverified'` counts as a batch WARN, making the batch's `applied` classes `unverified` too. */
  verifyStatus?: (className: string, sha256: string) => FinalStatus | undefined;
  /** Called for every received command line (after `\r` removal) before processing; return an action to misbehave, or undefined for normal processing. */
  intercept?: (cmd: InterceptCommand) => InterceptAction | undefined;
  /** Classes whose latest receipt the VERIFY ledger keeps; default 512 (least recently updated evicted first). */
  ledgerSize?: number;
  /** Lines queued per client while its socket is not draining; default 1000. Beyond it lines are dropped and a WARN broadcast. */
  outboxLimit?: number;
  /** Simultaneous clients; default 5. One more is accepted and closed before CONNECTED. */
  maxClients?: number;
  /**
   * Re-hash a watched class file in a scan only when its size, mtime, ctime or inode moved
   * since it was last hashed (a write always moves ctime, so same-size, same-mtime rewrites
   * are still seen). Answers are the same as without it; for benchmarks with tens of
   * thousands of classes; default false.
   */
  scanCache?: boolean;
  /** A hold older than this many ms without a BUILD result gets one WARN broadcast; default 300000 (5 minutes). */
  holdWarnMs?: number;
  /**
   * Fault switch: called at each capture; a returned message makes that capture fail as an
   * unreadable class output would (protocol.md "BUILD": a read or scan failure leaves the
   * whole build held for another BUILD ok). Root reads every file, so tests use this instead of chmod.
   */
  failCapture?: () => string | undefined;
}

/** One received command line (protocol.md, "Commands"). */
export interface ReceivedLine {
  /** Epoch ms (Date.now()) at receipt. */
  atMs: number;
  /** Sending connection id. */
  client: number;
  /** The line without `\n`, every `\r` removed. */
  line: string;
}

/** Hold transition names recorded in {@link FakeAgent.holdLog}. */
export type HoldEvent =
  | 'acquired'
  | 'reacquired'
  | 'failed'
  | 'capture-scheduled'
  | 'capture-failed'
  | 'released'
  | 'rejected';

/** One hold transition (protocol.md, "BUILD" hold rules). */
export interface HoldLogEntry {
  /** Epoch ms (Date.now()). */
  atMs: number;
  event: HoldEvent;
  /** The owner token the command carried (or the released hold's owner); absent for unowned. */
  owner?: string;
}

/** Snapshot of the build hold. */
export interface HoldSnapshot {
  kind: HoldKind;
  /** Owner of a named hold (test-side only; the agent never discloses it on the socket). */
  owner?: string;
  /** Class files currently held: bytes differing from what the agent last admitted. */
  files: number;
}

/** A running fake agent. */
export interface FakeAgent {
  /** Listening port on 127.0.0.1. */
  readonly port: number;
  /** Current session id (changes on restart()). */
  readonly sessionId: string;
  /** Every command line received, in order. */
  readonly received: ReceivedLine[];
  /** Hold transitions, in order: acquired/reacquired/failed/capture-scheduled/capture-failed/released/rejected. */
  readonly holdLog: HoldLogEntry[];
  /** Current hold. Scans the watched directories to count held files. */
  hold(): HoldSnapshot;
  /** Captures completed so far (a capture scans, releases the hold, and admits a reload batch unless paused). */
  readonly captures: number;
  /** Send `{"level":level,"message":message,"timestamp":...,...extra}` to every client (through their outboxes). */
  broadcast(level: string, message: string, extra?: Record<string, unknown>): void;
  /** Simulate an application restart: close all clients, new sessionId, empty ledger, no hold, no pause, pending timers cancelled, classes re-snapshotted as loaded; same port. */
  restart(): Promise<void>;
  /** Close the server and every client, cancel all timers, delete the port file. Idempotent. */
  stop(): Promise<void>;
  /** Connected clients (those that received CONNECTED and are still open). */
  clientCount(): number;
}
