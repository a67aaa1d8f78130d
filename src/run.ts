/**
 * `runSafeBuild`: the whole job. Find the agent, take the named hold and see its exact
 * receipt, run the build tool, report ok/failed and see that receipt, find the class files
 * whose bytes changed, VERIFY each under one deadline, and say what is proven live.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentConnection } from './agent/connection.js';
import { checkAgent, connectAgent, findAgent, type OpenAgent } from './agent/handshake.js';
import { newToken } from './agent/protocol.js';
import { askDoctor } from './agent/requests.js';
import { observeAgentAfterLoss } from './agent/session.js';
import { findClassDirs } from './build/outputs.js';
import { checkExecutable, runBuild } from './build/run.js';
import { describeCommand, neverEndingArgument, resolveBuildCommand, type BuildCommand } from './build/tool.js';
import { watchCoverage } from './agent/coverage.js';
import { detectChanges, markUnproven, type ChangeSet, type ClassIndex } from './classes/snapshot.js';
import { DEFAULTS } from './defaults.js';
import { acquireHold, sendBuild } from './hold/hold.js';
import { SHOWN_AGENT_LEVELS, type RunEvent } from './outcome/events.js';
import { signalOf } from './outcome/exit.js';
import type { AgentInfo, BuildRun, HoldLeft, ToolKind } from './outcome/facts.js';
import type { InterruptPoint, Outcome } from './outcome/outcome.js';
import { buildRunResult, type RunFacts, type RunResult } from './outcome/result.js';
import { WAITING_FOR, warningText } from './report/step-words.js';
import { describeOutcome } from './report/words.js';
import { acquireRunLock } from './state/lock.js';
import { readClassIndex, readOwnerState, StateError, writeClassIndex, writeOwnerState, type OwnerState } from './state/store.js';
import { verdictOutcome } from './verify/verdict.js';
import { verifyClasses, type VerifyTarget } from './verify/verify.js';

/** The environment variable set for the build command, and refused when already set (no nesting). */
export const NESTED_ENV = 'RECLAZZ_SAFE_BUILD_ACTIVE';

/** Options for {@link runSafeBuild}. Times in ms. */
export interface SafeBuildOptions {
  /** `gradle`, `mvn`, or `command` (then `args[0]` is the executable). */
  tool: ToolKind;
  /** Arguments passed to the build tool untouched. */
  args: string[];
  /** Folder the build runs in and the search starts from (absolute). Default `process.cwd()`. */
  cwd?: string;
  port?: number;
  portFile?: string;
  /** Owner token; default: the one saved for this agent session, else a fresh one. */
  owner?: string;
  /** Bound per receipt and for the connection (default 5000). */
  timeoutMs?: number;
  /** One deadline for all VERIFY polling (default 30000). */
  verifyTimeoutMs?: number;
  /** How long to wait for another run's lock or another owner's hold (default 30000; 0 = do not wait). */
  waitMs?: number;
  /** False skips VERIFY (default true). */
  verify?: boolean;
  /** Extra class output directories, added to the discovered ones. */
  classDirs?: string[];
  /** With no agent found, run the build without a hold (default false). */
  allowNoAgent?: boolean;
  /** Environment (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /**
   * Where the build tool's stdout goes: `inherit` (default, the terminal's stdout) or `stderr`
   * (with `--json`, so that stdout carries only JSON lines).
   */
  buildStdout?: 'inherit' | 'stderr';
  /** True when the user's terminal delivers Ctrl-C to the build itself (default: stdin is a TTY). */
  sharesTerminal?: boolean;
}

/** Hooks for {@link runSafeBuild}. */
export interface SafeBuildHooks {
  onEvent?: (event: RunEvent) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop the run cleanly (exit 130/143). */
  signal?: AbortSignal;
}

/**
 * How long VERIFY waits on a class whose bytes an earlier run already built and could not prove
 * (the agent has had its capture of them: beyond its receipts, failed, or not reloaded), in ms.
 */
const SETTLED_WAIT_MS = 3000;

/** How long a run waits for the capture its predecessor's ok scheduled, and how often it asks, in ms. */
const CAPTURE_WAIT_MS = 5000;
const CAPTURE_POLL_MS = 100;

/**
 * Runs one safe build. Never throws for expected failures (no agent, rejected hold, lost
 * receipt, failed build, unproven classes): they come back as a {@link RunResult} with a
 * reason and exit status.
 */
