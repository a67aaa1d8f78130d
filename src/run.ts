/**
 * `runSafeBuild`: the whole job. Find the agent, take the named hold and see its exact
 * receipt, run the build tool, report ok/failed and see that receipt, find the class files
 * whose bytes changed, VERIFY each under one deadline, and say what is proven live.
 */
import { AgentConnection, AgentConnectionError } from './agent/connection.js';
import { discoverAgent, DiscoveryError, type AgentLocation } from './agent/discover.js';
import { newToken } from './agent/protocol.js';
import { askDoctor, type DoctorAnswer } from './agent/requests.js';
import { agentInfo, connectRefusal, isCurrentAgent } from './commands/connect.js';
import { watchCoverage } from './commands/doctor.js';
import { describeAgentAfterLoss, observeAgentAfterLoss, type AgentAfterLoss } from './agent/session.js';
import { findClassDirs } from './build/outputs.js';
import { checkExecutable, runBuild, signalToNumber, type BuildRun, type StopSignal } from './build/run.js';
import { describeCommand, refuseNeverEndingBuild, resolveBuildCommand, type BuildCommand, type ToolKind } from './build/tool.js';
import { detectChanges, markUnproven, type ChangeSet, type ClassIndex } from './classes/snapshot.js';
import {
  EXIT_COMMAND_NOT_FOUND,
  EXIT_NOT_EXECUTABLE,
  EXIT_NOT_SAFE,
  EXIT_REFUSED,
  EXIT_UNPROVEN,
  EXIT_USAGE,
  type AgentInfo,
  type HoldLeft,
  type RunEvent,
  type RunReason,
  type RunResult,
  SHOWN_AGENT_LEVELS,
} from './events.js';
import { acquireHold, sendBuild } from './hold/hold.js';
import { acquireRunLock } from './state/lock.js';
import { readClassIndex, readOwnerState, StateError, writeClassIndex, writeOwnerState, type OwnerState } from './state/store.js';
import { verifyClasses, type ClassVerdict, type VerifyTarget } from './verify/verify.js';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

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
export const SETTLED_WAIT_MS = 3000;

/** How long a run waits for the capture its predecessor's ok scheduled, and how often it asks, in ms. */
export const CAPTURE_WAIT_MS = 5000;
export const CAPTURE_POLL_MS = 100;

