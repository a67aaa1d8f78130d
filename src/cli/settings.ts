/**
 * Settings from three places, in this order of precedence: command-line options, then the
 * environment (`RECLAZZ_PORT`, `RECLAZZ_PORT_FILE`, read by discovery), then the project config
 * (`reclazz.config.json` or `package.json` "reclazz"), then the built-in defaults.
 */
import path from 'node:path';
import type { PathMapEntry } from '../agent/path-map.js';
import type { ReclazzConfig } from './config.js';
import { DEFAULTS } from '../session/options.js';

/** The options every agent-facing command accepts, as commander parses them. */
export interface AgentFlags {
  port?: number;
  /** `--port-file`, repeatable: a build holds each agent named. */
  portFile?: string[];
  timeout?: number;
  verifyTimeout?: number;
  wait?: number;
  waitForAgent?: number;
  classesDir?: string[];
  pathMap?: PathMapEntry[];
  config?: string;
  json?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

/** Resolved settings. Paths absolute; times in ms. */
export interface Settings {
  port?: number;
  /** The agents' port files (several: a build holds each). */
  portFiles?: string[];
  timeoutMs: number;
  verifyTimeoutMs: number;
  waitMs: number;
  /** How long to wait for a port file and its port (`--wait-for-agent`), 0 by default. */
  waitForAgentMs: number;
  /** Extra class output directories (from --classes-dir, else the config). */
  classDirs: string[];
  /** Agent path -> local path (from --path-map, else the config). */
  pathMap: PathMapEntry[];
}

/** Merges `flags` over the environment over `config` over the defaults. */
export function resolveSettings(flags: AgentFlags, config: ReclazzConfig, cwd: string, env: NodeJS.ProcessEnv): Settings {
  const cliPort = flags.port !== undefined || flags.portFile !== undefined;
  const envPort = (env.RECLAZZ_PORT ?? '') !== '' || (env.RECLAZZ_PORT_FILE ?? '') !== '';
  const where = cliPort
    ? { port: flags.port, portFiles: flags.portFile?.map((f) => path.resolve(cwd, f)) }
    : envPort
      ? {}
      : { port: config.port, portFiles: config.portFile === undefined ? undefined : [config.portFile] };
  const cliDirs = (flags.classesDir ?? []).map((d) => path.resolve(cwd, d));
  return {
    ...(where.port === undefined ? {} : { port: where.port }),
    ...(where.portFiles === undefined ? {} : { portFiles: where.portFiles }),
    timeoutMs: flags.timeout ?? config.timeoutMs ?? DEFAULTS.timeoutMs,
    verifyTimeoutMs: flags.verifyTimeout ?? config.verifyTimeoutMs ?? DEFAULTS.verifyTimeoutMs,
    waitMs: flags.wait ?? config.waitMs ?? DEFAULTS.waitMs,
    waitForAgentMs: flags.waitForAgent ?? config.waitForAgentMs ?? 0,
    classDirs: cliDirs.length > 0 ? cliDirs : (config.classesDirs ?? []),
    pathMap: flags.pathMap ?? config.pathMap ?? [],
  };
}