export async function runSafeBuild(options: SafeBuildOptions, hooks: SafeBuildHooks = {}): Promise<RunResult> {
  return new SafeBuild(options, hooks).run();
}

class SafeBuild {
  private readonly started = performance.now();
  private readonly cwd: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly platform: NodeJS.Platform;
  private readonly timeoutMs: number;
  private readonly emit: (event: RunEvent) => void;
  private readonly signal: AbortSignal | undefined;
  private connection: AgentConnection | undefined;
  private agent: AgentInfo | undefined;
  private owner: string | undefined;
  private command: BuildCommand | undefined;
  private hold: HoldLeft = 'none';
  /** The agent's build hold kind at connect time (DOCTOR). */
  private holdAtStart = 'none';
  /** Nested class output directories already warned about. */
  private readonly nestedWarned = new Set<string>();

  constructor(
    private readonly options: SafeBuildOptions,
    hooks: SafeBuildHooks,
  ) {
    this.cwd = path.resolve(options.cwd ?? process.cwd());
    this.env = options.env ?? process.env;
    this.platform = options.platform ?? process.platform;
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.emit = hooks.onEvent ?? (() => undefined);
    this.signal = hooks.signal;
  }

  async run(): Promise<RunResult> {
    let releaseLock: (() => Promise<void>) | undefined;
    try {
      if (this.env[NESTED_ENV] === '1') return this.end({ reason: 'nested', variable: NESTED_ENV });
      try {
        this.command = resolveBuildCommand(this.options.tool, this.options.args, { cwd: this.cwd, platform: this.platform });
      } catch (error) {
        return this.end({ reason: 'usage', problem: { kind: 'input', text: (error as Error).message, forBuild: true } });
      }
      const never = neverEndingArgument(this.command);
      if (never !== undefined) return this.end({ reason: 'usage', problem: { kind: 'never-ending', argument: never } });
      const executable = await checkExecutable(this.command, this.platform);
      if (executable.kind === 'not-executable') return this.end({ reason: 'command-not-executable', path: executable.path });
      if (executable.kind === 'missing') return this.end({ reason: 'command-not-found', file: this.command.file, tool: this.command.kind });

      const target = {
        cwd: this.cwd,
        env: this.env,
        timeoutMs: this.timeoutMs,
        ...pick(this.options, 'port', 'portFile'),
        ...this.listen(),
      };
      const found = findAgent(target, true);
      if (found.kind === 'refused') {
        if (found.outcome.reason === 'no-agent' && this.options.allowNoAgent) return await this.buildWithoutAgent(found.outcome);
        return this.end(found.outcome);
      }
      const location = found.location;
      const lock = await acquireRunLock(
        location.projectDir,
        this.options.waitMs ?? DEFAULTS.waitMs,
        (elapsedMs) => this.emit({ type: 'waiting', what: WAITING_FOR.lock, elapsedMs }),
        this.signal,
        () => this.warn(warningText.lockLost(path.join(location.projectDir, '.reclazz', 'build.lock'))),
      );
      if (lock.kind === 'aborted') return this.interrupted('waiting-for-lock');
      if (lock.kind === 'busy') return this.end({ reason: 'lock-busy', lockPath: lock.lockPath, waitedMs: lock.waitedMs });
      releaseLock = lock.release;
      const opened = await connectAgent(location, target);
      if (opened.kind === 'refused') return this.end(opened.outcome);
      this.connection = opened.connection;
      return await this.withAgent(opened);
    } catch (error) {
      return await this.failure(error);
    } finally {
      this.connection?.close();
      await releaseLock?.();
    }
  }

