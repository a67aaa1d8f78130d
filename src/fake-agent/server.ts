/**
 * The fake agent: a loopback status server that follows protocol.md, the agent's status-socket
 * contract. Wires connections (connection.ts), the command grammar (commands.ts), the hold
 * rules (hold.ts), capture and reload (capture.ts, reloader.ts, watcher.ts), DOCTOR (doctor.ts),
 * the stand-in JVM (jvm.ts) and the hostile-peer switches (hostile.ts).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { delimiter, resolve } from 'node:path';
import { agentArguments, agentJarPath, excludedBy } from './agent-options.js';
import { isDirectory, type ClassFile } from './capture.js';
import { parseCommand, type ParsedCommand, type ReloadAction } from './commands.js';
import { StatusClient } from './connection.js';
import { diagnosisLines } from './diagnose.js';
import { doctorJson, type Wiring } from './doctor.js';
import { halfConnectedLine, Hostility } from './hostile.js';
import { decideBuild, NO_HOLD, type HoldState } from './hold.js';
import { startStandIn, type JvmLine, type StandIn } from './jvm.js';
import { pathReporter, type PathReporter } from './paths.js';
import { appDirOfPortFile, removePortFile, writePortFile } from './port-file.js';
import { registeredDirectories } from './registrations.js';
import { ClassReloader } from './reloader.js';
import type {
  ClientInfo,
  FakeAgent,
  FakeAgentOptions,
  HoldEvent,
  HoldLogEntry,
  HoldSnapshot,
  InterceptAction,
  ReceivedLine,
} from './types.js';
import { startWatcher, type Watcher } from './watcher.js';
import { formatEvent } from './wire.js';

/** Drops after the first that warn again: the agent warns at its first drop and every 1000th. */
const DROP_WARN_EVERY = 1000;

/** How the requester-only answer of one command is delivered. */
type Reply = (message: string) => void;

/** Resolved options: every default filled in. */
interface Settings {
  portFile?: string;
  port: number;
  watchDirs: string[];
  heartbeatMs: number;
  agentVersion: string | null;
  protocolVersion: number;
  captureDelayMs: number;
  reloadMs: number;
  crlf: boolean;
  ledgerSize: number;
  outboxLimit: number;
  maxClients: number;
  holdWarnMs: number;
  scanCache: boolean;
  verifyStatus?: FakeAgentOptions['verifyStatus'];
  intercept?: FakeAgentOptions['intercept'];
  failCapture?: FakeAgentOptions['failCapture'];
  unreadableClassFile?: FakeAgentOptions['unreadableClassFile'];
  restartRequired?: FakeAgentOptions['restartRequired'];
  newBean?: FakeAgentOptions['newBean'];
  autoCompile: boolean;
  testRunner?: FakeAgentOptions['testRunner'];
  standInJvm: boolean;
  appDir: string;
  reportedPid?: string;
  reportedWorkingDirectory?: string;
  reportPath: PathReporter;
  forceWatchSampleTruncated: boolean;
  startingMs: number;
  verifyWiredMs: number;
  watcherStartMs: number;
  scanTimeoutMs: number;
  startingDoctor: 'observed' | 'silent';
  excludePatterns: string[];
  agentArgs?: string;
  classPath?: string[];
  agentOn: 'command-line' | 'JAVA_TOOL_OPTIONS' | 'attached';
  portFileDelayMs: number;
  listenDelayMs: number;
  lingeringSlots: boolean;
  autoReload: boolean;
  watchDebounceMs: number;
  watchPollMs: number;
  hostile: Hostility;
}

