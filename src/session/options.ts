/**
 * What a session and its cycles are given: where to find the agent and how long to wait
 * (session), what to build and check (cycle), and the host they run on (env, cwd, platform,
 * clock, terminal, signals), which cli/ fills from the real process. Times in ms.
 */
import type { PathMapEntry } from '../agent/path-map.js';
import type { RunEvent, ToolKind } from '../outcome/facts.js';
import type { LockProcess } from '../state/lock.js';
import type { ProcessControl } from '../tool/spawn.js';

/** Default bounds of a build and the subcommands, in ms: the command line's, the config's and the library's. */
export const DEFAULTS = { timeoutMs: 5000, verifyTimeoutMs: 30000, waitMs: 30000 } as const;

/** The environment variable set for the build command, and refused when already set (no nesting). */
export const NESTED_ENV = 'RECLAZZ_SAFE_BUILD_ACTIVE';

/** A clock: `now` for durations (monotonic, ms), `date` for timestamps saved in state files. */
export interface Clock {
  now(): number;
  date(): Date;
}

/** The process a session runs in. */
export interface Host extends ProcessControl, LockProcess {
  /** Folder the build runs in and the search starts from (absolute). */
  cwd: string;
  /** The environment: discovery reads RECLAZZ_PORT*, the build gets it (and finds its tool on its PATH). */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  clock: Clock;
  /** True when the user's terminal delivers Ctrl-C to the build itself (stdin is a TTY). */
  sharesTerminal: boolean;
}

/** Where the agent is and how long to wait for it. */
export interface SessionOptions {
  port?: number;
  portFile?: string;
  /** Several port files (`--port-file` repeated): a build holds each agent; `portFile` joins them. */
  portFiles?: string[];
  /** Owner token; default: the one saved for this agent session, else a fresh one. */
  owner?: string;
  /** Bound per receipt and for the connection (default 5000). */
  timeoutMs?: number;
  /**
   * How long to wait for another run's lock or another owner's hold, a free client slot, and
   * the agent to finish starting (default 30000 for a session that builds, else 0 = do not wait).
   */
  waitMs?: number;
  /** How long to wait for a port file to appear and its port to answer (default 0: refused at once). */
  waitForAgentMs?: number;
  /** False: the agent need not support VERIFY (default true). */
  verify?: boolean;
  /** `--path-map`: how the agent's paths (an app in a container) read here. */
  pathMap?: PathMapEntry[];
}

/** What one cycle builds and checks. */
export interface CycleOptions {
  /** `gradle`, `mvn`, or `command` (then `args[0]` is the executable). */
  tool: ToolKind;
  /** Arguments passed to the build tool untouched. */
  args: string[];
  /** One deadline for all VERIFY polling (default 30000). */
  verifyTimeoutMs?: number;
  /** False skips VERIFY (default true). */
  verify?: boolean;
  /** Extra class output directories, added to the discovered ones. */
  classDirs?: string[];
  /**
   * Where the build tool's stdout goes: `inherit` (default, the terminal's stdout) or `stderr`
   * (with `--json`, so that stdout carries only JSON lines).
   */
  buildStdout?: 'inherit' | 'stderr';
  /**
   * Watch mode: called once per cycle, after the build, with the class output directories; the
   * folders in them that may have changed since the last call (absolute), or undefined for a full
   * pass. `full` says the cycle scans every file anyway. Default: always a full pass.
   */
  changedFolders?: (dirs: readonly string[], full: boolean) => Promise<ReadonlySet<string> | undefined>;
}

/** What a session tells and who may stop it. */
export interface SessionHooks {
  onEvent?: (event: RunEvent) => void;
  /** Abort with reason `'SIGINT'` or `'SIGTERM'` to stop cleanly (exit 130/143). */
  signal?: AbortSignal;
}

/** What a run may set of its host; unset fields are the host's. */
export interface HostOverrides {
  /** Folder the build runs in and the search starts from (absolute). Default: the host's. */
  cwd?: string;
  /** Environment: discovery reads it, the build gets it and finds its tool on its PATH. Default: the host's. */
  env?: NodeJS.ProcessEnv;
  /** Default: the host's. */
  platform?: NodeJS.Platform;
  /** True when the user's terminal delivers Ctrl-C to the build itself. Default: the host's (stdin is a TTY). */
  sharesTerminal?: boolean;
}

/** `base` with what `overrides` sets of it. */
export function hostWith(base: Host, overrides: HostOverrides): Host {
  return {
    ...base,
    ...(overrides.cwd === undefined ? {} : { cwd: overrides.cwd }),
    ...(overrides.env === undefined ? {} : { env: overrides.env }),
    ...(overrides.platform === undefined ? {} : { platform: overrides.platform }),
    ...(overrides.sharesTerminal === undefined ? {} : { sharesTerminal: overrides.sharesTerminal }),
  };
}
