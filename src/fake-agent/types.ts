/**
 * Public types of the fake reclazz agent. Section names refer to protocol.md, the agent's
 * status-socket contract as the running agent implements it.
 */

/** Final status of one reload attempt, as later reported by VERIFY (protocol.md, "VERIFY"). */
export type FinalStatus = 'applied' | 'failed' | 'unverified';

/** Every status a VERIFY_RESULT can carry (protocol.md, "VERIFY"). */
export type VerifyStatus = FinalStatus | 'running' | 'not_observed' | 'mismatch';

/** Kind of build hold (protocol.md, "BUILD" and "DOCTOR" `buildHold`). */
export type HoldKind = 'none' | 'named' | 'legacy';

/** The Java DOCTOR reports (protocol.md, "DOCTOR": `javaVersion`, `vmName`). */
export interface JavaFacts {
  /** As the JVM's `java.version`, e.g. `17.0.15`. */
  version: string;
  /** As the JVM's `java.vm.name`, e.g. `OpenJDK 64-Bit Server VM`. */
  vmName: string;
}

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
  portFile?: string | undefined;
  /** TCP port; default 0 = ephemeral. Always listens on 127.0.0.1 only. */
  port?: number | undefined;
  /**
   * Class output directories the agent watches (relative paths resolve against process.cwd()),
   * the agent's `watchDirs=`. Snapshotted at start: those classes count as loaded. One that does
   * not exist when the application starts is never watched (agent SpringBootContext.initialize).
   * Default none: the agent's own rule (the class path's Maven and Gradle output directories, else
   * the app folder's `target/classes` and `build/classes/java/main`).
   */
  watchDirs?: string[] | undefined;
  /**
   * The agent's `excludePatterns=`: class file names (globs, `*` and `?`, the whole file name,
   * case-sensitive) its watcher skips: never captured, pending or reloaded (agent
   * config/AgentConfig.java, watcher/FileWatcher.java). Default none.
   */
  excludePatterns?: string[] | undefined;
  /** HEARTBEAT period in ms, fixed rate; default 10000; 0 or less disables heartbeats. */
  heartbeatMs?: number | undefined;
  /** `agent` field of CONNECTED; default `'1.4.0-fake'`. `null` simulates an agent from before build ownership: CONNECTED has no `agent`, `owner=` is accepted but not enforced and never echoed, VERIFY/DOCTOR/RELOAD get no reply. */
  agentVersion?: string | null | undefined;
  /** `version` field of CONNECTED; default 1. */
  protocolVersion?: number | undefined;
  /** Session id reported by VERIFY/DOCTOR; default a random UUID (a new one on restart()). */
  sessionId?: string | undefined;
  /** Delay in ms between the `ok` receipt (or SCAN / resume) and the capture (the real agent: ~500 ms debounce + ~100 ms batch); default 100. */
  captureDelayMs?: number | undefined;
  /** How long in ms a captured class reads `running` before its final status; default 50. */
  reloadMs?: number | undefined;
  /** End every sent line with `\r\n` instead of `\n` (a Windows JVM). */
  crlf?: boolean | undefined;
  /** Handlers never wired: BUILD, VERIFY, DOCTOR and RELOAD get no reply and change nothing; SCAN does nothing. Same as `startingMs: Infinity, startingDoctor: 'silent'` (finishStarting() ends it). */
  notReady?: boolean | undefined;
  /**
   * Final status of a reload attempt of a class that was loaded at start; `undefined` => `'applied'`.
   * Classes not loaded before the reload are never `'applied'` (see `newBean`). A returned `'unverified'`
   * broadcasts a WARN during the batch, making every class of it `unverified` (protocol.md,
   * "VERIFY"); a `'failed'` class's ERROR is reported after the batch and taints nothing else.
   * Also decides the classes the watcher reloads on its own (`autoReload`).
   */
  verifyStatus?: ((className: string, sha256: string) => FinalStatus | undefined) | undefined;
  /** Called for every received command line (after `\r` removal) before processing; return an action to misbehave, or undefined for normal processing. */
  intercept?: ((cmd: InterceptCommand) => InterceptAction | undefined) | undefined;
  /** Classes whose latest receipt the VERIFY ledger keeps; default 512 (least recently updated evicted first). */
  ledgerSize?: number | undefined;
  /**
   * Lines queued per client while its socket is not draining; default 1000. Beyond it lines are
   * dropped (receipts included) and `Status client <id> is not keeping up; dropped <n> event(s)`
   * is broadcast as WARN at the first drop and every 1000th; during a batch it makes the batch `unverified`.
   */
  outboxLimit?: number | undefined;
  /** Simultaneous clients; default 5. One more is accepted and closed before CONNECTED. */
  maxClients?: number | undefined;
  /**
   * Re-hash a watched class file in a scan only when its size, mtime, ctime or inode moved
   * since it was last hashed (a write always moves ctime, so same-size, same-mtime rewrites
   * are still seen). Answers are the same as without it; for benchmarks with tens of
   * thousands of classes; default false.
   */
  scanCache?: boolean | undefined;
  /** A hold older than this many ms without a BUILD result gets one WARN broadcast; default 300000 (5 minutes). */
  holdWarnMs?: number | undefined;
  /**
   * Fault switch: called at each capture; a returned message makes that capture fail as an
   * unreadable class output would (protocol.md "BUILD": a read or scan failure leaves the
   * whole build held for another BUILD ok). Root reads every file, so tests use this instead of chmod.
   */
  failCapture?: (() => string | undefined) | undefined;

  // ---- the application's JVM (protocol.md, "DOCTOR": pid, workingDirectory) -----------------

  /**
   * Start a real stand-in process for the app's JVM (an idle `/bin/sh` + `cat`; node on Windows; cwd `appDir`)
   * before the classes are snapshotted, and again on restart(); DOCTOR reports its pid and cwd.
   * It exits when the fake stops, and also when the fake's process dies (its stdin closes).
   * Default true. false: DOCTOR reports this process's pid and `appDir`.
   */
  standInJvm?: boolean | undefined;
  /**
   * The app's folder: the stand-in JVM's working directory. Default: the folder the agent would
   * write `portFile` into without `portFile=` (`<dir>` for `<dir>/.reclazz/agent.port` and
   * `<dir>/.idea/reclazz/agent.port`, created if missing), else process.cwd().
   */
  appDir?: string | undefined;
  /**
   * The Java DOCTOR reports (`javaVersion`; `vmName`, marked as the fake agent's). Default: what
   * `java -version` of the `java` on PATH says (the Java an app started here would run on), else
   * `unknown`. Tests pin it.
   */
  java?: JavaFacts | undefined;
  /** DOCTOR `pid` instead of the stand-in's, e.g. a pid not visible here (an app in a container). */
  reportedPid?: string | undefined;
  /** DOCTOR `workingDirectory` instead of the stand-in's (mapped) cwd, e.g. a folder outside the project. */
  reportedWorkingDirectory?: string | undefined;
  /**
   * Agent path -> local path, as `--path-map` takes them (`{ '/app': '/home/me/shop' }`): DOCTOR and
   * VERIFY report paths in the agent's form. Agent paths must be absolute. Default: no mapping.
   */
  pathMap?: Record<string, string> | undefined;
  /**
   * DOCTOR `watchSampleTruncated` true whatever the sample. Else the sample is the agent's
   * (watcher/FileWatcher.java doctorEvidence): the first 8 registrations in String order. Default false.
   */
  forceWatchSampleTruncated?: boolean | undefined;

  // ---- the application's command line (what a client reads of the JVM, agent config/AgentConfig.java) ----

  /**
   * The option string after `-javaagent:<jar>=` (`''`: none). Default: `watchDirs=`, then
   * `excludePatterns=` and `startupDelaySec=` when set, as the Maven plugin writes it. The fake
   * still watches `watchDirs` whatever this says.
   */
  agentArgs?: string | undefined;
  /**
   * `autoCompile=true` (agent ReclazzAgent.handleJavaBatch, IncrementalCompiler): receipts carry the
   * agent's own compiled bytes, so a build's hash reads `mismatch`. Only the receipts are modelled.
   */
  autoCompile?: boolean | undefined;
  /**
   * The stand-in is a test JVM the attach plugins put the agent on: Maven Surefire's forked
   * booter (`-jar .../surefirebooter-<stamp>.jar`) or Gradle's test worker (its main class). Its
   * agent is a full agent with its own port file (agent-facts "Test JVMs").
   */
  testRunner?: 'surefire' | 'gradle' | undefined;
  /** The stand-in's `-cp` entries (in the agent's paths). Default: `watchDirs`, else the app folder's class output directories. */
  classPath?: string[] | undefined;
  /**
   * The stand-in runs from this jar (`java -javaagent:... -jar <jar>`, as `java -jar target/app.jar`):
   * its class path is the jar alone, and no `-cp` is given. The jar itself is the caller's.
   */
  jar?: string | undefined;
  /**
   * Where the stand-in carries `-javaagent`: on its command line (default), in its
   * `JAVA_TOOL_OPTIONS` environment variable, or nowhere (`'attached'`: loaded at run time,
   * so its options cannot be read from the process).
   */
  agentOn?: 'command-line' | 'JAVA_TOOL_OPTIONS' | 'attached' | undefined;

  // ---- start-up (protocol.md, "Commands": early in agent start-up) ---------------------------

  /**
   * For this many ms after each start the handlers are not all wired, in the agent's order
   * (agent/ReclazzAgent.java initialize): first none (DOCTOR per `startingDoctor`), then from
   * `verifyWiredMs` VERIFY and DIAGNOSE. `Infinity`: until finishStarting(). Default 0.
   */
  startingMs?: number | undefined;
  /** When VERIFY is wired, in ms after start (before `startingMs`; agent/ReclazzAgent.java wires it first). Default: half of `startingMs` (never when that is `Infinity`). */
  verifyWiredMs?: number | undefined;
  /**
   * The watcher's start-up delay in ms (`startupDelaySec`; watcher/FileWatcher.java
   * startWatching): DOCTOR says "starting", a BUILD ok's scan waits (`scanTimeoutMs` at most),
   * SCAN does nothing; then files changed since start reload unless held or paused.
   * `Infinity`: until startWatching(). Default 0.
   */
  watcherStartMs?: number | undefined;
  /**
   * How long the stand-in JVM boots before it loads the app's classes, in ms from its start (the
   * agent's JVM_START_MILLIS, taken before the boot). More than a file stamp's lag (10 ms), so a
   * class file written after the load is never stamped before the start. Default 20.
   */
  jvmBootMs?: number | undefined;
  /**
   * How long a BUILD ok's scan waits for a watcher that is not watching (starting, or stopped), in
   * ms (agent FileWatcher.scanNow: 10 s). Then ERROR `Accepting build output failed: ...; build
   * remains held ...` and the hold stays with its owner. Default 10000.
   */
  scanTimeoutMs?: number | undefined;
  /** DOCTOR while starting: `'observed'` (the starting shape: no session, nothing supported) or `'silent'`. Default `'observed'`. */
  startingDoctor?: 'observed' | 'silent' | undefined;
  /** Write the port file only this many ms after start (the socket listens at once). Default 0. */
  portFileDelayMs?: number | undefined;
  /**
   * The port file is written at once, but nothing listens on its port (connections are refused)
   * until this many ms after start. The port is reserved by a short bind first, so another
   * process could take it meanwhile: then {@link FakeAgent.listening} rejects. Default 0.
   */
  listenDelayMs?: number | undefined;
  /**
   * How long the app's JVM takes to end after stop() (SIGTERM), in ms: the agent's shutdown hook
   * runs at once (agent ReclazzAgent's `Reclazz-Shutdown`: StatusServer.stop() closes the socket and
   * deletes the port file), and the stand-in JVM (DOCTOR's pid) ends only this much later. Not the
   * agent's doing: the JVM's own shutdown time (an app's other shutdown hooks, a graceful stop). Default 0.
   */
  shutdownMs?: number | undefined;

  // ---- clients (protocol.md, "Slots linger") ------------------------------------------------

  /**
   * A closed client keeps its slot until the second line written to it fails (up to two
   * heartbeats); meanwhile a 6th connection is closed at once. Default false.
   */
  lingeringSlots?: boolean | undefined;

  // ---- reload batches (protocol.md, "Batch-wide verdicts", "VERIFY") ------------------------

  /**
   * True for a class file the agent cannot read (agent ReloadQueue.capture), as for a held path
   * the build deleted (the agent ignores DELETE events). A held capture then broadcasts ERROR
   * `Failed to read class file <path>: ...` and keeps the hold with its owner although `ok` was
   * acknowledged, until the file reads again; without a hold the file is skipped. Default: none.
   */
  unreadableClassFile?: ((path: string, className: string) => boolean) | undefined;
  /**
   * The superclass change of `className` with these bytes, or undefined (real class files are also
   * compared by themselves). As agent reload/StructuralReloader: a WARN `<class>: superclass change
   * not applied; restart required. ...` makes the batch `unverified`; with `refused` the save is
   * `failed` (`... restart required to pick it up.`, cut to 200 characters). PENDING then lists the
   * class for the session (agent ui/RestartLedger.java).
   */
  restartRequired?: ((className: string, sha256: string) => SuperclassChange | undefined) | undefined;
  /**
   * A new class the agent registers as a Spring bean (agent SpringNewBeanRegistrar): `registered`
   * (`unverified`, loaded since) or `refused` (`failed`). Default: a plain new class
   * (ClassReloader.handleNewClass: `unverified`, not loaded until first use). Not counted in HEALTH.
   */
  newBean?: ((className: string) => 'registered' | 'refused' | undefined) | undefined;
  /**
   * The agent's own watcher (protocol.md, "Without a hold the agent reloads on its own"): without a
   * hold or pause, a change reloads `watchDebounceMs` after it settles. Default false.
   */
  autoReload?: boolean | undefined;
  /**
   * Quiet time of the watcher before it captures, in ms; default 500, the agent's `debounceMs`
   * (config/AgentConfig.java). Another value is on the stand-in's command line as `debounceMs=`.
   */
  watchDebounceMs?: number | undefined;
  /** How often the watcher looks at the watched directories, in ms; default 100. */
  watchPollMs?: number | undefined;
  /**
   * Folders below the watched directories whose watch registration the OS refuses (the inotify
   * limit; agent watcher/FileWatcher.java): changes there are never seen, and DOCTOR counts them
   * in `unwatchableDirectoryCount`. Default none.
   */
  refuseWatch?: string[] | undefined;

  // ---- a hostile or broken peer --------------------------------------------------------------

  /** Misbehave on purpose: each switch is independent. Default: none. */
  hostile?: HostileOptions | undefined;
}

