/**
 * The facts that outcomes, events and results carry: plain data shapes shared by every room.
 * Each room fills in the facts it finds (agent/ the agent's, tool/ the build's, classes/ the
 * class files', verify/ the verdicts); report/ reads them. No behaviour lives here.
 */
// zod/mini: the same schemas as `zod`'s, built with functions, so a bundle keeps only what it uses.
import * as z from 'zod/mini';

/** The agent as a build sees it at connect time (CONNECTED and DOCTOR). */
export interface AgentInfo {
  port: number;
  /** Where the port came from: `--port`, `RECLAZZ_PORT`, or a port file path. */
  source: string;
  agentVersion: string;
  sessionId: string;
  pid: string;
  javaVersion: string;
  workingDirectory: string;
  watchedDirectories: string[];
  watchSampleTruncated: boolean;
  verifySupported: boolean;
}

/** The agent as a subcommand sees it on connect (CONNECTED), before or without DOCTOR. */
export interface AgentEndpoint {
  port: number;
  /** Where the port came from: `--port`, `RECLAZZ_PORT`, or the port file path. */
  source: string;
  /** The port file read, when one was. */
  portFile: string | null;
  /** CONNECTED's `agent` field; null for an agent from before build ownership. */
  agentVersion: string | null;
  /** CONNECTED's `version` field. */
  protocolVersion: number;
}

/** Where a port was found: the words messages use for it. */
export interface PortPlace {
  port: number;
  /** `--port`, `RECLAZZ_PORT`, or the port file's path (prefixed `--port-file ` or `RECLAZZ_PORT_FILE ` when named there). */
  source: string;
  /** The port file read, when one was. */
  portFile?: string;
}

/** The signals reclazz-build handles. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** How a build command ended. */
export interface BuildRun {
  /** The exit status, or 128+N when killed by signal N (the shell convention). */
  exitCode: number;
  /** The signal that ended the child, if any. */
  signal?: string;
  /** Wall time from spawn to exit, in ms. */
  durationMs: number;
  /** Set when the run was stopped because we received this signal. */
  interruptedBy?: StopSignal;
  /** Processes of the build still running 5 s after its command exited, which were stopped. */
  stopped?: LeftProcess[];
  /**
   * Processes the build started that still ran a moment after it, outside its session (a daemon
   * that called setsid): not stopped, and they may still write class files (tool/build-group.ts).
   */
  detached?: LeftProcess[];
  /** The last lines it wrote (at most 40, control sequences removed), when they were kept (tool/build.ts). */
  output?: string[];
}

/** A process of a build, as a warning names it. */
export interface LeftProcess {
  pid: number;
  /** Its argument vector joined by spaces, or its short name when that cannot be read. */
  command: string;
}

/** The run that holds a checkout's run lock, as its holder file names it (on this host): its pid, and its build's command once it started one. */
export interface LockHolder {
  pid: number;
  command?: string;
}

/**
 * A build's process group as the run lock records it: the group id, its leader's start time
 * (epoch ms, within +-`leaderErrorMs`: a reused pid has another) and the build command.
 */
export interface BuildGroup {
  pgid: number;
  leaderStartMs: number;
  leaderErrorMs: number;
  command: string;
}

/** The build tools reclazz-build knows by name; `command` is anything after `--`. */
export type ToolKind = 'gradle' | 'mvn' | 'command';

