/**
 * The fake agent: a loopback status server that follows /work/shared/protocol.md.
 * Wires connections (connection.ts), the command grammar (commands.ts), the hold rules
 * (hold.ts), capture (capture.ts) and the VERIFY ledger (ledger.ts).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import { isDirectory, type ClassFile } from './capture.js';
import { parseCommand, type ParsedCommand, type ReloadAction } from './commands.js';
import { StatusClient } from './connection.js';
import { decideBuild, NO_HOLD, type HoldState } from './hold.js';
import { ClassReloader } from './reloader.js';
import type {
  FakeAgent,
  FakeAgentOptions,
  HoldEvent,
  HoldLogEntry,
  HoldSnapshot,
  InterceptAction,
  ReceivedLine,
} from './types.js';
import { formatEvent } from './wire.js';

/** DOCTOR: at most this many sampled directories, each at most this long (protocol.md, "DOCTOR"). */
const DOCTOR_SAMPLE_DIRS = 8;
const DOCTOR_SAMPLE_PATH_CHARS = 256;
const DOCTOR_STRING_CHARS = 512;
const DOCTOR_JSON_CHARS = 3900;

/** How the requester-only answer of one command is delivered. */
type Reply = (message: string) => void;

/** Resolved options: every default filled in. */
type Settings = Required<Omit<FakeAgentOptions, 'portFile' | 'sessionId' | 'verifyStatus' | 'intercept' | 'failCapture'>> &
  Pick<FakeAgentOptions, 'verifyStatus' | 'intercept' | 'failCapture'> & { portFile?: string };

function settingsFrom(options: FakeAgentOptions): Settings {
  return {
    portFile: options.portFile === undefined ? undefined : resolve(options.portFile),
    port: options.port ?? 0,
    watchDirs: (options.watchDirs ?? []).map((dir) => resolve(dir)),
    heartbeatMs: options.heartbeatMs ?? 10_000,
    agentVersion: options.agentVersion === undefined ? '1.4.0-fake' : options.agentVersion,
    protocolVersion: options.protocolVersion ?? 1,
    captureDelayMs: options.captureDelayMs ?? 100,
    reloadMs: options.reloadMs ?? 50,
    crlf: options.crlf ?? false,
    notReady: options.notReady ?? false,
    verifyStatus: options.verifyStatus,
    intercept: options.intercept,
    ledgerSize: options.ledgerSize ?? 512,
    outboxLimit: options.outboxLimit ?? 1000,
    maxClients: options.maxClients ?? 5,
    holdWarnMs: options.holdWarnMs ?? 300_000,
    failCapture: options.failCapture,
    scanCache: options.scanCache ?? false,
  };
}

/**
 * Start a fake agent on 127.0.0.1 following protocol.md ("Finding the agent", "The stream",
 * "Commands"). Resolves once it listens, the watched directories are snapshotted (those classes
 * count as loaded) and the port file, if any, is written; rejects if the port cannot be bound.
 * Defaults: ephemeral port, heartbeat 10000 ms, captureDelayMs 100, reloadMs 50, 5 clients,
 * outbox 1000 lines, ledger 512 classes (see {@link FakeAgentOptions}). Always `stop()` it.
 */
export async function startFakeAgent(options: FakeAgentOptions = {}): Promise<FakeAgent> {
  const agent = new FakeAgentServer(settingsFrom(options), options.sessionId ?? randomUUID());
  await agent.listen();
  return agent;
}

class FakeAgentServer implements FakeAgent {
  readonly received: ReceivedLine[] = [];
  readonly holdLog: HoldLogEntry[] = [];
  private portValue = 0;
  private capturesValue = 0;
  private readonly server: Server;
  private readonly clients = new Map<number, StatusClient>();
  /** Sockets refused for being one too many, until they close. */
  private readonly refused = new Set<Socket>();
  private nextClientId = 1;
  private readonly timers = new Set<NodeJS.Timeout>();
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  // Application state, reset by restart().
  private holdState: HoldState = NO_HOLD;
  private holdWarning: NodeJS.Timeout | undefined;
  private pendingCapture: NodeJS.Timeout | undefined;
  private paused = false;
  private readonly reloader: ClassReloader;

