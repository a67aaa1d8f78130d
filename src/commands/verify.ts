/**
 * `reclazz-build verify [class files or directories...]`: asks the running agent whether the
 * bytes on disk now (by SHA-256) are applied, with the same VERIFY loop, deadline, capacity
 * and exit statuses as a build (0 all applied, 75 not proven, 69 refused, 2 usage).
 *
 * A point-in-time check: without a build there are no "bytes from before", so a `mismatch`
 * receipt is final here (after a build it may mean "not captured yet").
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentConnectionError } from '../agent/connection.js';
import { isVerifiableClassName } from '../agent/protocol.js';
import { askDoctor, type DoctorAnswer } from '../agent/requests.js';
import { declaredClassName } from '../classes/classfile.js';
import { binaryClassName, hashFile, listClassFiles, type ClassChange } from '../classes/snapshot.js';
import {
  EXIT_REFUSED,
  EXIT_UNPROVEN,
  EXIT_USAGE,
  type AgentInfo,
  type RunEvent,
  type RunReason,
  type RunResult,
  SHOWN_AGENT_LEVELS,
} from '../events.js';
import { verifyClasses, type ClassVerdict, type VerifyReport } from '../verify/verify.js';
import { agentInfo, interruptExit, isCurrentAgent, openAgent, type AgentTarget } from './connect.js';

/** The agent levels a build shows as the agent's own events. */

/** Options for {@link verifyClassFiles}. */
export interface VerifyFilesOptions extends Omit<AgentTarget, 'onEvent'> {
  /** Class files and directories, relative to `cwd` or absolute; a directory means every `.class` below it. */
  paths: string[];
  /** Known class output directories (absolute): a path below one is named relative to it. */
  roots: string[];
  /** One deadline for all VERIFY polling, in ms. */
  verifyTimeoutMs: number;
  onEvent?: (event: RunEvent) => void;
}

/** A usage problem with the paths given: nothing was sent. */
export class ClassPathError extends Error {
  override readonly name = 'ClassPathError';
}

/**
 * Lists the class files under `paths` with their binary names and SHA-256. A file or directory
 * below one of `roots` is named relative to the innermost such root; a directory outside them
 * is itself a class output directory; a file outside them is named by the class it declares.
 * @throws ClassPathError for a missing path, a file that is not a `.class`, or an unnamed class.
 */
export function collectClassFiles(paths: readonly string[], roots: readonly string[], cwd: string): ClassChange[] {
  const found = new Map<string, ClassChange>();
  const rootOf = (target: string): string | undefined =>
    [...roots]
      .map((r) => path.resolve(r))
      .filter((r) => target === r || target.startsWith(r + path.sep))
      .sort((a, b) => b.length - a.length)[0];
  for (const given of paths) {
    const full = path.resolve(cwd, given);
    let stat: fs.Stats;
    try {
      stat = fs.statSync(full);
    } catch {
      throw new ClassPathError(`no such file or directory: ${given}`);
    }
    if (stat.isDirectory()) {
      const root = rootOf(full) ?? full;
      for (const file of listClassFiles(full)) add(found, file, binaryClassName(root, file));
    } else {
      if (!full.endsWith('.class'))
        throw new ClassPathError(`not a class file: ${given} (give .class files or the directories holding them)`);
      const root = rootOf(full);
      const name = root !== undefined ? binaryClassName(root, full) : declaredClassName(readOrEmpty(full));
      if (name === undefined) {
        throw new ClassPathError(
          `cannot tell the binary class name of ${given}: it is outside every known class output directory and is not a readable class file; give its class output directory instead, or name it with --classes-dir`,
        );
      }
      add(found, full, name);
    }
  }
  return [...found.values()].sort((a, b) => (a.className < b.className ? -1 : a.className > b.className ? 1 : 0));
}

function add(found: Map<string, ClassChange>, file: string, className: string): void {
  if (found.has(file)) return;
  const sha256 = hashFile(file);
  if (sha256 === undefined) return;
  found.set(file, { path: file, className, verifiable: isVerifiableClassName(className), after: sha256 });
}

function readOrEmpty(file: string): Uint8Array {
  try {
    return fs.readFileSync(file);
  } catch {
    return new Uint8Array();
  }
}