/** A class file whose bytes differ, appeared or disappeared. */
export interface ClassChange {
  path: string;
  /** Binary class name derived from the path below its class output directory (`com.acme.Outer$Inner`). */
  className: string;
  /** False for names the agent's VERIFY rejects (`module-info`, `package-info`, non-identifiers). */
  verifiable: boolean;
  /** SHA-256 before the build, lower-case hex (absent for added files). */
  before?: string;
  /** SHA-256 after the build, lower-case hex (absent for removed files). */
  after?: string;
  /**
   * Earlier bytes of this file seen in this agent session (SHA-256 hex, latest first): a VERIFY
   * `mismatch` naming one means the agent has not captured these bytes yet.
   */
  previous?: string[];
  /** Nothing records what the app has for this file: a single ask's `not_observed` may mean identical bytes. */
  liveUnknown?: boolean;
  /**
   * The bytes are known live by this evidence code (classes/evidence.ts), but the file was
   * rewritten since: a single ask's answer keeps it or takes it away.
   */
  keeps?: number;
  /** The file's ctime when scanned, epoch ms. */
  ctimeMs?: number;
  /** The file's mtime when scanned, epoch ms (`verify`: bytes there since before the app started are asked once). */
  mtimeMs?: number;
  /**
   * Asked because another class file of its binary name, in another class output directory,
   * changed, came or went since the record (classes/copies.ts): no answer in this run keeps it.
   */
  othersMoved?: boolean;
}

/** Why the app's JVM start time is unknown (then no class file counts as unchanged since it). */
export type AppStartUnknown =
  /** DOCTOR's `pid` is not a process id. */
  | { kind: 'no-pid'; pid: string }
  /** No such process here: a container, another host, or another user's process. */
  | { kind: 'not-visible'; pid: number }
  /** A process with that pid runs in `cwd` (null: unreadable), not in DOCTOR's working directory. */
  | { kind: 'elsewhere'; pid: number; cwd: string | null; workingDirectory: string };

/** When the app's JVM started (epoch ms, within ±errorMs), or why that is unknown. */
export type AppStart = { kind: 'known'; pid: number; startMs: number; errorMs: number } | { kind: 'unknown'; why: AppStartUnknown };

/** The class files a result reports on. */
export interface ChangeSummary {
  /** Changed by this build and not backed by evidence (verified). */
  changed: ClassChange[];
  /** There before this build, not backed by evidence (asked once). */
  checks: ClassChange[];
  added: ClassChange[];
  removed: ClassChange[];
  notVerifiable: ClassChange[];
  /** Files other than class files that the build wrote in the class output directories: VERIFY cannot prove them. */
  resources: string[];
  /** Class files found in the scanned directories. */
  total: number;
}

/**
 * A class's final verdict. `applied` is proof; so is `unchanged` (asked once, `not_observed`,
 * and the agent's watcher saw nothing to reload: identical bytes). `timeout`: still not final at
 * the deadline; `beyond-capacity`: not awaited because more classes changed than the agent
 * keeps receipts for; `session-changed`: the app restarted; `connection-lost`; `interrupted`;
 * `not-observed`: asked once, no receipt, and nothing shows the bytes are the app's;
 * `restart-required`: the agent lists a change it cannot apply (a hierarchy change);
 * `rewritten`: the file changed again after it was checked; `not-watched`: the agent never
 * reloads it (its folder is not watched, its name excluded, or the agent's capture of this
 * build was over without an attempt of it): asked once, not proven; `paused`: automatic reload
 * is paused, so the agent keeps it pending until resume; `hold-kept`: the agent's capture of this
 * build could not read a held class file, so it reloaded nothing and still holds the build.
 */
/** The verdicts that make a class live: VERIFY applied, or the same bytes rewritten (see `VerdictStatus`). */
export const LIVE_VERDICTS: ReadonlySet<string> = new Set(['applied', 'unchanged']);

export type VerdictStatus =
  | 'applied'
  | 'unchanged'
  | 'failed'
  | 'mismatch'
  | 'unverified'
  | 'timeout'
  | 'beyond-capacity'
  | 'session-changed'
  | 'connection-lost'
  | 'interrupted'
  | 'not-observed'
  | 'restart-required'
  | 'rewritten'
  | 'not-watched'
  | 'paused'
  | 'hold-kept';