  /** The agent's own events worth showing while the run waits. */
  private listen() {
    return {
      signal: this.signal,
      onEvent: (event: { level: string; message: string }) => {
        if (SHOWN_AGENT_LEVELS.has(event.level)) this.emit({ type: 'agent-event', level: event.level, message: event.message });
      },
    };
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  /**
   * A thrown error: a state file that cannot be read or written (the build has not run then), or a
   * bug. A hold this run may have is given `failed` (it stays with the owner, who recovers it
   * by running again) before the run ends: 69 for state files, 70 for anything else.
   */
  private async failure(error: unknown): Promise<RunResult> {
    const mayHold = this.hold !== 'none' && this.connection !== undefined && !this.connection.closed;
    if (mayHold) await this.finishHold('failed').catch(() => undefined);
    const holdOwner = this.hold === 'none' ? {} : { holdOwner: this.owner! };
    if (error instanceof StateError) {
      return this.end({
        reason: 'state-error',
        problem: error.message,
        dir: path.dirname(error.path),
        file: path.basename(error.path),
        ...holdOwner,
      });
    }
    this.warn(warningText.internalError(error));
    return this.end({ reason: 'internal-error', problem: (error as Error).message ?? String(error), ...holdOwner });
  }

  /** Writes state after `BUILD ok` was acknowledged: a failure there only means the next run checks more, so it is a warning. */
  private saveAfterOk(write: () => void): void {
    try {
      write();
    } catch (error) {
      if (!(error instanceof StateError)) throw error;
      this.warn(warningText.notSaved(error.message));
    }
  }

  private async withAgent(opened: OpenAgent): Promise<RunResult> {
    const { connection, location } = opened;
    const checked = await checkAgent(
      opened,
      { need: 'owned builds', ownedBuilds: true, verify: this.options.verify !== false, offerNoVerify: true, session: true },
      this.timeoutMs,
      this.signal,
      (agent) => {
        this.agent = agent;
        this.emit({ type: 'agent', agent });
      },
    );
    if (checked.kind === 'refused') return this.end(checked.outcome);
    const agent = checked.agent;
    this.holdAtStart = checked.doctor.buildHold;

    const saved = readOwnerState(location.projectDir, (message) => this.warn(message));
    // A token salvaged from a corrupt owner.json whose session id was lost is still tried: it may be the only way to recover a hold.
    const savedOwner =
      saved !== undefined && (saved.sessionId === agent.sessionId || (saved.recoveredFrom !== undefined && saved.sessionId === ''))
        ? saved.owner
        : undefined;
    const owner = this.options.owner ?? savedOwner ?? newToken();
    this.owner = owner;
    this.emit({
      type: 'hold',
      owner,
      ownerSource: this.options.owner !== undefined ? 'option' : savedOwner !== undefined ? 'saved' : 'new',
    });
    // Saved before `started` is sent: a lost receipt may still have installed the hold.
    const ownerState: OwnerState = { owner, sessionId: agent.sessionId, port: agent.port, updatedAt: new Date().toISOString(), held: true };
    writeOwnerState(location.projectDir, ownerState);

    // Our previous run ended at its ok receipt, which only schedules the agent's capture: let
    // that capture release the hold before `started` (a newer started would cancel it).
    if (this.holdAtStart === 'named' && owner === savedOwner && saved?.held === false) {
      await this.awaitCaptureRelease(connection);
    }

    const acquired = await acquireHold(connection, {
      owner,
      timeoutMs: this.timeoutMs,
      waitMs: this.options.waitMs ?? DEFAULTS.waitMs,
      signal: this.signal,
      onBusy: (elapsedMs) => this.emit({ type: 'waiting', what: WAITING_FOR.hold, elapsedMs }),
    });
    if ((acquired.kind === 'busy' || acquired.kind === 'interrupted-waiting') && saved !== undefined && saved.owner !== owner) {
      // Our started was rejected, so we took no hold: keep the token of a hold an earlier run may have left.
      writeOwnerState(location.projectDir, saved);
    }
    switch (acquired.kind) {
      case 'acquired':
        this.hold = 'held';
        break;
      case 'interrupted-waiting':
        return this.interrupted('waiting-for-hold');
      case 'busy':
        return this.end({ reason: 'hold-busy', waitedMs: acquired.waitedMs });
      case 'old-style':
        this.hold = 'unknown';
        return this.end({ reason: 'old-agent', port: agent.port, need: 'owned builds', evidence: 'unowned-receipt' });
      case 'lost': {
        this.hold = 'unknown';
        const failure = acquired.failure;
        if (failure.kind === 'aborted') return this.interrupted('started-receipt');
        const lost = { kind: 'build-started' as const, owner, detail: failure.message };
        return this.end(
          failure.kind === 'timeout'
            ? { reason: 'no-receipt', awaited: lost }
            : { reason: 'agent-disconnected', port: agent.port, during: lost },
        );
      }
    }
    return this.buildUnderHold(opened.location.projectDir, connection, agent, ownerState);
  }

  private async buildUnderHold(
    projectDir: string,
    connection: AgentConnection,
    agent: AgentInfo,
    ownerState: OwnerState,
  ): Promise<RunResult> {
    const owner = ownerState.owner;
    // Run from a folder inside the project (src/main/java/...): look for class output from the project folder.
    const searchRoot = isInside(this.cwd, projectDir) ? projectDir : this.cwd;
    const given = (this.options.classDirs ?? []).map((d) => path.resolve(this.cwd, d));
    for (const dir of given.filter((d) => !fs.existsSync(d))) this.warn(warningText.missingClassesDir(dir));
    const classDirs = () => [...findClassDirs(searchRoot, this.command!.kind), ...given];
    const dirsBefore = this.outermost(unique(classDirs()), given);
    const baseline = await this.baseline(projectDir, dirsBefore, agent.sessionId);
    this.warnUnwatched(dirsBefore, agent);
    if (this.signal?.aborted) {
      // Interrupted between the receipt and the spawn: the build never starts.
      await this.finishHold('failed');
      return this.interrupted('before-build');
    }

    const build = await this.spawnBuild(dirsBefore, true);
    // A signal that lands after the child ended still means "not ok": never send ok after an interrupt.
    if (build.interruptedBy !== undefined || this.signal?.aborted) {
      await this.finishHold('failed');
      return this.interrupted('build', build);
    }
    if (connection.closed) {
      this.hold = 'unknown';
      const found = await this.observeAgent(agent.port);
      return this.end({ reason: 'not-safe', owner, what: { kind: 'lost-during-build', found } }, { build });
    }

    const succeeded = build.exitCode === 0;
    const finished = await this.finishHold(succeeded ? 'ok' : 'failed');
    if (finished === 'ack' && succeeded) {
      this.saveAfterOk(() => writeOwnerState(projectDir, { ...ownerState, held: false, updatedAt: new Date().toISOString() }));
    }
    if (finished === 'aborted') return this.interrupted(succeeded ? 'ok-receipt' : 'failed-receipt', build);
    if (finished !== 'ack') {
      // Never leave a lost ok standing: `failed` (fresh request token) cancels a capture it may have scheduled.
      if (succeeded) await this.finishHold('failed');
      this.hold = 'unknown';
      const found = connection.closed ? await this.observeAgent(agent.port) : undefined;
      const what = { kind: 'finish' as const, succeeded, receipt: finished, ...(found === undefined ? {} : { found }) };
      return this.end({ reason: 'not-safe', owner, what }, { build });
    }
    if (!succeeded) {
      this.hold = 'held';
      return this.end({ reason: 'build-failed', status: build.exitCode, owner }, { build });
    }
    this.hold = 'none';
    const dirsAfter = this.outermost(unique([...dirsBefore, ...classDirs()]), given);
    const detected = await detectChanges(baseline, dirsAfter);
    this.warnUnreadable(detected.unreadable);
    if (dirsAfter.length === 0) {
      this.warn(warningText.noClassDirs(searchRoot));
      return this.end({ reason: 'ok', proof: { kind: 'no-class-dirs', searchRoot } }, { build });
    }
    const result = await this.verifyChanges(detected.changes, build, detected.unreadable.length);
    // The next run's baseline: what is live now. A changed class not proven applied (failed,
    // timed out, beyond the agent's receipts, interrupted, --no-verify) is marked unproven, so
    // the next run checks it again rather than taking it as live.
    const proven = new Set(result.verdicts.filter((v) => v.status === 'applied').map((v) => v.path));
    const unproven = detected.changes.changed.filter((c) => c.verifiable && !proven.has(c.path));
    markUnproven(detected.index, baseline, new Set(unproven.map((c) => c.path)));
    if (detected.dirty) this.saveAfterOk(() => writeClassIndex(projectDir, detected.index));
    return result;
  }

  /**
   * `dirs` with no directory inside another (class names would differ by where a scan starts).
   * Of two nested ones, a `--classes-dir` that holds a discovered class output directory
   * (`--classes-dir target` around target/classes) is the one dropped; otherwise the inner one.
   * Each dropped directory is named in a warning, once.
   */
  private outermost(dirs: string[], given: readonly string[]): string[] {
    const dropped = new Map<string, string>();
    for (const inner of dirs) {
      for (const outer of dirs) {
        if (outer === inner || !isInside(inner, outer)) continue;
        if (given.includes(outer) && !given.includes(inner)) dropped.set(outer, warningText.givenAroundFound(outer, inner));
        else dropped.set(inner, warningText.nested(inner, outer));
      }
    }
    for (const [dir, message] of dropped) {
      if (this.nestedWarned.has(dir)) continue;
      this.nestedWarned.add(dir);
      this.warn(message);
    }
    return dirs.filter((d) => !dropped.has(d));
  }

  private warnUnreadable(files: string[]): void {
    if (files.length > 0) this.warn(warningText.unreadable(files));
  }

  /**
   * The class files as the agent has them live before this build: the class index, kept by
   * the last run whose ok this agent session acknowledged (a build that failed since left the
   * agent holding, so it reloaded nothing). After an app restart, or for class output
   * directories the index does not cover, that is what is on disk now: those are scanned
   * (only files whose stamp moved are hashed) and the index is saved before the build starts,
   * so that a run killed mid-build still leaves it.
   */
  private async baseline(projectDir: string, dirs: string[], sessionId: string): Promise<ClassIndex> {
    const index = readClassIndex(projectDir, (message) => this.warn(message));
    const sameSession = index.sessionId === sessionId;
    const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : dirs;
    if (sameSession && toScan.length === 0) return index;
    const { index: baseline, unreadable } = await detectChanges({ ...index, sessionId }, toScan);
    this.warnUnreadable(unreadable);
    writeClassIndex(projectDir, baseline);
    return baseline;
  }

  private async spawnBuild(classDirs: string[], held: boolean): Promise<BuildRun> {
    const command = this.command!;
    this.emit({ type: 'build-start', command: describeCommand(command), wrapper: command.wrapper, cwd: command.cwd, classDirs, held });
    const build = await runBuild(command, {
      stdoutToStderr: this.options.buildStdout === 'stderr',
      env: { [NESTED_ENV]: '1' },
      sharesTerminal: this.options.sharesTerminal ?? process.stdin.isTTY === true,
      platform: this.platform,
      ...(this.signal === undefined ? {} : { signal: this.signal }),
    });
    this.emit({
      type: 'build-end',
      exitCode: build.exitCode,
      durationMs: build.durationMs,
      ...(build.signal === undefined ? {} : { signal: build.signal }),
    });
    return build;
  }

  /**
   * Polls DOCTOR every {@link CAPTURE_POLL_MS} ms until the agent reports no named hold, for at
   * most {@link CAPTURE_WAIT_MS} ms (bounded by --wait). Any failure just ends the wait: the
   * `started` that follows has its own receipt rules.
   */
  private async awaitCaptureRelease(connection: AgentConnection): Promise<void> {
    const start = performance.now();
    const limit = Math.min(CAPTURE_WAIT_MS, this.options.waitMs ?? DEFAULTS.waitMs);
    while (performance.now() - start < limit) {
      this.emit({ type: 'waiting', what: WAITING_FOR.capture, elapsedMs: Math.round(performance.now() - start) });
      try {
        await sleep(CAPTURE_POLL_MS, undefined, { signal: this.signal });
        const answer = await askDoctor(connection, this.timeoutMs, this.signal);
        if (answer.kind !== 'observed' || answer.doctor.buildHold !== 'named') return;
      } catch {
        return;
      }
    }
  }

  /** Sends ok/failed with a fresh request token and waits for its receipt. */
  private async finishHold(state: 'ok' | 'failed'): Promise<'ack' | 'rejected' | 'lost' | 'aborted'> {
    const connection = this.connection;
    if (connection === undefined || connection.closed) return 'lost';
    // After an interrupt the receipt is still awaited, bounded, without the aborted signal.
    const interrupted = this.signal?.aborted === true;
    const reply = await sendBuild(connection, state, this.owner!, this.timeoutMs, interrupted ? undefined : this.signal);
    const acknowledged = reply.kind === 'ack';
    this.emit({ type: 'finish', state, acknowledged });
    if (reply.kind === 'lost' && reply.failure.kind === 'aborted') return 'aborted';
    return reply.kind === 'ack' || reply.kind === 'rejected' ? reply.kind : 'lost';
  }

  /** Reconnects once to learn whether the app restarted (see agent/session.ts). */
  private observeAgent(port: number) {
    return observeAgentAfterLoss(port, this.agent!.sessionId, this.timeoutMs);
  }

  /** @param unreadable class files that could not be read: their change is unknown, so the run is never "proven live". */
  private async verifyChanges(changes: ChangeSet, build: BuildRun, unreadable: number): Promise<RunResult> {
    const notVerifiable = changes.changed.filter((c) => !c.verifiable);
    const targets: VerifyTarget[] = changes.changed
      .filter((c) => c.verifiable)
      .map((c) => ({
        className: c.className,
        path: c.path,
        sha256: c.after!,
        previousSha256: c.before,
        ...(c.settled ? { settleByMs: SETTLED_WAIT_MS } : {}),
      }));
    const summary = { changed: changes.changed, added: changes.added, removed: changes.removed, notVerifiable, total: changes.total };
    this.emit({
      type: 'changes',
      changed: changes.changed.length,
      added: changes.added.length,
      removed: changes.removed.length,
      notVerifiable: notVerifiable.length,
      total: changes.total,
    });
    const facts = { build, changes: summary };
    if (this.options.verify === false) return this.end({ reason: 'ok', proof: { kind: 'not-verified', changed: targets.length } }, facts);
    if (targets.length === 0) {
      if (unreadable > 0) {
        return this.end(
          { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'unreadable', unreadable }, noneChanged: true },
          facts,
        );
      }
      const skipped = notVerifiable.length > 0 ? { skipped: notVerifiable.length } : {};
      return this.end({ reason: 'ok', proof: { kind: 'nothing-to-prove', ...skipped } }, facts);
    }
    const report = await verifyClasses(this.connection!, targets, {
      sessionId: this.agent!.sessionId,
      timeoutMs: this.options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
      onProgress: (p) => this.emit({ type: 'verify-progress', ...p }),
      ...(this.signal === undefined ? {} : { signal: this.signal }),
    });
    const { verdicts, ...verify } = report;
    const found = verdicts.some((v) => v.status === 'connection-lost') ? await this.observeAgent(this.agent!.port) : undefined;
    const outcome = verdictOutcome(report, {
      files: false,
      signal: this.signal,
      unreadable,
      skipped: notVerifiable.length,
      ...(found === undefined ? {} : { found }),
    });
    return this.end(outcome, { ...facts, verify, verdicts });
  }

