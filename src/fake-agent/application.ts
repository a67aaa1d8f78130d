/**
 * The application side of the fake agent: the stand-in JVM and what the agent does inside it
 * (its wiring in start-up order, the watcher, the build hold, capture and reload). The status
 * server (server.ts) adds the connections and the commands on top.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { defaultOutputDirs, excludedBy, registeredDirectories } from './paths.js';
import { type ClassFile, isDirectory } from './capture.js';
import { doctorJson, type WatcherState, type Wiring } from './doctor.js';
import { type HoldState, NO_HOLD } from './ledger.js';
import { installedJava, type StandIn, startStandIn } from './jvm.js';
import { ClassReloader } from './reloader.js';
import { jvmLine, localClassPath, type Settings } from './settings.js';
import { LoadedClasses } from './loaded.js';
import { registerTruth } from './truth.js';
import type { HoldEvent, HoldLogEntry, HoldSnapshot, JavaFacts } from './types.js';

/** The agent inside the application: its state, reset by {@link FakeApplication.restartApplication}. */
export abstract class FakeApplication {
  readonly holdLog: HoldLogEntry[] = [];
  protected capturesValue = 0;
  /**
   * Class file paths pending for the hold (agent ReloadQueue): noted at each started/failed and
   * capture, kept until a capture succeeds. A DELETE event is ignored, so a path the build then
   * deleted stays pending and fails every later capture (agent-facts, "A capture that cannot
   * read a held class file").
   */
  protected readonly heldPaths = new Set<string>();
  /** Application timers: cancelled by restart() and stop(). */
  protected readonly timers = new Set<NodeJS.Timeout>();
  protected standIn: StandIn | undefined;
  /** The Java DOCTOR reports: settled at the first start, kept across restarts. */
  private java: JavaFacts = { version: 'unknown', vmName: 'unknown' };

  // Application state, reset by restart().
  protected wiring: Wiring = 'all';
  protected watcherState: WatcherState = 'watching';
  /** When the stand-in JVM (the application) started, epoch ms. */
  protected jvmStartMs = Date.now();
  /** The watched directories that existed when the application started: only those are ever watched (agent SpringBootContext). */
  protected roots: string[] = [];
  protected holdState: HoldState = NO_HOLD;
  protected holdWarning: NodeJS.Timeout | undefined;
  /** A scheduled capture, or (with `scanWaiting`) the timeout of an ok whose scan waits for the watcher to start. */
  protected pendingCapture: NodeJS.Timeout | undefined;
  protected scanWaiting = false;
  protected paused = false;
  protected readonly reloader: ClassReloader;
  /** What the application's JVM loaded and runs (loaded.ts): the tests' truth oracle reads it (truth.ts). */
  private readonly jvmClasses = new LoadedClasses();

  constructor(
    protected readonly settings: Settings,
    protected session: string,
  ) {
    this.reloader = new ClassReloader({
      excluded: settings.excludePatterns.length > 0 ? excludedBy(settings.excludePatterns) : undefined,
      refused: settings.refuseWatch,
      reloadMs: settings.reloadMs,
      ledgerSize: settings.ledgerSize,
      scanCache: settings.scanCache,
      verifyStatus: settings.verifyStatus,
      restartRequired: settings.restartRequired,
      newBean: settings.newBean,
      autoCompile: settings.autoCompile,
      reportPath: settings.reportPath,
      jvm: this.jvmClasses,
      later: (ms, run) => void this.later(ms, run),
      broadcast: (level, message) => this.broadcast(level, message),
    });
    registerTruth(this, this.jvmClasses);
  }

  get captures(): number {
    return this.capturesValue;
  }

  get jvm(): { pid: number; cwd: string } | undefined {
    return this.standIn && { pid: this.standIn.pid, cwd: this.standIn.cwd };
  }

  get starting(): boolean {
    return this.wiring !== 'all';
  }

  get watching(): boolean {
    return this.watcherState === 'watching';
  }

  /** Sends an event to every connected client. */
  abstract broadcast(level: string, message: string, extra?: Record<string, unknown>): void;

