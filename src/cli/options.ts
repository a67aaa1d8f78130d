/**
 * The project options, declared once in {@link OPTIONS}: config key, schema, words, default and
 * flag. Precedence: flags, then the environment (`RECLAZZ_PORT`, `RECLAZZ_PORT_FILE`, read by
 * discovery), then the config file, then the defaults.
 */
import path from 'node:path';
// zod/mini: the same schemas as `zod`'s, built with functions, so a bundle keeps only what it uses.
import * as z from 'zod/mini';
import type { PathMapEntry } from '../agent/path-map.js';
import { DEFAULTS } from '../session/options.js';

const wholeMs = (min: number) => z.number().check(z.int(), z.gte(min));
const nonEmpty = () => z.string().check(z.minLength(1));
const paths = () => z.array(nonEmpty());

/** One option. Times in ms; `paths` options are relative to the config file's folder there. */
interface OptionSpec {
  /** The config value's schema, built on first use (building schemas costs start-up time). */
  schema: () => z.ZodMiniType;
  /** What the config value takes, in words: used in every config error message. */
  expected: string;
  /** commander's name of the flag that overrides it (`--verify-timeout` is `verifyTimeout`). */
  flag?: string;
  /** The flag is repeatable and collects an array (one path in the config, several flags). */
  repeatable?: true;
  /** The value is a path (`'one'`) or paths (`'many'`), resolved against the config file's folder. */
  paths?: 'one' | 'many';
  /** The resolved value when neither the command line nor the config gives one (see {@link Settings}). */
  default?: unknown;
}

/** Every option, by its config-file key. A new option is an entry here and a flag in commander's list. */
export const OPTIONS = {
  /** Agent port (skips port-file discovery). */
  port: {
    schema: () => z.number().check(z.int(), z.gte(1), z.lte(65535)),
    expected: 'a whole number 1-65535 (the agent port), e.g. 52311',
    flag: 'port',
  },
  /** The agent's port file (several with the repeated flag: a build holds each agent). */
  portFile: {
    schema: nonEmpty,
    expected: 'a non-empty path string to the agent port file, e.g. "app/.reclazz/agent.port"',
    flag: 'portFile',
    repeatable: true,
    paths: 'one',
  },
  /** Bound per receipt and for connecting. */
  timeoutMs: {
    schema: () => wholeMs(1),
    expected: 'a whole number of milliseconds, 1 or more, e.g. 5000',
    flag: 'timeout',
    default: DEFAULTS.timeoutMs,
  },
  /** One deadline for all VERIFY polling. */
  verifyTimeoutMs: {
    schema: () => wholeMs(1),
    expected: 'a whole number of milliseconds, 1 or more, e.g. 30000',
    flag: 'verifyTimeout',
    default: DEFAULTS.verifyTimeoutMs,
  },
  /** How long to wait for another run's lock or another owner's hold. */
  waitMs: {
    schema: () => wholeMs(0),
    expected: 'a whole number of milliseconds, 0 or more, e.g. 30000',
    flag: 'wait',
    default: DEFAULTS.waitMs,
  },
  /** How long to wait for the agent's port file to appear and its port to answer. */
  waitForAgentMs: {
    schema: () => wholeMs(0),
    expected: 'a whole number of milliseconds, 0 or more, e.g. 60000',
    flag: 'waitForAgent',
    default: 0,
  },
  /** Extra class output directories (the flag's replace the config's). */
  classesDirs: {
    schema: paths,
    expected: 'an array of non-empty path strings, e.g. ["build/classes/kotlin/main"]',
    flag: 'classesDir',
    repeatable: true,
    paths: 'many',
  },
  /** Agent path -> local path (an app in a container); local paths absolute once loaded. */
  pathMap: {
    schema: () => z.record(nonEmpty(), nonEmpty()),
    expected: 'an object from absolute agent paths to local paths, e.g. {"/app": "."}',
    flag: 'pathMap',
    default: [],
  },
  /** Arguments for `reclazz-build gradle` when none are given. */
  gradleArgs: { schema: () => z.array(z.string()), expected: 'an array of strings, e.g. ["classes"]' },
  /** Arguments for `reclazz-build mvn` when none are given. */
  mvnArgs: { schema: () => z.array(z.string()), expected: 'an array of strings, e.g. ["-q", "compile"]' },
  /** `reclazz-build watch`: more folders or files to watch besides the source folders found (the flag's add to the config's). */
  watch: {
    schema: paths,
    expected: 'an array of non-empty path strings, e.g. ["shared/src/main/java"]',
    flag: 'watch',
    repeatable: true,
    paths: 'many',
  },
  /** `reclazz-build watch`: the quiet period after a change before a build starts, in ms. */
  debounceMs: {
    schema: () => wholeMs(0).check(z.lte(2_147_483_647)),
    expected: 'a whole number of milliseconds, 0 or more, e.g. 300',
    flag: 'debounce',
  },
  /** A shell command that restarts the app when classes need a restart (session/group.ts). */
  restartCommand: {
    schema: nonEmpty,
    expected: 'a non-empty shell command string, e.g. "systemctl --user restart shop"',
    flag: 'restartCommand',
  },
  /** How long to wait for the app to come back after a restart. */
  restartTimeoutMs: {
    schema: () => wholeMs(1),
    expected: 'a whole number of milliseconds, 1 or more, e.g. 120000',
    flag: 'restartTimeout',
    default: DEFAULTS.restartTimeoutMs,
  },
} as const satisfies Record<string, OptionSpec>;

