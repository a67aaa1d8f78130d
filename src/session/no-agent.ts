/** `--allow-no-agent`: with no agent found, the build runs without a hold, and nothing is verified. */
import { findClassDirs } from '../classes/dirs.js';
import type { Outcome } from '../outcome/outcome.js';
import type { RunResult } from '../outcome/result.js';
import { warningText } from '../report/step-words.js';
import { describeOutcome } from '../report/words.js';
import type { BuildCommand } from '../tool/resolve.js';
import type { CycleOptions, Host, SessionHooks } from './options.js';
import { runResult } from './result.js';
import { spawnBuild } from './spawn.js';
import { signalOf } from '../outcome/exit.js';

/** What the build without an agent needs. */
export interface NoAgentRun {
  host: Host;
  hooks: SessionHooks;
  command: BuildCommand;
  options: CycleOptions;
  /** Why there is no agent (the no-agent refusal), said in the warning. */
  why: Outcome;
  startedMs: number;
}

/** Runs the build without a hold; its result says nothing is proven live. */
export async function noAgentBuild(run: NoAgentRun): Promise<RunResult> {
  const { host, hooks, command, options } = run;
  const emit = hooks.onEvent ?? (() => undefined);
  emit({ type: 'warning', message: warningText.noAgent(describeOutcome(run.why).message) });
  const dirs = [...new Set([...findClassDirs(host.cwd, command.kind), ...(options.classDirs ?? [])])];
  const build = await spawnBuild({ host, emit, signal: hooks.signal }, command, options, dirs, false);
  const context = { command, startedMs: run.startedMs, now: () => host.clock.now() };
  if (build.interruptedBy !== undefined)
    return runResult(context, { reason: 'interrupted', signal: signalOf(hooks.signal), at: 'build' }, { build });
  return runResult(context, build.exitCode === 0 ? { reason: 'no-agent-build' } : { reason: 'build-failed', status: build.exitCode }, {
    build,
  });
}