  /**
   * The application's (re)start: its JVM, the classes it loads, the agent's wiring in the
   * agent's order (ReclazzAgent.initialize): VERIFY after `verifyWiredMs`, the rest after
   * `startingMs`, and the watcher `watcherStartMs` after that.
   */
  protected async startApplication(): Promise<void> {
    const { settings } = this;
    this.java = settings.java ?? (await installedJava());
    const booting = Date.now();
    // The JVM's start (agent FileWatcher JVM_START_MILLIS: RuntimeMXBean.getStartTime) is its process's, before it
    // boots, as a client reads it from the process; the watcher's start-up dispatch compares class files' mtimes to it.
    this.jvmStartMs = booting;
    this.standIn = settings.standInJvm ? await startStandIn(settings.appDir, jvmLine(settings)) : undefined;
    await sleepUntil(booting + settings.jvmBootMs);
    this.jvmClasses.start(localClassPath(settings), settings.jar);
    const given = settings.watchDirs.length > 0 ? settings.watchDirs : defaultOutputDirs(settings.classPath, settings.appDir);
    this.roots = given.filter(isDirectory);
    this.reloader.reset(this.roots);
    this.wiring = 'none';
    this.watcherState = 'starting';
    if (settings.startingMs <= 0) return this.finishStarting();
    if (settings.verifyWiredMs <= 0) this.wiring = 'verify';
    else if (Number.isFinite(settings.verifyWiredMs)) this.later(settings.verifyWiredMs, () => this.wireVerify());
    if (Number.isFinite(settings.startingMs)) this.later(settings.startingMs, () => this.finishStarting());
  }

  protected wireVerify(): void {
    if (this.wiring === 'none') this.wiring = 'verify';
  }

  finishStarting(): void {
    if (this.wiring === 'all') return;
    this.wiring = 'all';
    const delay = this.settings.watcherStartMs;
    if (delay <= 0) this.startWatching();
    else if (Number.isFinite(delay)) this.later(delay, () => this.startWatching());
  }

  /**
   * The watcher starts (agent FileWatcher.startWatching after its start-up delay): it registers
   * the watched directories (registerDirectories), hashes every class file as its baseline, and
   * dispatches those whose mtime is later than the JVM's start (dispatchClassesChangedDuringStartup),
   * reading them as they are then: reloaded at once unless a hold or a pause keeps them pending (agent
   * ReloadQueue.submitClassBatch returns while holding). A BUILD ok whose scan waited for it gets
   * its capture now. A watcher that stopped never starts again.
   */
  startWatching(): void {
    if (this.wiring !== 'all' || this.watcherState !== 'starting') return;
    this.watcherState = 'watching';
    const count = this.roots.length;
    this.broadcast('INFO', `Watching ${count} ${count === 1 ? 'directory' : 'directories'}`);
    let changed: ClassFile[] = [];
    try {
      changed = this.reloader.armWatcher(this.jvmStartMs);
    } catch {
      // a file vanished meanwhile: the next capture sees what is there
    }
    if (changed.length > 0) {
      this.broadcast('INFO', `${changed.length} class file(s) changed while the JVM was starting — reloading them so the running code matches disk`);
      if (this.holdState.kind === 'none' && !this.paused && !this.pendingCapture) this.reloader.admit(this.readable(changed));
    }
    if (this.scanWaiting) {
      this.scanWaiting = false;
      this.scheduleCapture();
    }
  }

  /**
   * The watcher's loop ends for good (agent FileWatcher.startWatching: an IOException ends it with
   * ERROR `FileWatcher error: ...`): DOCTOR says `stopped`, nothing reloads, and a BUILD ok's scan
   * waits for a loop that never comes (FileWatcher.scanNow), so the capture fails and the hold stays
   * with its owner (ReloadQueue.acceptBuild) until the app restarts.
   */
  stopWatching(): void {
    if (this.wiring !== 'all' || this.watcherState === 'stopped') return;
    this.watcherState = 'stopped';
    this.broadcast('ERROR', 'FileWatcher error: IOException: User limit of inotify watches reached');
  }