/** VERIFY_RESULT JSON (protocol.md "VERIFY"): every field is a string. */
export interface VerifyReceipt {
  requestId: string;
  sessionId: string;
  className: string;
  expectedSha256: string;
  observedSha256: string;
  status: 'applied' | 'running' | 'not_observed' | 'failed' | 'mismatch' | 'unverified';
  source: string;
  detail: string;
  completedAt: string;
}

/**
 * The kinds of evidence a class file's bytes are live by: classes/evidence.ts keeps the rule,
 * docs/evidence.md says it. `recorded` and `restart` stand on one of the others (`of`).
 */
export type EvidenceKind = 'receipt' | 'recorded' | 'pre-start' | 'watcher-saw' | 'not-loaded' | 'restart';

/**
 * Why a class file is not live by the evidence rule (classes/evidence.ts), a kind each with what
 * its words need (report/ has them).
 */
export type NotLiveWhy =
  /** The agent's own answer (failed, mismatch, unverified, no answer): its detail says. */
  | { kind: 'answer' }
  /** The file changed again after it was read. */
  | { kind: 'rewritten' }
  /** No attempt with bytes newer than the ones the app has. */
  | { kind: 'not-attempted' }
  /** No attempt, but the folder is not shown watched. */
  | { kind: 'not-shown-watched' }
  /**
   * No attempt, but the JVM does not load this file (its folder is not on the class path, or an earlier
   * entry holds the class), or (`unknown`) may not: an earlier entry cannot be told (unreadable, a wildcard, changed since the start).
   */
  | { kind: 'loads-elsewhere'; unknown?: true }
  /** No attempt, but its bytes came to the file after the JVM started (its watcher's baseline then may be bytes it never loaded). */
  | { kind: 'old-mtime' }
  /** No attempt, but the OS refused some of the agent's registrations. */
  | { kind: 'refused-registrations'; refused: number }
  /** No attempt, but the agent had changes pending (or a hold) before this build. */
  | { kind: 'busy-before-build' }
  /** No attempt, but the file is too recent for the watcher to have dispatched it. */
  | { kind: 'too-recent'; noticeMs: number }
  /**
   * No attempt, but a receipt may have been evicted: HEALTH's reloads and failures (`counted`, when
   * it said) and the classes it may not count (`uncounted`) reach the `capacity` the agent keeps.
   */
  | { kind: 'receipts-unbounded'; counted: number | undefined; uncounted: number; capacity: number }
  /**
   * An answer (a receipt, or no attempt) while another class file of its binary name, in another
   * class output directory, moved: the agent may not have reloaded the class from it yet.
   */
  | { kind: 'other-copy-moved' }
  /** A class new to the JVM that DIAGNOSE does not show unloaded (`loaded`: it said loaded; `other-file`: it described another file). */
  | { kind: 'new-not-shown'; because: 'loaded' | 'other-file' | 'no-word' | 'class-path' };

/**
 * Why the agent kept a build's hold after acknowledging its `ok` (agent ReloadQueue.acceptBuild):
 * its capture could not read `file` (a held class file the build deleted, say: every later ok fails
 * on that path until a class file exists there again), or its scan did not finish (its file watcher
 * was not running: starting, or stopped).
 */
export type HoldKeptCause = { kind: 'unreadable-file'; file: string } | { kind: 'scan-unfinished' };

/**
 * Why a class has its verdict, a kind each with its facts (report/verdict-words.ts `verdictWords`
 * makes the words). Where the agent's own text is part of it, it is the verdict's `agentDetail`.
 */