  private warnUnwatched(dirs: string[], agent: AgentInfo): void {
    for (const { dir } of watchCoverage(dirs, agent.watchedDirectories, agent.watchSampleTruncated).filter((c) => c.watched === false)) {
      this.warn(warningText.unwatched(dir, agent.watchedDirectories));
    }
  }

  private async buildWithoutAgent(why: Outcome): Promise<RunResult> {
    this.warn(warningText.noAgent(describeOutcome(why).message));
    const build = await this.spawnBuild(unique([...findClassDirs(this.cwd, this.command!.kind), ...(this.options.classDirs ?? [])]), false);
    if (build.interruptedBy !== undefined) return this.interrupted('build', build);
    return this.end(build.exitCode === 0 ? { reason: 'no-agent-build' } : { reason: 'build-failed', status: build.exitCode }, { build });
  }

  private interrupted(at: InterruptPoint, build?: BuildRun, facts: RunFacts = {}): RunResult {
    const holdOwner = this.hold === 'none' ? {} : { holdOwner: this.owner! };
    if (this.hold !== 'none') this.hold = this.hold === 'held' ? 'held' : 'unknown';
    return this.end(
      { reason: 'interrupted', signal: signalOf(this.signal), at, ...holdOwner },
      { ...facts, ...(build === undefined ? {} : { build }) },
    );
  }

  private end(outcome: Outcome, facts: RunFacts = {}): RunResult {
    return buildRunResult(
      outcome,
      describeOutcome(outcome),
      {
        hold: this.hold,
        ...(this.agent === undefined ? {} : { agent: this.agent }),
        ...(this.owner === undefined ? {} : { owner: this.owner }),
        ...(this.command === undefined ? {} : { command: describeCommand(this.command) }),
        ...facts,
      },
      this.started,
    );
  }
}

function isInside(dir: string, root: string): boolean {
  const relative = path.relative(root, dir);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

function pick<T extends object, K extends keyof T>(object: T, ...keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (object[key] !== undefined) out[key] = object[key];
  return out;
}