  constructor(
    private readonly settings: Settings,
    private session: string,
  ) {
    this.reloader = new ClassReloader({
      watchDirs: settings.watchDirs,
      reloadMs: settings.reloadMs,
      ledgerSize: settings.ledgerSize,
      scanCache: settings.scanCache,
      verifyStatus: settings.verifyStatus,
      later: (ms, run) => void this.later(ms, run),
      broadcast: (level, message) => this.broadcast(level, message),
    });
    this.server = createServer((socket) => this.accept(socket));
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

  /** Listen, snapshot the loaded classes, start heartbeats, write the port file. */
  async listen(): Promise<void> {
    await new Promise<void>((resolveListen, rejectListen) => {
      this.server.once('error', rejectListen);
      this.server.listen({ host: '127.0.0.1', port: this.settings.port }, () => {
        this.server.off('error', rejectListen);
        resolveListen();
      });
    });
    const address = this.server.address();
    this.portValue = typeof address === 'object' && address ? address.port : 0;
    this.reloader.reset();
    if (this.settings.heartbeatMs > 0) {
      this.heartbeat = setInterval(() => this.broadcast('HEARTBEAT', ''), this.settings.heartbeatMs);
      this.heartbeat.unref();
    }
    if (this.settings.portFile) writePortFile(this.settings.portFile, this.portValue);
  }

  hold(): HoldSnapshot {
    const { kind, owner } = this.holdState;
    const files = kind === 'none' ? 0 : this.reloader.countChanged();
    return owner === undefined ? { kind, files } : { kind, owner, files };
  }

  clientCount(): number {
    return this.clients.size;
  }

  broadcast(level: string, message: string, extra?: Record<string, unknown>): void {
    const line = formatEvent(level, message, extra);
    for (const client of [...this.clients.values()]) client.send(line);
  }

  async restart(): Promise<void> {
    this.dropAllConnections();
    this.clearTimers();
    this.session = randomUUID();
    this.holdState = NO_HOLD;
    this.paused = false;
    this.reloader.reset();
    await new Promise((resolveTick) => setImmediate(resolveTick));
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.clearTimers();
    this.dropAllConnections();
    await new Promise<void>((resolveClose) => this.server.close(() => resolveClose()));
    if (this.settings.portFile) removePortFile(this.settings.portFile, this.portValue);
  }

  // ---- connections -------------------------------------------------------------------------

  private accept(socket: Socket): void {
    socket.on('error', () => {
      /* ignored: a reset client is a closed client */
    });
    if (this.stopping || this.clients.size >= this.settings.maxClients) {
      // One too many: accepted and closed at once, EOF before any CONNECTED.
      this.refused.add(socket);
      socket.on('close', () => this.refused.delete(socket));
      socket.resume();
      socket.end();
      return;
    }
    const client = new StatusClient(this.nextClientId++, socket, {
      outboxLimit: this.settings.outboxLimit,
      crlf: this.settings.crlf,
      onLine: (from, line) => this.onLine(from, line),
      onOverflow: (slow) =>
        this.broadcast(
          'WARN',
          `Status client ${slow.id} is not keeping up; dropping events (outbox of ${this.settings.outboxLimit} lines is full)`,
        ),
      onClose: (gone) => {
        if (this.clients.get(gone.id) === gone) this.clients.delete(gone.id);
      },
    });
    this.clients.set(client.id, client);
    const extra: Record<string, unknown> = { version: this.settings.protocolVersion };
    if (this.settings.agentVersion !== null) extra.agent = this.settings.agentVersion;
    client.send(formatEvent('CONNECTED', 'Agent status server connected', extra));
  }

  private dropAllConnections(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
    for (const socket of this.refused) socket.destroy();
    this.refused.clear();
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

  private cancel(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.pendingCapture = undefined;
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
    const { notReady } = this.settings;
    const modern = this.settings.agentVersion !== null;
    switch (command.kind) {
      case 'build':
        if (!notReady) this.onBuild(command, reply);
        return;
      case 'verify':
        if (notReady || !modern) return;
        reply(
          `VERIFY_RESULT ${command.token} ${JSON.stringify(
            this.reloader.ledger.verify(command.token, this.session, command.className, command.sha256),
          )}`,
        );
        return;
      case 'doctor':
        if (!notReady && modern) reply(`DOCTOR_RESULT ${command.token} ${this.doctorJson(command.token)}`);
        return;
      case 'reload':
        if (!notReady && modern) this.onReload(command.action, command.token, reply);
        return;
      case 'scan':
        if (!notReady && this.holdState.kind === 'none' && !this.paused && !this.pendingCapture) {
          this.scheduleCapture();
        }
        return;
      case 'pending':
        return this.onPending();
      case 'health':
        return this.onHealth();
      case 'diagnose':
        return this.onDiagnose(command.className);
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
      this.scheduleCapture();
    } else {
      // A newer started/failed cancels a pending capture.
      this.cancel(this.pendingCapture);
      this.pendingCapture = undefined;
      this.broadcast(
        'INFO',
        `Build ${command.state}; holding ${this.reloader.countChanged()} class files until BUILD ok`,
      );
    }
    this.restartHoldWarning();
    if (command.request) reply(`BUILD_ACK ${command.request} ${command.state}${suffix}`);
  }

  private onReload(action: ReloadAction, token: string, reply: Reply): void {
    if (action === 'pause') this.paused = true;
    if (action === 'resume' && this.paused) {
      this.paused = false;
      // Resume schedules a scan; it never releases a build hold.
      if (this.holdState.kind === 'none' && !this.pendingCapture) this.scheduleCapture();
    }
    reply(
      `RELOAD_STATE ${token} ${action} paused=${this.paused} pendingClasses=${this.reloader.countChanged()} ` +
        `pendingActions=0 buildHold=${this.holdState.kind}`,
    );
  }

  private onPending(): void {
    this.broadcast(
      'INFO',
      `Pending: ${this.reloader.countChanged()} class files, 0 actions; paused=${this.paused}; build hold ${this.holdState.kind}`,
    );
    this.broadcast('INFO', 'No restart-required changes recorded in this session');
  }

  private onHealth(): void {
    const watched = this.settings.watchDirs.filter(isDirectory).length;
    this.broadcast('INFO', `Agent ${this.settings.agentVersion ?? 'unknown'} healthy; watching ${watched} directories`);
    if (this.holdState.kind !== 'none') {
      this.broadcast(
        'INFO',
        `Build holding ${this.reloader.countChanged()} class files since ${new Date(this.holdState.sinceMs).toISOString()}; waiting for BUILD ok`,
      );
    }
    if (this.paused) this.broadcast('INFO', 'Automatic reload paused manually (RELOAD resume to continue)');
  }

  private onDiagnose(className: string): void {
    const receipt = this.reloader.ledger.get(className);
    this.broadcast(
      'INFO',
      receipt
        ? `Diagnose ${className}: ${receipt.status} sha256=${receipt.sha256}${receipt.detail ? ` (${receipt.detail})` : ''}`
        : `Diagnose ${className}: no reload receipt in this session`,
    );
  }

  private doctorJson(token: string): string {
    const bound = (text: string) => text.slice(0, DOCTOR_STRING_CHARS);
    const watched = this.settings.watchDirs.filter(isDirectory);
    const sample = watched.filter((dir) => dir.length <= DOCTOR_SAMPLE_PATH_CHARS).slice(0, DOCTOR_SAMPLE_DIRS);
    const json = JSON.stringify({
      requestId: token,
      status: 'observed',
      detail: 'fake agent observation; not readiness and not reload proof',
      sessionId: this.session,
      agentVersion: bound(this.settings.agentVersion ?? 'unknown'),
      pid: String(process.pid),
      javaVersion: '21.0.4',
      vmName: 'OpenJDK 64-Bit Server VM (reclazz fake agent)',
      workingDirectory: bound(process.cwd()),
      watcherState: 'watching',
      buildHold: this.holdState.kind,
      watchedDirectoryCount: watched.length,
      unwatchableDirectoryCount: this.settings.watchDirs.length - watched.length,
      watchSampleTruncated: sample.length < watched.length,
      watchedDirectories: sample,
      buildOwnershipSupported: !this.settings.notReady,
      verifySupported: !this.settings.notReady,
      scanSupported: !this.settings.notReady,
      reloadConfirmed: false,
    });
    return json.length <= DOCTOR_JSON_CHARS
      ? json
      : JSON.stringify({ requestId: token, status: 'unavailable', detail: 'observation exceeds 3900 characters' });
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
    this.reloader.admit(changed);
  }
}

/** Write `port` as decimal text without newline, whole: temp file in the same dir, then rename. */
function writePortFile(path: string, port: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, String(port));
  renameSync(temp, path);
}

/** Delete the port file if it still names our port (another agent may have replaced it). */
function removePortFile(path: string, port: number): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(port)) unlinkSync(path);
  } catch {
    /* already gone */
  }
}