export type VerdictWhy =
  /** No words: a class no round answered yet (a placeholder), or a round with no class. */
  | { kind: 'none' }
  /** The agent's receipt speaks, with `status` as it sent it: its `agentDetail`, or what its status says when that is empty. */
  | { kind: 'receipt'; status: VerifyReceipt['status'] }
  /** The agent applied other bytes (a final mismatch): which, from which source. */
  | { kind: 'mismatch'; observedSha256: string; source: string }
  /** The round's deadline came first; `last`: the last receipt's status (none came: undefined). */
  | { kind: 'deadline'; last?: string }
  /** A single ask still not final `settleByMs` after asking, with the last status (`unanswered` when none came). */
  | { kind: 'settle-by'; last: string; settleByMs: number }
  /** The round was interrupted (a signal), the connection closed, or the receipts beyond the agent's `capacity`. */
  | { kind: 'interrupted' }
  | { kind: 'connection-closed' }
  | { kind: 'beyond-capacity'; capacity: number }
  /** The agent session changed (`from` -> `to`) during the round: the app restarted. */
  | { kind: 'session-changed'; from: string; to: string }
  /** The agent's state ended the wait (session/check.ts): reloads paused, its hold kept after `ok`, or its capture over without an attempt. */
  | { kind: 'paused' }
  | { kind: 'hold-kept'; cause: HoldKeptCause }
  | { kind: 'capture-over' }
  /** An `applied` receipt that completed at `completedAt` (ISO), before this build's hold. */
  | { kind: 'applied-earlier'; completedAt: string }
  /** Live as new to the JVM: DIAGNOSE says it has not loaded it; `receipt`: the receipt's status (empty: none). */
  | { kind: 'new-to-jvm'; receipt: string }
  /** Live by a single ask's `not_observed`: the watcher saw identical bytes, or a rewrite kept bytes known live. */
  | { kind: 'watcher-saw' }
  | { kind: 'kept-unseen' }
  /** The class file changed again after it was checked. */
  | { kind: 'rewritten' }
  /** A single ask's `not_observed` the evidence rule does not read as live, by `why` (`rechecked`: bytes known live, rewritten). */
  | { kind: 'not-live'; why: NotLiveWhy; rechecked: boolean }
  /** The agent never reloads it: it does not watch `dir`, or its excludePatterns `pattern` skips `fileName`. */
  | { kind: 'not-watched'; dir: string }
  | { kind: 'excluded'; pattern: string; fileName: string }
  /** Read against a new JVM's start (after a restart): gone, other bytes, at its path since before the start, or VERIFY applied there. */
  | { kind: 'new-jvm'; sight: 'gone' | 'other-bytes' | 'pre-start' | 'receipt' }
  /** The app's agent is gone (a watch): not proven in its JVM until it is back. */
  | { kind: 'away' }
  /** `verify`: live without asking, by `evidence`; or in a folder the JVM does not load from and the agent does not watch. */
  | { kind: 'live-without-asking'; evidence: { by: EvidenceKind; of?: EvidenceKind } }
  | { kind: 'outside' }
  /** `of`, and the agent's PENDING entry that names the class (`entry`: the agent session's history, not these bytes'). */
  | { kind: 'pending'; entry: string; of: VerdictWhy }
  /** `of`, and what DIAGNOSE said of the class (`words`), for a verdict that is not live. */
  | { kind: 'diagnosed'; words: readonly string[]; of: VerdictWhy };

/** Why the agent never reloads a class file (its folder is not watched, or its name excluded). */
export type NeverReloads = Extract<VerdictWhy, { kind: 'not-watched' | 'excluded' }>;

/** The verdict for one class. */
export interface ClassVerdict {
  className: string;
  path: string;
  sha256: string;
  status: VerdictStatus;
  /** Why it has this status (its words: report/verdict-words.ts). */
  why: VerdictWhy;
  /** The agent's own text about it: its receipt's `detail`, when the round judged it by a receipt. */
  agentDetail?: string;
  /** The last receipt seen for this class, if any. */
  receipt?: VerifyReceipt;
  /** The evidence that makes it live, when it is (`of`: the kind a `recorded` or `restart` one stands on). */
  evidence?: { by: EvidenceKind; of?: EvidenceKind };
}