/** A superclass change the agent cannot apply without a restart (see {@link FakeAgentOptions.restartRequired}). */
export interface SuperclassChange {
  /** The superclass the application loaded, and the one these bytes name (binary names). */
  from: string;
  to: string;
  /** Why the rest of the class cannot be applied without the new superclass: the save is refused (`failed`). */
  refused?: string;
}

/** DOCTOR string fields a hostile peer can taint (requestId and status never are). */
export type DoctorStringField =
  | 'detail'
  | 'sessionId'
  | 'agentVersion'
  | 'pid'
  | 'javaVersion'
  | 'vmName'
  | 'workingDirectory'
  | 'watcherState'
  | 'buildHold'
  | 'watchedDirectories';

/**
 * Switches of a hostile peer. Tainted fields get `payload` appended (still valid JSON: control
 * characters are JSON-escaped, as the agent does; U+009B and bidi controls go out raw in UTF-8).
 */
export interface HostileOptions {
  /** Text appended to tainted fields; default {@link HOSTILE_PAYLOAD} (OSC title, clear screen, colours, CR, LF, DEL, U+009B, U+202E, U+2066). */
  payload?: string | undefined;
  /** The level of every broadcast event (HEARTBEAT included; CONNECTED and requester-only replies are not broadcasts). */
  levels?: boolean | undefined;
  /** The message of every broadcast event, and CONNECTED's message and `agent` field. */
  messages?: boolean | undefined;
  /** DOCTOR string fields: true for all but requestId and status (each watched directory too), or the listed ones. */
  doctor?: boolean | DoctorStringField[] | undefined;
  /** VERIFY_RESULT `detail` and `source`. */
  verify?: boolean | undefined;
  /** RELOAD_STATE replies (after their last field) and the messages of RELOAD / STRUCTURAL_RELOAD events. */
  reload?: boolean | undefined;
  /** HEALTH, PENDING and DIAGNOSE lines. */
  health?: boolean | undefined;
  /** Right after CONNECTED, send one line of `bytes` (default 1 MiB) starting like an event, with no newline unless `newline`. */
  oversizedLine?: boolean | { bytes?: number; newline?: boolean } | undefined;
  /** Right after CONNECTED, send `events` INFO events (default 100000) as fast as the socket takes them. */
  flood?: boolean | { events?: number } | undefined;
  /** Accept the connection (all, or those for which this returns true; 1-based accept order) and never send anything, CONNECTED included. */
  silentConnect?: boolean | ((connection: number) => boolean) | undefined;
  /** Accept the connection (all, or the chosen ones) and send half a CONNECTED line, then nothing more. */
  halfLine?: boolean | ((connection: number) => boolean) | undefined;
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
  /**
   * Simulate a restart of the app's JVM as the real agent goes through it: as restart(), but the
   * port file is deleted, the socket closed, and a new port bound (ephemeral unless `port` is
   * fixed) and written to the port file. The CLI does this on SIGHUP.
   */
  restartJvm(): Promise<void>;
  /** Close the server and every client, cancel all timers, delete the port file (whatever port it names, as the agent does). Idempotent. */
  stop(): Promise<void>;
  /** Connected clients (those that received CONNECTED and are still open). */
  clientCount(): number;
  /** Slots taken against the client limit: open clients plus, with `lingeringSlots`, closed ones not yet noticed. */
  slotsInUse(): number;
  /** Every client holding a slot, in accept order. */
  clients(): ClientInfo[];
  /** The stand-in JVM (changes on restart()), or undefined with `standInJvm: false`. */
  readonly jvm: { pid: number; cwd: string } | undefined;
  /** Resolves once the socket listens (at once, or after `listenDelayMs`); rejects if the delayed bind fails. */
  readonly listening: Promise<void>;
  /** True while the handlers are not all wired yet (`startingMs`, `notReady`). */
  readonly starting: boolean;
  /** Wire the handlers now, ending `startingMs` / `notReady` early (the watcher then starts after `watcherStartMs`). */
  finishStarting(): void;
  /** True once the watcher has started (`watcherStartMs` after wiring). */
  readonly watching: boolean;
  /** Start the watcher now, ending `watcherStartMs` early (once wired and still starting; does nothing else). */
  startWatching(): void;
  /**
   * The watcher's loop ends for good, as an IOException ends the agent's (watcher/FileWatcher.java
   * startWatching): DOCTOR says `stopped`; a BUILD ok's scan then fails after `scanTimeoutMs` and the
   * hold stays with its owner, until restart().
   */
  stopWatching(): void;
}

/** One client as seen by the agent. */
export interface ClientInfo {
  /** Connection id (1, 2, ... in accept order). */
  id: number;
  /** False once the peer closed (a lingering slot). */
  open: boolean;
  /** Lines waiting in its outbox. */
  queued: number;
  /** Lines dropped because its outbox was full. */
  dropped: number;
}