/** Verifies the class files under `paths` against the running agent. Never throws for the agent's behaviour. */
export async function verifyClassFiles(options: VerifyFilesOptions): Promise<RunResult> {
  const started = performance.now();
  const emit = options.onEvent ?? (() => undefined);
  let agent: AgentInfo | undefined;
  let changes: RunResult['changes'];
  const end = (reason: RunReason, exitCode: number, message: string, extra: Partial<RunResult> = {}): RunResult => ({
    reason,
    exitCode,
    message,
    verdicts: [],
    hold: 'none',
    provenLive: false,
    ...(agent === undefined ? {} : { agent }),
    ...(changes === undefined ? {} : { changes }),
    ...extra,
    durationMs: Math.round(performance.now() - started),
  });

  let files: ClassChange[];
  try {
    files = collectClassFiles(options.paths, options.roots, options.cwd);
  } catch (error) {
    if (!(error instanceof ClassPathError)) throw error;
    return end('usage', EXIT_USAGE, error.message);
  }
  if (files.length === 0) {
    return end('usage', EXIT_USAGE, `no class files found in ${options.paths.join(', ') || 'the class output directories here'}`, {
      hint: 'give .class files or the directories holding them (for example target/classes)',
    });
  }
  const notVerifiable = files.filter((f) => !f.verifiable);
  changes = { changed: files, added: [], removed: [], notVerifiable, total: files.length };

  const opened = await openAgent({
    ...options,
    onEvent: (event) => {
      if (SHOWN_AGENT_LEVELS.has(event.level)) emit({ type: 'agent-event', level: event.level, message: event.message });
    },
  });
  if (opened.kind === 'refused') {
    const { kind: _kind, reason, exitCode, message, hint } = opened;
    return end(reason, exitCode, message, hint === undefined ? {} : { hint });
  }
  const { connection, location, connected } = opened;
  try {
    if (!isCurrentAgent(connected)) {
      return end(
        'old-agent',
        EXIT_REFUSED,
        `the agent on port ${location.port} is too old for VERIFY (its CONNECTED line has no agent version)`,
        { hint: 'update the reclazz agent in the app' },
      );
    }
    let doctor: DoctorAnswer;
    try {
      doctor = await askDoctor(connection, options.timeoutMs, options.signal);
    } catch (error) {
      if (options.signal?.aborted)
        return end('interrupted', interruptExit(options.signal), 'interrupted while asking the agent for DOCTOR');
      if (!(error instanceof AgentConnectionError)) throw error;
      if (error.kind === 'timeout') {
        return end(
          'agent-not-ready',
          EXIT_REFUSED,
          `the agent ${connected.agent} on port ${location.port} did not answer DOCTOR within ${options.timeoutMs} ms: it is not ready (still starting) or too old`,
          {
            hint: 'wait until the app has started and try again, or raise --timeout',
          },
        );
      }
      return end('agent-disconnected', EXIT_REFUSED, `the agent on port ${location.port} closed the connection during DOCTOR`, {
        hint: 'check that the app is still running',
      });
    }
    if (doctor.kind === 'unavailable') {
      return end(
        'agent-not-ready',
        EXIT_REFUSED,
        `the agent on port ${location.port} cannot describe itself yet (DOCTOR: ${doctor.detail})`,
        { hint: 'wait until the app has started and try again' },
      );
    }
    agent = agentInfo(location, connected, doctor.doctor);
    emit({ type: 'agent', agent });
    if (!doctor.doctor.verifySupported) {
      return end('unsupported', EXIT_REFUSED, `the agent ${agent.agentVersion} cannot VERIFY classes (verifySupported=false)`, {
        hint: 'try again once the app has started, or update the agent',
      });
    }
    if (agent.sessionId === '')
      return end('agent-not-ready', EXIT_REFUSED, 'the agent reports no session id yet: it is still starting', {
        hint: 'try again in a moment',
      });

    const targets = files.filter((f) => f.verifiable).map((f) => ({ className: f.className, path: f.path, sha256: f.after! }));
    if (targets.length === 0) {
      return end('ok', 0, `none of the ${files.length} class file(s) has a name VERIFY accepts: nothing to prove`, { provenLive: true });
    }
    const report = await verifyClasses(connection, targets, {
      sessionId: agent.sessionId,
      timeoutMs: options.verifyTimeoutMs,
      onProgress: (p) => emit({ type: 'verify-progress', ...p }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return verdictResult(report, end, options.signal);
  } finally {
    connection.close();
  }
}

type End = (reason: RunReason, exitCode: number, message: string, extra?: Partial<RunResult>) => RunResult;

/** The result of a VERIFY round, by the build's rules: 0 when every class is applied, else 75. */
function verdictResult(report: VerifyReport, end: End, signal: AbortSignal | undefined): RunResult {
  const { verdicts, ...verify } = report;
  const applied = verdicts.filter((v: ClassVerdict) => v.status === 'applied').length;
  if (verdicts.some((v) => v.status === 'interrupted')) {
    return end('interrupted', interruptExit(signal), `interrupted (${signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT'}) during VERIFY`, {
      verify,
      verdicts,
    });
  }
  if (applied === verdicts.length) {
    return end('ok', 0, `all ${applied} class(es) proven live (VERIFY applied, SHA-256 matched)`, { verify, verdicts, provenLive: true });
  }
  const why =
    report.sessionChangedTo !== undefined
      ? 'the app restarted during VERIFY (new agent session)'
      : report.capacityLimited
        ? `more classes than the agent keeps receipts for (${verdicts.length} > 512)`
        : `${verdicts.length - applied} not proven`;
  return end('verify-incomplete', EXIT_UNPROVEN, `only ${applied} of ${verdicts.length} class(es) are proven live: ${why}`, {
    verify,
    verdicts,
    hint: verdicts.some((v) => v.status === 'timeout')
      ? 'a class still not_observed at the deadline has no receipt in this agent session (never reloaded, evicted, or the app restarted); rebuild with reclazz-build, or raise --verify-timeout'
      : "see the agent's detail for each class; exercise the app, or restart it if the change must be live",
  });
}
