/**
 * `runSafeBuild`: prepare the build command (nothing is sent if it cannot run), open one session per
 * agent of the checkout (session/open.ts), run one cycle over them (session/group.ts), close them.
 * With no agent found and `allowNoAgent`, the build runs without a hold instead.
 */
import type { RunResult } from './outcome/result.js';
import type { Outcome } from './outcome/outcome.js';
import type { ToolKind } from './outcome/facts.js';
import {
  type BuildSession,
  type CycleOptions,
  failureOutcome,
  type Host,
  type HostOverrides,
  hostWith,
  prepareBuild,
  runResult,
  type SessionHooks,
  type SessionOptions,
} from './session/options.js';
import { noAgentBuild } from './session/cycle.js';
import { openSessions } from './session/open.js';
import { closeSessions, restartIfNeeded, type RestartOptions, runCycles } from './session/group.js';

export { DEFAULTS, NESTED_ENV, type Clock, type Host } from './session/options.js';

/** Options for {@link runSafeBuild}. Times in ms. */
export interface SafeBuildOptions extends SessionOptions, CycleOptions, HostOverrides, RestartOptions {
  /** `gradle`, `mvn`, or `command` (then `args[0]` is the executable). */
  tool: ToolKind;
  /** With no agent found, run the build without a hold (default false). */
  allowNoAgent?: boolean;
}

/** Hooks for {@link runSafeBuild}. */
export type SafeBuildHooks = SessionHooks;

/**
 * Runs one safe build on `host` (cli/host.ts gives the real process). Never throws: an expected
 * failure (no agent, rejected hold, lost receipt, failed build, unproven classes) comes back as a
 * {@link RunResult} with a reason and exit status, a bug as `internal-error`.
 */
export async function runSafeBuild(options: SafeBuildOptions, hooks: SafeBuildHooks, base: Host): Promise<RunResult> {
  const host = hostWith(base, options);
  const startedMs = host.clock.now();
  const early = (outcome: Outcome, extra: Parameters<typeof runResult>[0] = { startedMs, now: host.clock.now }) =>
    runResult(extra, outcome);
  const prepared = await prepareBuild(options, host);
  if (prepared.kind === 'refused') return early(prepared.outcome, { startedMs, now: host.clock.now, ...pickCommand(prepared.command) });
  const command = prepared.command;
  let opening;
  try {
    opening = await openSessions(options, host, hooks, {
      builds: true,
      announce: true,
      offerNoAgent: true,
      requires: { need: 'owned builds', ownedBuilds: true, verify: options.verify !== false, offerNoVerify: true, session: true },
    });
  } catch (error) {
    return early(failureOutcome(error, hooks.onEvent ?? (() => undefined)), { startedMs, now: host.clock.now, command });
  }
  if (opening.kind === 'refused') {
    await opening.releaseLock?.();
    if (opening.outcome.reason === 'no-agent' && options.allowNoAgent)
      return noAgentBuild({ host, hooks, command, options, why: opening.outcome, startedMs });
    const refused = runResult(
      { startedMs, now: host.clock.now, command, ...(opening.agent === undefined ? {} : { session: { agent: opening.agent } }) },
      opening.outcome,
    );
    return opening.among === undefined ? refused : { ...refused, among: opening.among };
  }
  const group = { sessions: opening.sessions as BuildSession[], emit: hooks.onEvent ?? (() => undefined) };
  try {
    // A change that needs a restart: restart the app and prove it there, when asked to (session/group.ts).
    return await restartIfNeeded(await runCycles(group, command, options, startedMs), { group, options });
  } finally {
    await closeSessions(group);
  }
}

function pickCommand<T>(command: T | undefined): { command?: T } {
  return command === undefined ? {} : { command };
}