/** Defaults for {@link SafeBuildOptions}, in ms. */
export const DEFAULTS = { timeoutMs: 5000, verifyTimeoutMs: 30000, waitMs: 30000 } as const;

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
      if (this.env[NESTED_ENV] === '1') {
        return this.end('nested', EXIT_REFUSED, `refusing to run inside another safe build (${NESTED_ENV}=1 is set)`, {
          hint: 'run the inner build command directly; the outer reclazz-build already holds the agent',
        });
      }
      try {
        this.command = resolveBuildCommand(this.options.tool, this.options.args, { cwd: this.cwd, platform: this.platform });
      } catch (error) {
        return this.end('usage', EXIT_USAGE, (error as Error).message, { hint: 'usage: reclazz-build [options] -- <command> [args...]' });
      }
      const never = refuseNeverEndingBuild(this.command);
      if (never !== undefined) return this.end('usage', EXIT_USAGE, never);
      const executable = await checkExecutable(this.command, this.platform);
      if (executable.kind === 'not-executable') {
        return this.end('command-not-executable', EXIT_NOT_EXECUTABLE, `build command is not executable: ${executable.path}`, {
          hint: `make it executable (chmod +x ${executable.path}) or run it through its interpreter`,
        });
      }
      if (executable.kind === 'missing') {
        return this.end('command-not-found', EXIT_COMMAND_NOT_FOUND, `build command not found: ${this.command.file}`, {
          hint: this.command.kind === 'command' ? 'check the command after --' : `install ${this.command.kind} or add the project's wrapper script`,
        });
      }

      let location: AgentLocation;
      try {
        location = discoverAgent({ cwd: this.cwd, env: this.env, ...pick(this.options, 'port', 'portFile') });
      } catch (error) {
        if (!(error instanceof DiscoveryError)) throw error;
        if (error.kind === 'not-found' && this.options.allowNoAgent) return await this.buildWithoutAgent(error.message);
        const reason: RunReason = error.kind === 'ambiguous' ? 'ambiguous-agent' : error.kind === 'not-found' ? 'no-agent' : 'bad-port-file';
        return this.end(reason, EXIT_REFUSED, error.message);
      }

      const lock = await acquireRunLock(
        location.projectDir,
        this.options.waitMs ?? DEFAULTS.waitMs,
        (elapsedMs) => this.emit({ type: 'waiting', what: 'another reclazz-build run in this checkout to finish', elapsedMs }),
        this.signal,
        () => this.emit({ type: 'warning', message: `another run took over the run lock (${path.join(location.projectDir, '.reclazz', 'build.lock')}): runs in this checkout may overlap` }),
      );
      if (lock.kind === 'aborted') return this.interrupted('while waiting for another run');
      if (lock.kind === 'busy') {
        return this.end('lock-busy', EXIT_REFUSED, `another reclazz-build run in this checkout still holds ${lock.lockPath} after ${lock.waitedMs} ms`, {
          hint: `wait for it to finish (a suspended one: fg), or raise --wait <ms>; if no run is left here, remove ${lock.lockPath} and ${lock.lockPath}.holder`,
        });
      }
      releaseLock = lock.release;
      return await this.withAgent(location);
    } catch (error) {
      return await this.failure(error);
    } finally {
      this.connection?.close();
      await releaseLock?.();
    }
  }

  /**
   * A thrown error: a state file that cannot be read or written (the build has not run then), or a
   * bug. A hold this run may have is given `failed` (it stays with the owner, who recovers it
   * by running again) before the run ends: 69 for state files, 70 for anything else.
   */
  private async failure(error: unknown): Promise<RunResult> {
    const mayHold = this.hold !== 'none' && this.connection !== undefined && !this.connection.closed;
    if (mayHold) await this.finishHold('failed').catch(() => undefined);
    const holdNote = this.hold === 'none' ? '' : `; the hold stays with owner ${this.owner}: run again here once fixed to recover it`;
    if (error instanceof StateError) {
      return this.end('state-error', EXIT_REFUSED, `${error.message}; the build did not run${holdNote}`, {
        hint: `reclazz-build keeps its state in ${path.dirname(error.path)}: make it readable and writable for this user, or move away whatever is in the way of ${path.basename(error.path)}`,
      });
    }
    this.emit({ type: 'warning', message: `internal error: ${(error as Error).stack ?? String(error)}` });
    return this.end('internal-error', EXIT_NOT_SAFE, `internal error: ${(error as Error).message ?? String(error)}${holdNote}`, {
      hint: 'this is a bug in reclazz-build: please report it with the output above',
    });
  }

  /** Writes state after `BUILD ok` was acknowledged: a failure there only means the next run checks more, so it is a warning. */
  private saveAfterOk(write: () => void): void {
    try {
      write();
    } catch (error) {
      if (!(error instanceof StateError)) throw error;
      this.emit({ type: 'warning', message: `${error.message}: the next run may verify classes this one already proved` });
    }
  }

  private async withAgent(location: AgentLocation): Promise<RunResult> {
    const refused = await this.connect(location);
    if (refused) return refused;
    const connection = this.connection!;
    const agent = this.agent!;

    const saved = readOwnerState(location.projectDir, (message) => this.emit({ type: 'warning', message }));
    // A token salvaged from a corrupt owner.json whose session id was lost is still tried: it may be the only way to recover a hold.
    const savedOwner =
      saved !== undefined && (saved.sessionId === agent.sessionId || (saved.recoveredFrom !== undefined && saved.sessionId === '')) ? saved.owner : undefined;
    const owner = this.options.owner ?? savedOwner ?? newToken();
    this.owner = owner;
    this.emit({ type: 'hold', owner, ownerSource: this.options.owner !== undefined ? 'option' : savedOwner !== undefined ? 'saved' : 'new' });
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
      onBusy: (elapsedMs) => this.emit({ type: 'waiting', what: 'the build hold, held by another owner (the IDE or another terminal)', elapsedMs }),
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
        return this.interrupted('while waiting for the build hold another owner holds; the build did not run');
      case 'busy':
        return this.end('hold-busy', EXIT_REFUSED, `another owner still holds the agent's build hold after ${acquired.waitedMs} ms; the build did not run`, {
          hint: 'let that build (IDE or terminal) finish, raise --wait <ms>, or restart the app if its owner is gone',
        });
      case 'old-style':
        this.hold = 'unknown';
        return this.end('old-agent', EXIT_REFUSED, 'the agent acknowledged BUILD started without the owner suffix: it is too old for owned builds; the build did not run', {
          hint: 'update the reclazz agent in the app; an unowned hold it may have taken is released by its next successful BUILD ok, or by restarting the app',
        });
      case 'lost':
        this.hold = 'unknown';
        if (acquired.failure.kind === 'aborted') return this.interrupted('while waiting for the BUILD started receipt');
        return this.end(
          acquired.failure.kind === 'timeout' ? 'receipt-timeout' : 'agent-disconnected',
          EXIT_REFUSED,
          `the agent did not acknowledge BUILD started (${acquired.failure.message}); the build did not run`,
          { hint: `the hold may have been taken by owner ${owner}; the next run here reuses that owner and recovers it` },
        );
    }

    // Run from a folder inside the project (src/main/java/...): look for class output from the project folder.
    const searchRoot = isInside(this.cwd, location.projectDir) ? location.projectDir : this.cwd;
    const given = (this.options.classDirs ?? []).map((d) => path.resolve(this.cwd, d));
    for (const dir of given.filter((d) => !fs.existsSync(d))) {
      this.emit({ type: 'warning', message: `--classes-dir ${dir} does not exist: nothing there is checked unless the build creates it` });
    }
    const classDirs = () => [...findClassDirs(searchRoot, this.command!.kind), ...given];
    const dirsBefore = this.outermost(unique(classDirs()), given);
    const baseline = await this.baseline(location.projectDir, dirsBefore, agent.sessionId);
    this.warnUnwatched(dirsBefore, agent);
    if (this.signal?.aborted) {
      // Interrupted between the receipt and the spawn: the build never starts.
      await this.finishHold('failed');
      return this.interrupted('before the build started');
    }

    const build = await this.runBuildCommand(dirsBefore, true);
    // A signal that lands after the child ended still means "not ok": never send ok after an interrupt.
    if (build.interruptedBy !== undefined || this.signal?.aborted) {
      await this.finishHold('failed');
      return this.interrupted('during the build', build);
    }
    if (connection.closed) return this.agentLost(location, build);

    const succeeded = build.exitCode === 0;
    const finished = await this.finishHold(succeeded ? 'ok' : 'failed');
    if (finished === 'ack' && succeeded) this.saveAfterOk(() => writeOwnerState(location.projectDir, { ...ownerState, held: false, updatedAt: new Date().toISOString() }));
    if (finished === 'aborted') return this.interrupted(`while waiting for the BUILD ${succeeded ? 'ok' : 'failed'} receipt`, build);
    if (finished !== 'ack') {
      // Never leave a lost ok standing: `failed` (fresh request token) cancels a capture it may have scheduled.
      if (succeeded) await this.finishHold('failed');
      this.hold = 'unknown';
      const found = connection.closed ? await this.observeAgent(location.port) : undefined;
      return this.end('not-safe', EXIT_NOT_SAFE, `the build ${succeeded ? 'succeeded' : 'failed'} but the BUILD ${succeeded ? 'ok' : 'failed'} receipt was ${finished === 'rejected' ? 'rejected' : 'lost'}${found === undefined ? '' : ` (the connection closed; ${describeAgentAfterLoss(found)})`}: not completed safely; the reload state is unknown`, {
        hint: found?.kind === 'restarted' ? 'the app restarted: check it, and run again to rebuild under a hold' : `run again here to recover the hold with owner ${owner}, then check the app`,
        build,
      });
    }
    if (!succeeded) {
      this.hold = 'held';
      return this.end('build-failed', build.exitCode, `the build failed (exit status ${build.exitCode}); the agent keeps holding its output for owner ${owner}`, {
        hint: 'fix the build and run again here: the next run reuses the owner and releases the hold',
        build,
      });
    }
    this.hold = 'none';
    const dirsAfter = this.outermost(unique([...dirsBefore, ...classDirs()]), given);
    const detected = await detectChanges(baseline, dirsAfter);
    this.warnUnreadable(detected.unreadable);
    if (dirsAfter.length === 0) {
      const message = `no class output directory found under ${searchRoot} (target/classes, build/classes/*/main): nothing was checked`;
      this.emit({ type: 'warning', message });
      return this.end('ok', 0, `build ok and acknowledged; ${message}`, { build, hint: 'run from the project folder, or name the directory with --classes-dir <dir>' });
    }
    const result = await this.verifyChanges(detected.changes, build, detected.unreadable.length);
    // The next run's baseline: what is live now. A changed class not proven applied (failed,
    // timed out, beyond the agent's receipts, interrupted, --no-verify) is marked unproven, so
    // the next run checks it again rather than taking it as live.
    const proven = new Set(result.verdicts.filter((v) => v.status === 'applied').map((v) => v.path));
    const unproven = detected.changes.changed.filter((c) => c.verifiable && !proven.has(c.path));
    markUnproven(detected.index, baseline, new Set(unproven.map((c) => c.path)));
    if (detected.dirty) this.saveAfterOk(() => writeClassIndex(location.projectDir, detected.index));
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
        if (given.includes(outer) && !given.includes(inner)) dropped.set(outer, `--classes-dir ${outer} holds the class output directory ${inner}, which is used instead`);
        else dropped.set(inner, `${inner} is inside the class output directory ${outer}, which covers it; give the folder where the package folders start`);
      }
    }
    for (const [dir, message] of dropped) {
      if (this.nestedWarned.has(dir)) continue;
      this.nestedWarned.add(dir);
      this.emit({ type: 'warning', message });
    }
    return dirs.filter((d) => !dropped.has(d));
  }

  private warnUnreadable(files: string[]): void {
    if (files.length === 0) return;
    this.emit({
      type: 'warning',
      message: `cannot read ${files.length} class file(s), so their changes are not checked (${files.slice(0, 3).join(', ')}${files.length > 3 ? ', ...' : ''}): check their permissions`,
    });
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
    const index = readClassIndex(projectDir, (message) => this.emit({ type: 'warning', message }));
    const sameSession = index.sessionId === sessionId;
    const toScan = sameSession ? dirs.filter((d) => !index.dirs.includes(d)) : dirs;
    if (sameSession && toScan.length === 0) return index;
    const { index: baseline, unreadable } = await detectChanges({ ...index, sessionId }, toScan);
    this.warnUnreadable(unreadable);
    writeClassIndex(projectDir, baseline);
    return baseline;
  }

  private async connect(location: AgentLocation): Promise<RunResult | undefined> {
    let opened;
    try {
      opened = await AgentConnection.open(location.port, {
        timeoutMs: this.timeoutMs,
        signal: this.signal,
        onEvent: (event) => {
          if (SHOWN_AGENT_LEVELS.has(event.level)) {
            this.emit({ type: 'agent-event', level: event.level, message: event.message });
          }
        },
      });
    } catch (error) {
      if (!(error instanceof AgentConnectionError)) throw error;
      if (error.kind === 'aborted') return this.interrupted('while connecting to the agent');
      const refused = connectRefusal(error, location);
      return this.end(refused.reason, refused.exitCode, refused.message, refused.hint === undefined ? {} : { hint: refused.hint });
    }
    this.connection = opened.connection;
    const { connected } = opened;
    if (!isCurrentAgent(connected)) {
      return this.end('old-agent', EXIT_REFUSED, `the agent on port ${location.port} is too old for owned builds (its CONNECTED line has no agent version)`, {
        hint: 'update the reclazz agent in the app',
      });
    }

    let doctor: DoctorAnswer;
    try {
      doctor = await askDoctor(this.connection, this.timeoutMs, this.signal);
    } catch (error) {
      if (!(error instanceof AgentConnectionError)) throw error;
      if (error.kind === 'aborted') return this.interrupted('while asking the agent for DOCTOR');
      if (error.kind === 'timeout') {
        return this.end('agent-not-ready', EXIT_REFUSED, `the agent ${connected.agent} on port ${location.port} did not answer DOCTOR within ${this.timeoutMs} ms: it is not ready (still starting) or too old`, {
          hint: 'wait until the app has started and try again, or raise --timeout',
        });
      }
      return this.end('agent-disconnected', EXIT_REFUSED, `the agent on port ${location.port} closed the connection during DOCTOR`, { hint: 'check that the app is still running' });
    }
    if (doctor.kind === 'unavailable') {
      return this.end('agent-not-ready', EXIT_REFUSED, `the agent on port ${location.port} cannot describe itself yet (DOCTOR: ${doctor.detail})`, {
        hint: 'wait until the app has started and try again',
      });
    }
    const d = doctor.doctor;
    this.agent = agentInfo(location, connected, d);
    this.emit({ type: 'agent', agent: this.agent });
    this.holdAtStart = d.buildHold;
    if (!d.buildOwnershipSupported) {
      return this.end('unsupported', EXIT_REFUSED, `the agent ${this.agent.agentVersion} does not support owned build holds yet (buildOwnershipSupported=false)`, {
        hint: 'if the app is still starting, try again in a moment; otherwise update the agent',
      });
    }
    if (!d.verifySupported && this.options.verify !== false) {
      return this.end('unsupported', EXIT_REFUSED, `the agent ${this.agent.agentVersion} cannot VERIFY classes (verifySupported=false), so nothing could be proven live`, {
        hint: 'try again once the app has started, or pass --no-verify to build under the hold only',
      });
    }
    if (d.sessionId === '') {
      return this.end('agent-not-ready', EXIT_REFUSED, 'the agent reports no session id yet: it is still starting', { hint: 'try again in a moment' });
    }
    return undefined;
  }

  private async runBuildCommand(classDirs: string[], held: boolean): Promise<BuildRun> {
    const command = this.command!;
    this.emit({ type: 'build-start', command: describeCommand(command), wrapper: command.wrapper, cwd: command.cwd, classDirs, held });
    const build = await runBuild(command, {
      stdoutToStderr: this.options.buildStdout === 'stderr',
      env: { [NESTED_ENV]: '1' },
      sharesTerminal: this.options.sharesTerminal ?? process.stdin.isTTY === true,
      platform: this.platform,
      ...(this.signal === undefined ? {} : { signal: this.signal }),
    });
    this.emit({ type: 'build-end', exitCode: build.exitCode, durationMs: build.durationMs, ...(build.signal === undefined ? {} : { signal: build.signal }) });
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
      this.emit({ type: 'waiting', what: "the agent to capture the previous build's classes", elapsedMs: Math.round(performance.now() - start) });
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

  /** The connection closed during the build: the build has run to its end; nothing was sent after it. */
  private async agentLost(location: AgentLocation, build: BuildRun): Promise<RunResult> {
    this.hold = 'unknown';
    const found = await this.observeAgent(location.port);
    const hint =
      found.kind === 'restarted'
        ? 'the app restarted, so its hold is gone: check the app, and run again to rebuild under a hold'
        : found.kind === 'same-session'
          ? `the agent still holds this build for owner ${this.owner}: run again here to rebuild and release it`
          : `check the app; when it is back, run again here (owner ${this.owner} is reused if the app did not restart)`;
    return this.end('not-safe', EXIT_NOT_SAFE, `the agent closed the connection during the build; ${describeAgentAfterLoss(found)}. The reload state is unknown: not completed safely`, {
      hint,
      build,
    });
  }

  /** Reconnects once to learn whether the app restarted (see agent/session.ts). */
  private observeAgent(port: number): Promise<AgentAfterLoss> {
    return observeAgentAfterLoss(port, this.agent!.sessionId, this.timeoutMs);
  }

  /** @param unreadable class files that could not be read: their change is unknown, so the run is never "proven live". */
  private async verifyChanges(changes: ChangeSet, build: BuildRun, unreadable: number): Promise<RunResult> {
    const notVerifiable = changes.changed.filter((c) => !c.verifiable);
    const targets: VerifyTarget[] = changes.changed
      .filter((c) => c.verifiable)
      .map((c) => ({ className: c.className, path: c.path, sha256: c.after!, previousSha256: c.before, ...(c.settled ? { settleByMs: SETTLED_WAIT_MS } : {}) }));
    const summary = { changed: changes.changed, added: changes.added, removed: changes.removed, notVerifiable, total: changes.total };
    this.emit({
      type: 'changes',
      changed: changes.changed.length,
      added: changes.added.length,
      removed: changes.removed.length,
      notVerifiable: notVerifiable.length,
      total: changes.total,
    });
    if (this.options.verify === false) {
      return this.end('ok', 0, `build ok and acknowledged; ${targets.length} changed class(es) not verified (--no-verify): NOT proven live`, { build, changes: summary });
    }
    const unknown = (proven: string): RunResult =>
      this.end('verify-incomplete', EXIT_UNPROVEN, `build ok; ${proven}, but ${unreadable} class file(s) could not be read, so whether they changed is unknown: not proven live`, {
        build,
        changes: summary,
        hint: 'make the class files named in the warning above readable, and run again',
      });
    if (targets.length === 0) {
      if (unreadable > 0) return unknown('no class that was loaded before changed bytes');
      return this.end('ok', 0, 'build ok and acknowledged; no class that was loaded before changed bytes: nothing to prove', { build, changes: summary, provenLive: true });
    }
    const report = await verifyClasses(this.connection!, targets, {
      sessionId: this.agent!.sessionId,
      timeoutMs: this.options.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
      onProgress: (p) => this.emit({ type: 'verify-progress', ...p }),
      ...(this.signal === undefined ? {} : { signal: this.signal }),
    });
    const { verdicts, ...verify } = report;
    const applied = verdicts.filter((v) => v.status === 'applied').length;
    const common = { build, changes: summary, verify, verdicts };
    if (verdicts.some((v) => v.status === 'interrupted')) return this.interrupted('during VERIFY', build, common);
    if (applied === verdicts.length) {
      if (unreadable > 0) return { ...unknown(`all ${applied} changed class(es) applied`), verify, verdicts };
      return this.end('ok', 0, `all ${applied} changed class(es) proven live (VERIFY applied, SHA-256 matched)`, { ...common, provenLive: true });
    }
    const lost = verdicts.some((v) => v.status === 'connection-lost') ? await this.observeAgent(this.agent!.port) : undefined;
    const why = report.sessionChangedTo !== undefined
      ? 'the app restarted during VERIFY (new agent session)'
      : lost !== undefined
        ? `the agent closed the connection during VERIFY; ${describeAgentAfterLoss(lost)}`
        : report.capacityLimited
          ? `more classes changed than the agent keeps receipts for (${verdicts.length} > 512)`
          : `${verdicts.length - applied} not proven`;
    return this.end('verify-incomplete', EXIT_UNPROVEN, `build ok, but only ${applied} of ${verdicts.length} changed class(es) are proven live: ${why}`, {
      ...common,
      hint: report.capacityLimited
        ? 'the agent keeps receipts for the last 512 reloaded classes only, so the others cannot be proven in this app session: restart the app if they must be live'
        : 'see the classes listed above; exercise the app or restart it if the change must be live',
    });
  }

  private warnUnwatched(dirs: string[], agent: AgentInfo): void {
    const watched = agent.watchedDirectories.join(', ') || 'no directory';
    for (const { dir } of watchCoverage(dirs, agent.watchedDirectories, agent.watchSampleTruncated).filter((c) => c.watched === false)) {
      this.emit({ type: 'warning', message: `the agent does not watch ${dir}: changes there will not reload (it watches ${watched})` });
    }
  }


  private async buildWithoutAgent(why: string): Promise<RunResult> {
    this.emit({ type: 'warning', message: `${why.split('\n')[0]}\n--allow-no-agent: building WITHOUT a hold; nothing will be verified` });
    const build = await this.runBuildCommand(unique([...findClassDirs(this.cwd, this.command!.kind), ...(this.options.classDirs ?? [])]), false);
    if (build.interruptedBy !== undefined) return this.interrupted('during the build', build);
    return this.end(
      build.exitCode === 0 ? 'no-agent-build' : 'build-failed',
      build.exitCode,
      `build ${build.exitCode === 0 ? 'ok' : `failed (exit status ${build.exitCode})`} without an agent: nothing is proven live`,
      { build },
    );
  }

  private interrupted(when: string, build?: BuildRun, extra: Partial<RunResult> = {}): RunResult {
    const signal: StopSignal = this.signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT';
    const holdNote = this.hold === 'none' ? '' : `; the hold may be left with owner ${this.owner}: the next run here reuses it and recovers`;
    if (this.hold !== 'none') this.hold = this.hold === 'held' ? 'held' : 'unknown';
    return this.end('interrupted', 128 + (signalToNumber(signal) ?? 2), `interrupted (${signal}) ${when}${holdNote}`, {
      ...extra,
      ...(build === undefined ? {} : { build }),
    });
  }

  private end(
    reason: RunReason,
    exitCode: number,
    message: string,
    extra: Partial<Omit<RunResult, 'reason' | 'exitCode' | 'message'>> & { verdicts?: ClassVerdict[] } = {},
  ): RunResult {
    return {
      reason,
      exitCode,
      message,
      verdicts: [],
      hold: this.hold,
      provenLive: false,
      ...(this.agent === undefined ? {} : { agent: this.agent }),
      ...(this.owner === undefined ? {} : { owner: this.owner }),
      ...(this.command === undefined ? {} : { command: describeCommand(this.command) }),
      ...extra,
      durationMs: Math.round(performance.now() - this.started),
    };
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