  /** The watcher's registrations the OS accepted: every folder under the roots but those it refused. */
  protected registered(): string[] {
    return registeredDirectories(this.roots).filter((dir) => !this.settings.refuseWatch.includes(dir));
  }

  /**
   * RELOAD status's `pendingClasses` (agent ReloadQueue): what the watcher dispatched that waits,
   * held for a build or paused. A change still in the watcher's debounce is not in the queue yet;
   * without its own watcher (`autoReload` off) the fake counts every change, as one pending.
   */
  pendingClasses(): number {
    const queued = this.holdState.kind !== 'none' || this.paused || !this.settings.autoReload;
    return queued ? this.reloader.countChanged() : 0;
  }

  hold(): HoldSnapshot {
    const { kind, owner } = this.holdState;
    const files = kind === 'none' ? 0 : this.reloader.countChanged();
    return owner === undefined ? { kind, files } : { kind, owner, files };
  }

  /** The DOCTOR_RESULT JSON for `token`: the application's wiring, watcher and hold (doctor.ts). */
  protected doctor(token: string): string {
    const { settings } = this;
    return doctorJson(
      token,
      {
        wiring: this.wiring,
        watcher: this.watcherState,
        sessionId: this.session,
        agentVersion: settings.agentVersion ?? 'unknown',
        java: this.java,
        pid: settings.reportedPid ?? String(this.standIn?.pid ?? process.pid),
        workingDirectory: settings.reportedWorkingDirectory ?? settings.reportPath(this.standIn?.cwd ?? settings.appDir),
        buildHold: this.holdState.kind,
        registered: this.watching ? this.registered().map(settings.reportPath) : [],
        forceTruncated: settings.forceWatchSampleTruncated,
        refused: this.watching ? registeredDirectories(this.roots).filter((dir) => settings.refuseWatch.includes(dir)).length : 0,
      },
      settings.hostile,
    );
  }
  /** The application restarts: a new agent session, no hold, no pause, a new stand-in JVM. */
  protected async restartApplication(): Promise<void> {
    this.clearTimers();
    this.session = randomUUID();
    this.holdState = NO_HOLD;
    this.heldPaths.clear();
    this.paused = false;
    await this.standIn?.stop();
    await this.startApplication();
  }

  /**
   * setTimeout kept in `timers` until it fires, and that never keeps the process alive: the
   * application's (by default) are cancelled by stop()/restart(), the agent process's by stop().
   */
  protected later(ms: number, run: () => void, timers: Set<NodeJS.Timeout> = this.timers): NodeJS.Timeout {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    timers.add(timer);
    return timer;
  }