function settingsFrom(options: FakeAgentOptions): Settings {
  const portFile = options.portFile === undefined ? undefined : resolve(options.portFile);
  const impliedAppDir = portFile === undefined ? undefined : appDirOfPortFile(portFile);
  const appDir = options.appDir !== undefined ? resolve(options.appDir) : (impliedAppDir ?? process.cwd());
  // The port file's folder is created anyway; its app folder must exist for the stand-in JVM.
  if (options.appDir === undefined && impliedAppDir !== undefined) mkdirSync(impliedAppDir, { recursive: true });
  const startingMs = options.notReady ? Infinity : (options.startingMs ?? 0);
  return {
    portFile,
    port: options.port ?? 0,
    watchDirs: (options.watchDirs ?? []).map((dir) => resolve(dir)),
    heartbeatMs: options.heartbeatMs ?? 10_000,
    agentVersion: options.agentVersion === undefined ? '1.4.0-fake' : options.agentVersion,
    protocolVersion: options.protocolVersion ?? 1,
    captureDelayMs: options.captureDelayMs ?? 100,
    reloadMs: options.reloadMs ?? 50,
    crlf: options.crlf ?? false,
    verifyStatus: options.verifyStatus,
    intercept: options.intercept,
    ledgerSize: options.ledgerSize ?? 512,
    outboxLimit: options.outboxLimit ?? 1000,
    maxClients: options.maxClients ?? 5,
    holdWarnMs: options.holdWarnMs ?? 300_000,
    failCapture: options.failCapture,
    // The watcher polls: reuse hashes of unchanged files (answers are the same).
    scanCache: (options.scanCache ?? false) || (options.autoReload ?? false),
    unreadableClassFile: options.unreadableClassFile,
    restartRequired: options.restartRequired,
    newBean: options.newBean,
    autoCompile: options.autoCompile ?? false,
    testRunner: options.testRunner,
    standInJvm: options.standInJvm ?? true,
    appDir,
    reportedPid: options.reportedPid,
    reportedWorkingDirectory: options.reportedWorkingDirectory,
    reportPath: pathReporter(options.pathMap),
    forceWatchSampleTruncated: options.forceWatchSampleTruncated ?? false,
    startingMs,
    // The agent wires VERIFY before the rest: halfway through by default.
    verifyWiredMs: options.notReady ? Infinity : (options.verifyWiredMs ?? startingMs / 2),
    watcherStartMs: options.watcherStartMs ?? 0,
    scanTimeoutMs: options.scanTimeoutMs ?? 10_000,
    startingDoctor: options.notReady ? 'silent' : (options.startingDoctor ?? 'observed'),
    excludePatterns: options.excludePatterns ?? [],
    agentArgs: options.agentArgs,
    classPath: options.classPath,
    agentOn: options.agentOn ?? 'command-line',
    portFileDelayMs: options.portFileDelayMs ?? 0,
    listenDelayMs: options.listenDelayMs ?? 0,
    lingeringSlots: options.lingeringSlots ?? false,
    autoReload: options.autoReload ?? false,
    watchDebounceMs: options.watchDebounceMs ?? 500,
    watchPollMs: options.watchPollMs ?? 100,
    hostile: new Hostility(options.hostile),
  };
}

/**
 * Start a fake agent on 127.0.0.1 following protocol.md ("Finding the agent", "The stream",
 * "Commands"). Starts the stand-in JVM, snapshots the watched directories (those classes count
 * as loaded), listens (unless `listenDelayMs`) and writes the port file (unless
 * `portFileDelayMs`). Rejects if the port cannot be bound or the stand-in cannot start.
 * Defaults: ephemeral port, heartbeat 10000 ms, captureDelayMs 100, reloadMs 50, 5 clients,
 * outbox 1000 lines, ledger 512 classes (see {@link FakeAgentOptions}). Always `stop()` it.
 */
export async function startFakeAgent(options: FakeAgentOptions = {}): Promise<FakeAgent> {
  const agent = new FakeAgentServer(settingsFrom(options), options.sessionId ?? randomUUID());
  await agent.start();
  return agent;
}