/** The outcome of a VERIFY round. `verdicts` is in the order of the targets. */
export interface VerifyReport {
  verdicts: ClassVerdict[];
  /** Set when a receipt named another session: the app restarted. */
  sessionChangedTo?: string;
  /** True when more classes changed than the agent keeps receipts for and the rest were not awaited. */
  capacityLimited: boolean;
  /** How many receipts the agent keeps (protocol.md "VERIFY"). */
  capacity: number;
  /** VERIFY requests sent, including re-asks. */
  requests: number;
  /** Replies presumed lost (asked again). */
  lostReplies: number;
  elapsedMs: number;
}

/** RELOAD actions are lower case and case-sensitive (protocol.md "RELOAD"). */
export type ReloadAction = 'pause' | 'resume' | 'status';

/** RELOAD_STATE fields (protocol.md "RELOAD"). */
export interface ReloadState {
  action: ReloadAction;
  paused: boolean;
  pendingClasses: number;
  pendingActions: number;
  buildHold: 'none' | 'named' | 'legacy';
}

/** Whether the agent watches one class output directory of the project here. */
export interface DirCoverage {
  dir: string;
  /** true: a watched directory is it, contains it or lies inside it; false: not watched; null: unknown (the agent's sample is truncated or empty). */
  watched: boolean | null;
}

/**
 * What a reconnect after a lost connection found: nobody answering (`gone`: the app stopped, is
 * restarting or hangs), the same agent session (its hold, if any, is still there), or a new
 * session (the app restarted; a hold is gone with the old session).
 */
export type AgentAfterLoss = { kind: 'gone' } | { kind: 'same-session'; sessionId: string } | { kind: 'restarted'; sessionId: string };

/** What the hold was left as: released (or never taken), held by our owner token, or unknown. */
export type HoldLeft = 'none' | 'held' | 'unknown';

/**
 * What a session waits for before the agent is usable (agent/handshake.ts): a port file to
 * appear, its port to answer, a free client slot, the agent to finish starting.
 */
export type AgentWait =
  | { kind: 'port-file' }
  | { kind: 'port'; port: number }
  | { kind: 'slot'; port: number }
  | { kind: 'starting'; port: number }
  /** Its file watcher to start (DOCTOR `watcherState` "starting": the agent's `startupDelaySec`). */
  | { kind: 'watcher'; port: number };

/**
 * The agent's DOCTOR evidence (protocol.md "DOCTOR"): the shape the agent sends, which the
 * `doctor` outcome carries as it came. The agent's grammar parses replies with this schema;
 * the `--json` schemas describe the `doctor` field with it.
 */

/** DOCTOR_RESULT JSON with status "observed". Unknown fields are kept. */
export const doctorObservedSchema = z.looseObject({
  requestId: z.string(),
  status: z.literal('observed'),
  detail: z.optional(z.string()),
  sessionId: z.string(),
  agentVersion: z.string(),
  pid: z.string(),
  javaVersion: z.string(),
  vmName: z.string(),
  workingDirectory: z.string(),
  watcherState: z.string(),
  buildHold: z.string(),
  watchedDirectoryCount: z.number(),
  unwatchableDirectoryCount: z.number(),
  watchSampleTruncated: z.boolean(),
  watchedDirectories: z.array(z.string()),
  buildOwnershipSupported: z.boolean(),
  verifySupported: z.boolean(),
  scanSupported: z.boolean(),
  reloadConfirmed: z.boolean(),
});
export type DoctorObserved = z.infer<typeof doctorObservedSchema>;

/** The agent's own event levels a run shows while it waits (marked as the agent's; `--quiet` hides them). */
export const SHOWN_AGENT_LEVELS: ReadonlySet<string> = new Set(['RELOAD', 'STRUCTURAL_RELOAD', 'COMPILE', 'WARN', 'ERROR']);

/**
 * The app's JVM loads class `className` of class output directory `dir` from the jar `jar`
 * instead (absolute paths; classes/jar-run.ts): `java -jar app.jar`, or a jar before `dir` on
 * its class path.
 */
export interface JarRun {
  jar: string;
  dir: string;
  className: string;
}