  protected cancel(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  /** Cancels the application's timers and lets go of its agent's watches (restart, stop). */
  protected clearTimers(): void {
    this.reloader.release();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pendingCapture = undefined;
    this.scanWaiting = false;
    this.holdWarning = undefined;
  }


  protected logHold(event: HoldEvent, owner: string | undefined): void {
    this.holdLog.push(owner === undefined ? { atMs: Date.now(), event } : { atMs: Date.now(), event, owner });
  }

  /** One WARN when a hold sees no BUILD result for holdWarnMs (reset by every accepted BUILD). */
  protected restartHoldWarning(): void {
    this.cancel(this.holdWarning);
    this.holdWarning = undefined;
    if (this.holdState.kind === 'none') return;
    this.holdWarning = this.later(this.settings.holdWarnMs, () => {
      this.holdWarning = undefined;
      this.broadcast(
        'WARN',
        `Build hold active for ${Math.round(this.settings.holdWarnMs / 1000)} s without a BUILD result; ` +
          `holding ${this.reloader.countChanged()} class files`,
      );
    });
  }

  protected scheduleCapture(): void {
    this.cancel(this.pendingCapture);
    this.pendingCapture = this.later(this.settings.captureDelayMs, () => this.capture());
  }

  /**
   * BUILD ok while the watcher is not watching (starting, or stopped): its scan waits for the
   * watcher's loop, for `scanTimeoutMs` at most (agent FileWatcher.scanNow); the watcher starting
   * in time gives the capture, else it fails and the hold stays (agent ReloadQueue.acceptBuild,
   * Supervised): ERROR `Accepting build output failed: IllegalStateException: Build scan did not
   * finish; build remains held`.
   */
  protected awaitWatcherScan(): void {
    this.cancel(this.pendingCapture);
    const held = this.holdState.kind !== 'none';
    this.scanWaiting = true;
    this.pendingCapture = this.later(this.settings.scanTimeoutMs, () => {
      this.pendingCapture = undefined;
      this.scanWaiting = false;
      if (held) this.logHold('capture-failed', this.holdState.owner);
      const what = held ? 'Accepting build output' : 'Scanning build output';
      this.broadcast('ERROR', `${what} failed: IllegalStateException: Build scan did not finish; build remains held (caused by TimeoutException)`);
    });
  }

  /** Scan, release the hold, and admit the changed classes as one reload batch (unless paused). */
  protected capture(): void {
    this.pendingCapture = undefined;
    let changed: ClassFile[];
    try {
      const failure = this.settings.failCapture?.();
      if (failure !== undefined) throw new Error(failure);
      changed = this.reloader.changedFiles();
    } catch (error) {
      // A read or scan failure leaves the entire build held for another BUILD ok.
      this.logHold('capture-failed', this.holdState.owner);
      this.broadcast('ERROR', `Capture failed, build output stays held: ${(error as Error).message}`);
      return;
    }
    if (this.holdState.kind !== 'none') {
      // A held capture reads every pending file; the first it cannot read fails it whole: the
      // batch is put back and the hold stays with its owner (agent ReloadQueue.acceptBuild, capture).
      for (const file of changed) this.heldPaths.add(file.path);
      const unreadable = this.unreadableOf(changed)[0];
      if (unreadable !== undefined) {
        this.logHold('capture-failed', this.holdState.owner);
        this.broadcast('ERROR', unreadable);
        return;
      }
      this.heldPaths.clear();
      this.logHold('released', this.holdState.owner);
      this.holdState = NO_HOLD;
      this.restartHoldWarning();
      this.broadcast('INFO', `Build hold released; captured ${changed.length} class files`);
    }
    this.capturesValue++;
    if (this.paused) {
      if (changed.length > 0) this.broadcast('INFO', `Automatic reload paused; ${changed.length} class files stay pending`);
      return;
    }
    this.reloader.admit(this.readable(changed));
  }

  /** The changed class files, or none when the scan fails. */
  protected changedOrNone(): ClassFile[] {
    try {
      return this.reloader.changedFiles();
    } catch {
      return [];
    }
  }

  /**
   * The agent's ERROR for each pending path it cannot read: a held path gone from disk
   * (NoSuchFileException), or a file `unreadableClassFile` names (AccessDeniedException). Exact
   * words: `Failed to read class file <path>: <Failures.describe>` (agent ReloadQueue.capture).
   */
  protected unreadableOf(changed: readonly ClassFile[]): string[] {
    const { unreadableClassFile, reportPath } = this.settings;
    const gone = [...this.heldPaths].filter((file) => !existsSync(file)).map((file) => [file, 'NoSuchFileException'] as const);
    const denied = changed.filter((f) => unreadableClassFile?.(f.path, f.className) === true).map((f) => [f.path, 'AccessDeniedException'] as const);
    return [...gone, ...denied].map(([file, why]) => `Failed to read class file ${reportPath(file)}: ${why}: ${reportPath(file)}`);
  }

  /**
   * A watcher batch without a hold skips each file it cannot read, with the same ERROR, and
   * reloads the rest: the read comes before the reload, so the batch is not made `unverified`.
   */
  protected readable(changed: ClassFile[]): ClassFile[] {
    const { unreadableClassFile } = this.settings;
    for (const line of this.unreadableOf(changed)) this.broadcast('ERROR', line);
    return changed.filter((f) => unreadableClassFile?.(f.path, f.className) !== true);
  }
}

/** Waits until the clock reads `atMs` (epoch ms): the JVM boots before it loads a class. */
async function sleepUntil(atMs: number): Promise<void> {
  const left = atMs - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}