class FakeAgentServer implements FakeAgent {
  readonly received: ReceivedLine[] = [];
  readonly holdLog: HoldLogEntry[] = [];
  readonly listening: Promise<void>;
  private markListening: (error?: Error) => void = () => {};
  private portValue = 0;
  private capturesValue = 0;
  /**
   * Class file paths pending for the hold (agent ReloadQueue): noted at each started/failed and
   * capture, kept until a capture succeeds. A DELETE event is ignored, so a path the build then
   * deleted stays pending and fails every later capture (agent-facts, "A capture that cannot
   * read a held class file").
   */
  private readonly heldPaths = new Set<string>();
  private readonly server: Server;
  private readonly clientMap = new Map<number, StatusClient>();
  /** Sockets refused for being one too many, or held open by a hostile switch, until they close. */
  private readonly rawSockets = new Set<Socket>();
  private connections = 0;
  private nextClientId = 1;
  /** Application timers: cancelled by restart() and stop(). */
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Agent-process timers (heartbeat, delayed listen and port file): cancelled by stop() only. */
  private readonly processTimers = new Set<NodeJS.Timeout>();
  private watcher: Watcher | undefined;
  private stopping: Promise<void> | undefined;
  private standIn: StandIn | undefined;

  // Application state, reset by restart().
  private wiring: Wiring = 'all';
  private watcherState: 'starting' | 'watching' = 'watching';
  /** When the stand-in JVM (the application) started, epoch ms. */
  private jvmStartMs = Date.now();
  /** The watched directories that existed when the application started: only those are ever watched (agent SpringBootContext). */
  private roots: string[] = [];
  private holdState: HoldState = NO_HOLD;
  private holdWarning: NodeJS.Timeout | undefined;
  /** A scheduled capture, or (with `scanWaiting`) the timeout of an ok whose scan waits for the watcher to start. */
  private pendingCapture: NodeJS.Timeout | undefined;
  private scanWaiting = false;
  private paused = false;
  private readonly reloader: ClassReloader;

  constructor(
    private readonly settings: Settings,
    private session: string,
  ) {
    this.reloader = new ClassReloader({
      excluded: settings.excludePatterns.length > 0 ? excludedBy(settings.excludePatterns) : undefined,
      reloadMs: settings.reloadMs,
      ledgerSize: settings.ledgerSize,
      scanCache: settings.scanCache,
      verifyStatus: settings.verifyStatus,
      restartRequired: settings.restartRequired,
      newBean: settings.newBean,
      autoCompile: settings.autoCompile,
      reportPath: settings.reportPath,
      later: (ms, run) => void this.later(ms, run),
      broadcast: (level, message) => this.broadcast(level, message),
    });
    this.server = createServer((socket) => this.accept(socket));
    this.listening = new Promise<void>((resolveListening, rejectListening) => {
      this.markListening = (error) => (error ? rejectListening(error) : resolveListening());
    });
    this.listening.catch(() => {
      /* surfaced to whoever awaits it */
    });
  }

  get port(): number {
    return this.portValue;
  }

