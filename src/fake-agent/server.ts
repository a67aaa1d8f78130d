/**
 * The fake agent: a loopback status server that follows protocol.md, the agent's status-socket
 * contract. Wires connections (connection.ts), the command grammar (wire.ts), DOCTOR
 * (doctor.ts) and the hostile-peer switches (hostile.ts) onto the application side
 * (application.ts: the stand-in JVM, the hold rules, capture and reload).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { FakeApplication } from './application.js';
import { formatEvent, parseCommand, type ParsedCommand, type ReloadAction } from './wire.js';
import { floodClient, reservePort, StatusClient } from './connection.js';
import { diagnosisLines } from './doctor.js';
import { halfConnectedLine } from './hostile.js';
import { decideBuild } from './ledger.js';
import { registeredDirectories, removePortFile, writePortFile } from './paths.js';
import { type Settings, settingsFrom } from './settings.js';
import type { ClientInfo, FakeAgent, FakeAgentOptions, InterceptAction, ReceivedLine } from './types.js';
import { startWatcher, type Watcher } from './capture.js';

/** Drops after the first that warn again: the agent warns at its first drop and every 1000th. */
const DROP_WARN_EVERY = 1000;

/** How the requester-only answer of one command is delivered. */
type Reply = (message: string) => void;

/**
 * Starts a fake agent on 127.0.0.1 (protocol.md "Finding the agent", "The stream", "Commands"):
 * the stand-in JVM, the watched classes as loaded, the socket and the port file. Defaults in
 * {@link FakeAgentOptions}. Always `stop()` it.
 * @throws when the port cannot be bound or the stand-in cannot start.
 */
export async function startFakeAgent(options: FakeAgentOptions = {}): Promise<FakeAgent> {
  const agent = new FakeAgentServer(settingsFrom(options), options.sessionId ?? randomUUID());
  await agent.start();
  return agent;
}

class FakeAgentServer extends FakeApplication implements FakeAgent {
  readonly received: ReceivedLine[] = [];
  readonly listening: Promise<void>;
  private markListening: (error?: Error) => void = () => {};
  private portValue = 0;
  private readonly server: Server;
  private readonly clientMap = new Map<number, StatusClient>();
  /** Sockets refused for being one too many, or held open by a hostile switch, until they close. */
  private readonly rawSockets = new Set<Socket>();
  private connections = 0;
  private nextClientId = 1;
  /** Agent-process timers (heartbeat, delayed listen and port file): cancelled by stop() only. */
  private readonly processTimers = new Set<NodeJS.Timeout>();
  private watcher: Watcher | undefined;
  private stopping: Promise<void> | undefined;

  constructor(settings: Settings, session: string) {
    super(settings, session);
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
    await this.restartApplication();
    await new Promise((resolveTick) => setImmediate(resolveTick));
  }

  /**
   * The app's JVM restarted: the port file is deleted and the server closed (agent
   * `agent/StatusServer.java` stop()), then a new stand-in JVM and agent session bind a new port
   * and write the port file again (StatusServer start()). The new JVM loads the class files on disk.
   */
  async restartJvm(): Promise<void> {
    if (this.stopping) return;
    const { portFile } = this.settings;
    this.dropAllConnections();
    if (this.server.listening) await new Promise<void>((resolveClose) => this.server.close(() => resolveClose()));
    if (portFile) removePortFile(portFile);
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
    // The agent's shutdown hook has run (its socket closed, its port file deleted); the JVM ends after its own shutdown time.
    if (this.settings.portFile) removePortFile(this.settings.portFile);
    if (this.settings.shutdownMs > 0) await new Promise((ended) => setTimeout(ended, this.settings.shutdownMs));
    await this.standIn?.stop();
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

  /** setTimeout that only stop() cancels (the agent process, not the application). */
  private processLater(ms: number, run: () => void): void {
    this.later(ms, run, this.processTimers);
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
        `RELOAD_STATE ${token} ${action} paused=${this.paused} pendingClasses=${this.pendingClasses()} ` +
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
   * restart ledger's digest (ledger.ts), which ends with one of its two closing sentences.
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
   * report (SessionReport.lines, doctor.ts); the watch line only once the watcher is wired.
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
}