type Options = typeof OPTIONS;
type Key = keyof Options;

/** An option's value once loaded: the schema's, except pathMap, which is read into entries. */
type Value<K extends Key> = K extends 'pathMap' ? PathMapEntry[] : z.infer<ReturnType<Options[K]['schema']>>;

/** Project defaults from a config file, by key (see {@link OPTIONS}). Times in ms; paths absolute once loaded. */
export type ReclazzConfig = { [K in Key]?: Value<K> | undefined };

/** The flags of the agent-facing commands as commander parses them: each option's, and the output switches. */
export type AgentFlags = {
  [K in Key as Options[K] extends { flag: infer F extends string } ? F : never]?: Options[K] extends { repeatable: true }
    ? Value<K> extends unknown[]
      ? Value<K>
      : Value<K>[]
    : Value<K>;
} & { config?: string; json?: boolean; quiet?: boolean; verbose?: boolean };

/** The keys whose value is flag, else config, else default. */
type Plain = { [K in Key]: Options[K] extends { default: unknown } ? (Options[K] extends { paths: string } ? never : K) : never }[Key];

/** Resolved settings: every option with a default, and where the agent is. Paths absolute; times in ms. */
export type Settings = { [K in Plain]: Value<K> } & {
  port?: number;
  /** The agents' port files (several: a build holds each). */
  portFiles?: string[];
  /** Extra class output directories (from --classes-dir, else the config). */
  classDirs: string[];
};

/** The config file's keys. */
export const CONFIG_KEYS = Object.keys(OPTIONS) as Key[];

/** What `key` takes, in words. */
export function expectedOf(key: Key): string {
  return OPTIONS[key].expected;
}

let builtSchema: z.ZodMiniType | undefined;
/** The config object's schema (unknown keys refused), built on first use: most projects have no config. */
export function configSchema(): z.ZodMiniType {
  builtSchema ??= z.strictObject({
    $schema: z.optional(z.string()),
    ...Object.fromEntries(CONFIG_KEYS.map((key) => [key, z.optional(OPTIONS[key].schema())])),
  });
  return builtSchema;
}

/** A validated config's path options made absolute against `dir`, the config file's folder. */
export function resolveConfigPaths(config: Record<string, unknown>, dir: string): Record<string, unknown> {
  const out = { ...config };
  for (const key of CONFIG_KEYS) {
    const spec: OptionSpec = OPTIONS[key];
    const value = out[key];
    if (value === undefined || spec.paths === undefined) continue;
    out[key] = spec.paths === 'one' ? path.resolve(dir, value as string) : (value as string[]).map((d) => path.resolve(dir, d));
  }
  return out;
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
  const plain: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    const spec: OptionSpec = OPTIONS[key];
    if (!('default' in spec) || spec.paths !== undefined) continue;
    plain[key] = (flags as Record<string, unknown>)[spec.flag!] ?? config[key] ?? spec.default;
  }
  return {
    ...(where.port === undefined ? {} : { port: where.port }),
    ...(where.portFiles === undefined ? {} : { portFiles: where.portFiles }),
    ...(plain as { [K in Plain]: Value<K> }),
    classDirs: cliDirs.length > 0 ? cliDirs : (config.classesDirs ?? []),
  };
}