  get sessionId(): string {
    return this.session;
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

  /** Stand-in JVM, snapshot, listen (now or later), heartbeats, port file (now or later), watcher. */
  async start(): Promise<void> {
    await this.startApplication();
    try {
      if (this.settings.listenDelayMs > 0) {
        this.portValue = await reservePort(this.settings.port);
        this.processLater(this.settings.listenDelayMs, () => {
          this.bind(this.portValue).then(
            () => this.markListening(),
            (error: Error) => this.markListening(error),
          );
        });
      } else {
        await this.bind(this.settings.port);
        this.markListening();
      }
    } catch (error) {
      await this.standIn?.stop();
      throw error;
    }
    if (this.settings.heartbeatMs > 0) {
      const heartbeat = setInterval(() => this.broadcast('HEARTBEAT', ''), this.settings.heartbeatMs);
      heartbeat.unref();
      this.processTimers.add(heartbeat);
    }
    const { portFile } = this.settings;
    if (portFile) {
      if (this.settings.portFileDelayMs > 0) this.processLater(this.settings.portFileDelayMs, () => writePortFile(portFile, this.portValue));
      else writePortFile(portFile, this.portValue);
    }
    if (this.settings.autoReload) {
      this.watcher = startWatcher({
        debounceMs: this.settings.watchDebounceMs,
        pollMs: this.settings.watchPollMs,
        changedFiles: () => this.reloader.changedFiles(),
        mayCapture: () => this.watching && this.holdState.kind === 'none' && !this.paused && !this.pendingCapture,
        capture: () => this.capture(),
      });
    }
  }

  /**
   * The application's (re)start: its JVM, the classes it loads, the agent's wiring in the
   * agent's order (ReclazzAgent.initialize): VERIFY after `verifyWiredMs`, the rest after
   * `startingMs`, and the watcher `watcherStartMs` after that.
   */
  private async startApplication(): Promise<void> {
    const { settings } = this;
    this.standIn = settings.standInJvm ? await startStandIn(settings.appDir, this.jvmLine()) : undefined;
    this.jvmStartMs = Date.now();
    this.roots = settings.watchDirs.filter(isDirectory);
    this.reloader.reset(this.roots);
    this.wiring = 'none';
    this.watcherState = 'starting';
    if (settings.startingMs <= 0) return this.finishStarting();
    if (settings.verifyWiredMs <= 0) this.wiring = 'verify';
    else if (Number.isFinite(settings.verifyWiredMs)) this.later(settings.verifyWiredMs, () => this.wireVerify());
    if (Number.isFinite(settings.startingMs)) this.later(settings.startingMs, () => this.finishStarting());
  }

  /** The stand-in's JVM options and environment: the agent's jar with its options, and the class path. */
  private jvmLine(): JvmLine {
    const { settings } = this;
    const args =
      settings.agentArgs ??
      agentArguments({
        watchDirs: settings.watchDirs.map(settings.reportPath),
        excludePatterns: settings.excludePatterns,
        watcherStartMs: settings.watcherStartMs,
        autoCompile: settings.autoCompile,
      });
    const javaagent = `-javaagent:${agentJarPath(settings.agentVersion)}${args === '' ? '' : `=${args}`}`;
    const classPath = (settings.classPath ?? settings.watchDirs).map(settings.reportPath);
    const options = [...(classPath.length > 0 ? ['-cp', classPath.join(delimiter)] : []), ...testRunnerLine(settings.testRunner, settings.appDir)];
    if (settings.agentOn === 'command-line') return { options: [javaagent, ...options], env: {} };
    if (settings.agentOn === 'JAVA_TOOL_OPTIONS') return { options, env: { JAVA_TOOL_OPTIONS: javaagent } };
    return { options, env: {} };
  }

  private wireVerify(): void {
    if (this.wiring === 'none') this.wiring = 'verify';
  }

  private bind(port: number): Promise<void> {
    return new Promise<void>((resolveListen, rejectListen) => {
      this.server.once('error', rejectListen);
      this.server.listen({ host: '127.0.0.1', port }, () => {
        this.server.off('error', rejectListen);
        const address = this.server.address();
        this.portValue = typeof address === 'object' && address ? address.port : 0;
        resolveListen();
      });
    });
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
   * the watched directories, and the class files that changed while the JVM was starting are
   * dispatched: reloaded at once unless a hold or a pause keeps them pending. A BUILD ok whose
   * scan waited for it gets its capture now.
   */
  startWatching(): void {
    if (this.wiring !== 'all' || this.watcherState === 'watching') return;
    this.watcherState = 'watching';
    const count = this.roots.length;
    this.broadcast('INFO', `Watching ${count} ${count === 1 ? 'directory' : 'directories'}`);
    let changed: ClassFile[] = [];
    try {
      changed = this.reloader.changedFiles(true);
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

  hold(): HoldSnapshot {
    const { kind, owner } = this.holdState;
    const files = kind === 'none' ? 0 : this.reloader.countChanged();
    return owner === undefined ? { kind, files } : { kind, owner, files };
  }

  clientCount(): number {
    return [...this.clientMap.values()].filter((client) => !client.isClosed).length;
  }

  slotsInUse(): number {
    return this.clientMap.size;
  }

  clients(): ClientInfo[] {
    return [...this.clientMap.values()].map((client) => ({ id: client.id, open: !client.isClosed, queued: client.queued, dropped: client.dropped }));
  }

  broadcast(level: string, message: string, extra?: Record<string, unknown>): void {
    this.reloader.noteEvent(level, message);
    const { hostile } = this.settings;
    const text = level === 'RELOAD' || level === 'STRUCTURAL_RELOAD' ? hostile.reloadText(message) : message;
    const line = formatEvent(hostile.level(level), hostile.message(text), extra);
    for (const client of [...this.clientMap.values()]) {
      // A lingering slot frees when a write to its closed peer fails.
      if (!client.send(line)) this.clientMap.delete(client.id);
    }
  }

  async restart(): Promise<void> {
    this.dropAllConnections();
    this.clearTimers();
    this.session = randomUUID();
    this.holdState = NO_HOLD;
    this.heldPaths.clear();
    this.paused = false;
    await this.standIn?.stop();
    await this.startApplication();
    await new Promise((resolveTick) => setImmediate(resolveTick));
  }

  /**
   * The app's JVM restarted (systemctl, docker, the IDE): as the real agent, the old JVM's
   * shutdown hook closes the status server and deletes the port file (agent
   * `agent/StatusServer.java` stop()), and the new JVM's agent binds a new port (an ephemeral one
   * unless `port` is fixed) and writes it to the port file again (StatusServer start()), with a new
   * agent session and a new stand-in JVM that loads the class files on disk.
   */
  async restartJvm(): Promise<void> {
    if (this.stopping) return;
    const { portFile } = this.settings;
    this.dropAllConnections();
    if (this.server.listening) await new Promise<void>((resolveClose) => this.server.close(() => resolveClose()));
    if (portFile) removePortFile(portFile, this.portValue);
    await this.restart();
    await this.bind(this.settings.port);
    if (portFile) writePortFile(portFile, this.portValue);
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    for (const timer of this.processTimers) clearTimeout(timer);
    this.processTimers.clear();
    this.watcher?.stop();
    this.clearTimers();
    this.dropAllConnections();
    if (this.server.listening) await new Promise<void>((resolveClose) => this.server.close(() => resolveClose()));
    this.markListening(new Error('the fake agent stopped before it listened'));
    await this.standIn?.stop();
    if (this.settings.portFile) removePortFile(this.settings.portFile, this.portValue);
  }

  // ---- connections -------------------------------------------------------------------------

  private accept(socket: Socket): void {
    socket.on('error', () => {
      /* ignored: a reset client is a closed client */
    });
    if (this.stopping || this.clientMap.size >= this.settings.maxClients) {
      // One too many: accepted and closed at once, EOF before any CONNECTED.
      this.holdRaw(socket);
      socket.end();
      return;
    }
    const mode = this.settings.hostile.connectMode(++this.connections);
    if (mode !== 'normal') {
      // A broken peer: reads and ignores everything, sends nothing (or half a line) and stalls.
      this.holdRaw(socket);
      if (mode === 'half-line') socket.write(halfConnectedLine());
      return;
    }
    const client = new StatusClient(this.nextClientId++, socket, {
      outboxLimit: this.settings.outboxLimit,
      crlf: this.settings.crlf,
      onLine: (from, line) => this.onLine(from, line),
      onDrop: (slow, dropped) => {
        if (dropped === 1 || dropped % DROP_WARN_EVERY === 0) {
          this.broadcast('WARN', `Status client ${slow.id} is not keeping up; dropped ${dropped} event(s)`);
        }
      },
      onClose: (gone) => {
        if (!this.settings.lingeringSlots && this.clientMap.get(gone.id) === gone) this.clientMap.delete(gone.id);
      },
    });
    this.clientMap.set(client.id, client);
    const { hostile } = this.settings;
    const extra: Record<string, unknown> = { version: this.settings.protocolVersion };
    if (this.settings.agentVersion !== null) extra.agent = hostile.message(this.settings.agentVersion);
    client.send(formatEvent('CONNECTED', hostile.message('Agent status server connected'), extra));
    const oversized = hostile.oversizedLine();
    if (oversized) client.writeRaw(oversized);
    const flood = hostile.floodEvents();
    if (flood > 0) void floodClient(client, flood, this.settings.crlf ? '\r\n' : '\n');
  }

  private holdRaw(socket: Socket): void {
    this.rawSockets.add(socket);
    socket.on('close', () => this.rawSockets.delete(socket));
    socket.resume();
  }

  private dropAllConnections(): void {
    for (const client of this.clientMap.values()) client.close();
    this.clientMap.clear();
    for (const socket of this.rawSockets) socket.destroy();
    this.rawSockets.clear();
  }

  /** setTimeout that stop()/restart() cancel, and that never keeps the process alive. */
  private later(ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
    return timer;
  }

  /** setTimeout that only stop() cancels (the agent process, not the application). */
  private processLater(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.processTimers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.processTimers.add(timer);
  }

  private cancel(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pendingCapture = undefined;
    this.scanWaiting = false;
    this.holdWarning = undefined;
  }

  // ---- commands ----------------------------------------------------------------------------

  private onLine(client: StatusClient, line: string): void {
    this.received.push({ atMs: Date.now(), client: client.id, line });
    const action = this.intercept(client, line);
    const sendInfo: Reply = (message) => client.send(formatEvent('INFO', message));
    switch (action?.kind) {
      case undefined:
        return this.execute(line, sendInfo);
      case 'ignore':
        return;
      case 'close':
        return client.close();
      case 'drop':
        return this.execute(line, () => {});
      case 'delay':
        return this.execute(line, (message) => this.later(action.ms, () => sendInfo(message)));
      case 'reply': {
        const sendRaw = () => action.lines.forEach((raw) => client.send(raw));
        if (action.delayMs !== undefined && action.delayMs > 0) this.later(action.delayMs, sendRaw);
        else sendRaw();
        if (action.act) this.execute(line, sendInfo);
        return;
      }
    }
  }

  private intercept(client: StatusClient, line: string): InterceptAction | undefined {
    if (!this.settings.intercept) return undefined;
    const words = line.split(' ');
    return this.settings.intercept({ line, verb: (words[0] ?? '').toUpperCase(), words, client: client.id });
  }

  /** Act on one command line; `reply` delivers the requester-only answer. */
  private execute(line: string, reply: Reply): void {
    const command = parseCommand(line);
    if (!command) return;
    const wired = this.wiring === 'all';
    const verifying = this.wiring !== 'none';
    const modern = this.settings.agentVersion !== null;
    switch (command.kind) {
      case 'build':
        if (wired) this.onBuild(command, reply);
        return;
      case 'verify':
        if (verifying && modern) this.onVerify(command, reply);
        return;
      case 'doctor':
        if (modern && (verifying || this.settings.startingDoctor === 'observed')) reply(`DOCTOR_RESULT ${command.token} ${this.doctor(command.token)}`);
        return;
      case 'reload':
        if (wired && modern) this.onReload(command.action, command.token, reply);
        return;
      case 'scan':
        // Only the watcher's loop scans: nothing happens before it runs.
        if (this.watching && this.holdState.kind === 'none' && !this.paused && !this.pendingCapture) this.scheduleCapture();
        return;
      case 'pending':
        return this.onPending();
      case 'health':
        return this.onHealth();
      case 'diagnose':
        if (verifying) this.onDiagnose(command.className);
        return;
    }
  }

  private onBuild(command: Extract<ParsedCommand, { kind: 'build' }>, reply: Reply): void {
    // An agent from before build ownership neither enforces nor echoes owner=.
    const ownership = this.settings.agentVersion !== null;
    const owner = ownership ? command.owner : undefined;
    const suffix = owner === undefined ? '' : ` owner=${owner}`;
    const decision = decideBuild(this.holdState, command.state, owner, Date.now());
    if (!decision.accepted) {
      this.logHold('rejected', owner);
      if (command.request) reply(`BUILD_REJECTED ${command.request} ${command.state}${suffix}`);
      return;
    }
    this.holdState = decision.hold;
    this.logHold(decision.event, owner);
    if (decision.event === 'capture-scheduled') {
      if (this.watching) this.scheduleCapture();
      else this.awaitWatcherScan();
    } else {
      // A newer started/failed cancels a pending capture.
      this.cancel(this.pendingCapture);
      this.pendingCapture = undefined;
      this.scanWaiting = false;
      for (const file of this.changedOrNone()) this.heldPaths.add(file.path);
      this.broadcast('INFO', `Build ${command.state}; holding ${this.reloader.countChanged()} class files until BUILD ok`);
    }
    this.restartHoldWarning();
    if (command.request) reply(`BUILD_ACK ${command.request} ${command.state}${suffix}`);
  }

  private onVerify(command: Extract<ParsedCommand, { kind: 'verify' }>, reply: Reply): void {
    const { hostile } = this.settings;
    const result = this.reloader.ledger.verify(command.token, this.session, command.className, command.sha256);
    const shown = { ...result, source: hostile.verifyText(result.source), detail: hostile.verifyText(result.detail) };
    reply(`VERIFY_RESULT ${command.token} ${JSON.stringify(shown)}`);
  }

  private onReload(action: ReloadAction, token: string, reply: Reply): void {
    if (action === 'pause') this.paused = true;
    if (action === 'resume' && this.paused) {
      this.paused = false;
      // Resume schedules a scan (which only a running watcher can do); it never releases a build hold.
      if (this.watching && this.holdState.kind === 'none' && !this.pendingCapture) this.scheduleCapture();
    }
    reply(
      this.settings.hostile.reloadText(
        `RELOAD_STATE ${token} ${action} paused=${this.paused} pendingClasses=${this.reloader.countChanged()} ` +
          `pendingActions=0 buildHold=${this.holdState.kind}`,
      ),
    );
  }

  /** HEALTH, PENDING and DIAGNOSE lines: broadcast INFO. */
  private report(message: string): void {
    this.broadcast('INFO', this.settings.hostile.healthText(message));
  }

  /**
   * PENDING (agent StatusServer): once RELOAD control is wired, the queue's state line, then the
   * restart ledger's digest (restart-ledger.ts), which ends with one of its two closing sentences.
   */
  private onPending(): void {
    if (this.wiring === 'all') {
      this.report(
        `Automatic reload: paused=${this.paused} pendingClasses=${this.reloader.countChanged()} pendingActions=0 buildHold=${this.holdState.kind}`,
      );
    }
    for (const line of this.reloader.restarts.digest()) this.report(line);
  }

  /**
   * HEALTH: the queue line first when held or paused (ReloadQueue.healthLine), then the session
   * report (SessionReport.lines, health.ts); the watch line only once the watcher is wired.
   */
  private onHealth(): void {
    const pending = this.reloader.countChanged();
    const paused = `Automatic reload paused; pending class files=${pending}, pending actions=0`;
    if (this.holdState.kind !== 'none') {
      const since = new Date(this.holdState.sinceMs).toISOString();
      this.report(`Build holding ${pending} class files since ${since}; waiting for BUILD ok${this.paused ? `. ${paused}` : ''}`);
    } else if (this.paused) this.report(paused);
    // The watch line once the watcher is constructed (ReclazzAgent wires the health reporter with it);
    // its directories are the watcher's registrations, none while it is still starting.
    const watch =
      this.wiring === 'all'
        ? { directories: this.watching ? registeredDirectories(this.roots).length : 0, files: this.reloader.knownFiles }
        : undefined;
    const { reloader } = this;
    for (const line of reloader.counts.lines(this.settings.agentVersion ?? 'unknown', watch, reloader.restarts.size)) this.report(line);
  }

  private onDiagnose(className: string): void {
    const lines = diagnosisLines(className, {
      roots: this.roots,
      reportPath: this.settings.reportPath,
      jvmStartMs: this.jvmStartMs,
      loaded: (name) => this.reloader.isLoaded(name),
      receipt: (name) => this.reloader.ledger.get(name),
      nowMs: Date.now(),
    });
    for (const line of lines) this.report(line);
  }

  private doctor(token: string): string {
    const { settings } = this;
    return doctorJson(
      token,
      {
        wiring: this.wiring,
        watcher: this.watcherState,
        sessionId: this.session,
        agentVersion: settings.agentVersion ?? 'unknown',
        pid: settings.reportedPid ?? String(this.standIn?.pid ?? process.pid),
        workingDirectory: settings.reportedWorkingDirectory ?? settings.reportPath(this.standIn?.cwd ?? settings.appDir),
        buildHold: this.holdState.kind,
        registered: this.watching ? registeredDirectories(this.roots).map(settings.reportPath) : [],
        forceTruncated: settings.forceWatchSampleTruncated,
      },
      settings.hostile,
    );
  }

  // ---- hold, capture, reload ---------------------------------------------------------------

  private logHold(event: HoldEvent, owner: string | undefined): void {
    this.holdLog.push(owner === undefined ? { atMs: Date.now(), event } : { atMs: Date.now(), event, owner });
  }

  /** One WARN when a hold sees no BUILD result for holdWarnMs (reset by every accepted BUILD). */
  private restartHoldWarning(): void {
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

  private scheduleCapture(): void {
    this.cancel(this.pendingCapture);
    this.pendingCapture = this.later(this.settings.captureDelayMs, () => this.capture());
  }

  /**
   * BUILD ok while the watcher is still starting: its scan waits for the watcher's loop, for
   * `scanTimeoutMs` at most (agent FileWatcher.scanNow); the watcher starting in time gives
   * the capture, else it fails and the hold stays (agent ReloadQueue.acceptBuild, Supervised).
   */
  private awaitWatcherScan(): void {
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
  private capture(): void {
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
  private changedOrNone(): ClassFile[] {
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
  private unreadableOf(changed: readonly ClassFile[]): string[] {
    const { unreadableClassFile, reportPath } = this.settings;
    const gone = [...this.heldPaths].filter((file) => !existsSync(file)).map((file) => [file, 'NoSuchFileException'] as const);
    const denied = changed.filter((f) => unreadableClassFile?.(f.path, f.className) === true).map((f) => [f.path, 'AccessDeniedException'] as const);
    return [...gone, ...denied].map(([file, why]) => `Failed to read class file ${reportPath(file)}: ${why}: ${reportPath(file)}`);
  }

  /**
   * A watcher batch without a hold skips each file it cannot read, with the same ERROR, and
   * reloads the rest: the read comes before the reload, so the batch is not made `unverified`.
   */
  private readable(changed: ClassFile[]): ClassFile[] {
    const { unreadableClassFile } = this.settings;
    for (const line of this.unreadableOf(changed)) this.broadcast('ERROR', line);
    return changed.filter((f) => unreadableClassFile?.(f.path, f.className) !== true);
  }
}

/**
 * What a test JVM's command line says after its options: Surefire's manifest-only booter jar
 * (`-jar <basedir>/target/surefire/surefirebooter-<stamp>.jar`, its default), or Gradle's test
 * worker main class with its `'Gradle Test Executor <n>'` argument.
 */
function testRunnerLine(runner: FakeAgentOptions['testRunner'], appDir: string): string[] {
  if (runner === 'surefire') return ['-jar', resolve(appDir, 'target', 'surefire', 'surefirebooter-20261202013000000_3.jar')];
  if (runner === 'gradle') return ['worker.org.gradle.process.internal.worker.GradleWorkerMain', 'Gradle Test Executor 1'];
  return [];
}

/** Bind `port` (0: any) on 127.0.0.1 for a moment and return the port it got. */
function reservePort(port: number): Promise<number> {
  return new Promise((resolvePort, rejectPort) => {
    const probe = createServer();
    probe.once('error', rejectPort);
    probe.listen({ host: '127.0.0.1', port }, () => {
      const address = probe.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(bound));
    });
  });
}

/** Lines of a flood between two turns of the event loop. */
const FLOOD_SLICE = 1000;

/**
 * Send `events` INFO events to `client` as fast as its socket drains, bypassing the outbox.
 * A turn of the event loop every {@link FLOOD_SLICE} lines: a reader as fast as the flood never
 * makes a write wait, and the loop would otherwise starve this agent's timers and replies.
 */
async function floodClient(client: StatusClient, events: number, eol: string): Promise<void> {
  for (let i = 1; i <= events && !client.isClosed; i++) {
    if (i % FLOOD_SLICE === 0) await new Promise((resolveTurn) => setImmediate(resolveTurn));
    if (!client.writeRaw(formatEvent('INFO', `flood ${i} of ${events}`) + eol)) {
      await new Promise<void>((resolveDrain) => {
        const done = (): void => {
          client.socket.off('drain', done);
          client.socket.off('close', done);
          resolveDrain();
        };
        client.socket.on('drain', done);
        client.socket.on('close', done);
      });
    }
  }
}
