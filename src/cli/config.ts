/**
 * Project defaults for reclazz-build: a `reclazz.config.json` file, or a `reclazz` key in
 * `package.json`, found in the working directory or a parent up to the checkout root (the first
 * folder holding `.git`). Validated with zod; an invalid file is a {@link ConfigError} that
 * names the file, the key and the expected shape. Relative paths in a config file are relative
 * to the folder that holds it. Command-line options win over the config (see
 * `cli/settings.ts`).
 */
import fs from 'node:fs';
import path from 'node:path';
// zod/mini: the same schemas as `zod`'s, built with functions, so a bundle keeps only what it uses.
import * as z from 'zod/mini';
import { parsePathMap, PathMapError, type PathMapEntry } from '../agent/path-map.js';

/** The config file name searched for in each folder (before `package.json`). */
export const CONFIG_FILE = 'reclazz.config.json';
/** The key read from `package.json`. */
export const PACKAGE_KEY = 'reclazz';

/** Project defaults. Times in ms; paths absolute once loaded. */
export interface ReclazzConfig {
  /** Agent port (skips port-file discovery). */
  port?: number | undefined;
  /** The agent's port file. */
  portFile?: string | undefined;
  /** Bound per receipt and for connecting. */
  timeoutMs?: number | undefined;
  /** One deadline for all VERIFY polling. */
  verifyTimeoutMs?: number | undefined;
  /** How long to wait for another run's lock or another owner's hold. */
  waitMs?: number | undefined;
  /** How long to wait for the agent's port file to appear and its port to answer. */
  waitForAgentMs?: number | undefined;
  /** Extra class output directories. */
  classesDirs?: string[] | undefined;
  /** Agent path -> local path (an app in a container); local paths absolute once loaded. */
  pathMap?: PathMapEntry[] | undefined;
  /** Arguments for `reclazz-build gradle` when none are given. */
  gradleArgs?: string[] | undefined;
  /** Arguments for `reclazz-build mvn` when none are given. */
  mvnArgs?: string[] | undefined;
  /** `reclazz-build watch`: more folders or files to watch besides the source folders found. */
  watch?: string[] | undefined;
  /** `reclazz-build watch`: the quiet period after a change before a build starts, in ms. */
  debounceMs?: number | undefined;
}

/** What each key expects, in words: used in every error message. */
const CONFIG_KEYS: Readonly<Record<keyof ReclazzConfig, string>> = {
  port: 'a whole number 1-65535 (the agent port), e.g. 52311',
  portFile: 'a non-empty path string to the agent port file, e.g. "app/.reclazz/agent.port"',
  timeoutMs: 'a whole number of milliseconds, 1 or more, e.g. 5000',
  verifyTimeoutMs: 'a whole number of milliseconds, 1 or more, e.g. 30000',
  waitMs: 'a whole number of milliseconds, 0 or more, e.g. 30000',
  waitForAgentMs: 'a whole number of milliseconds, 0 or more, e.g. 60000',
  classesDirs: 'an array of non-empty path strings, e.g. ["build/classes/kotlin/main"]',
  pathMap: 'an object from absolute agent paths to local paths, e.g. {"/app": "."}',
  gradleArgs: 'an array of strings, e.g. ["classes"]',
  mvnArgs: 'an array of strings, e.g. ["-q", "compile"]',
  watch: 'an array of non-empty path strings, e.g. ["shared/src/main/java"]',
  debounceMs: 'a whole number of milliseconds, 0 or more, e.g. 300',
};

const wholeMs = (min: number) => z.number().check(z.int(), z.gte(min));
const nonEmpty = () => z.string().check(z.minLength(1));
const buildConfigSchema = () =>
  z.strictObject({
    $schema: z.optional(z.string()),
    port: z.optional(z.number().check(z.int(), z.gte(1), z.lte(65535))),
    portFile: z.optional(nonEmpty()),
    timeoutMs: z.optional(wholeMs(1)),
    verifyTimeoutMs: z.optional(wholeMs(1)),
    waitMs: z.optional(wholeMs(0)),
    waitForAgentMs: z.optional(wholeMs(0)),
    classesDirs: z.optional(z.array(nonEmpty())),
    pathMap: z.optional(z.record(nonEmpty(), nonEmpty())),
    gradleArgs: z.optional(z.array(z.string())),
    mvnArgs: z.optional(z.array(z.string())),
    watch: z.optional(z.array(nonEmpty())),
    debounceMs: z.optional(wholeMs(0).check(z.lte(2_147_483_647))),
  });
let builtConfigSchema: ReturnType<typeof buildConfigSchema> | undefined;
/** The config's schema, built on first use: most projects have no config, and building it costs start-up time. */
const configSchema = () => (builtConfigSchema ??= buildConfigSchema());

/** An unreadable or invalid config: names the file, the key and the expected shape. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** The config file (absolute). */
    readonly file: string,
    /** The offending key as written (`reclazz.timeoutMs` in package.json), or undefined for the whole file. */
    readonly key: string | undefined,
    /** The expected shape, in words. */
    readonly expected: string,
    message: string,
  ) {
    super(message);
  }
}

/** A loaded config and where it came from. */
export interface LoadedConfig {
  /** The file read; undefined when none was found. */
  file?: string;
  config: ReclazzConfig;
}

/**
 * Finds and reads the config for `cwd`: `explicit` (`--config`) when given, else the nearest
 * `reclazz.config.json` or `package.json` with a `reclazz` key in `cwd` or a parent, up to the
 * checkout root. Paths in it come back absolute.
 * @throws ConfigError for an explicit file that is missing, unreadable JSON, or invalid content.
 */
export function loadConfig(cwd: string, explicit?: string): LoadedConfig {
  if (explicit !== undefined) {
    const file = path.resolve(cwd, explicit);
    if (!fs.existsSync(file)) throw new ConfigError(file, undefined, 'an existing file', `config file ${file} does not exist`);
    if (path.basename(file) === 'package.json') {
      const pkg = readJsonObject(file);
      if (!(PACKAGE_KEY in pkg)) {
        throw new ConfigError(
          file,
          PACKAGE_KEY,
          'an object',
          `${file} has no "${PACKAGE_KEY}" key; expected an object like {"${PACKAGE_KEY}": {"timeoutMs": 5000}}`,
        );
      }
      return { file, config: validate(file, pkg[PACKAGE_KEY], `${PACKAGE_KEY}.`) };
    }
    return { file, config: validate(file, readJson(file), '') };
  }
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const own = path.join(dir, CONFIG_FILE);
    if (fs.existsSync(own)) return { file: own, config: validate(own, readJson(own), '') };
    const pkgFile = path.join(dir, 'package.json');
    if (fs.existsSync(pkgFile)) {
      const pkg = readJsonObject(pkgFile);
      if (PACKAGE_KEY in pkg) return { file: pkgFile, config: validate(pkgFile, pkg[PACKAGE_KEY], `${PACKAGE_KEY}.`) };
    }
    if (fs.existsSync(path.join(dir, '.git')) || path.dirname(dir) === dir) return { config: {} };
  }
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      file,
      undefined,
      'a readable JSON file',
      `cannot read config file ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(file, undefined, 'a JSON object', `${file} is not valid JSON (${(error as Error).message})`);
  }
}

function readJsonObject(file: string): Record<string, unknown> {
  const value = readJson(file);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(file, undefined, 'a JSON object', `${file} does not hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** Validates the config object read from `file`; `prefix` is `reclazz.` for package.json. */
function validate(file: string, value: unknown, prefix: string): ReclazzConfig {
  const whole = `an object with any of the keys ${Object.keys(CONFIG_KEYS).join(', ')}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const key = prefix === '' ? undefined : prefix.slice(0, -1);
    throw new ConfigError(
      file,
      key,
      whole,
      `invalid config in ${file}${key ? `: key "${key}"` : ''}: expected ${whole}, got ${describe(value)}`,
    );
  }
  const parsed = configSchema().safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0]!;
      throw new ConfigError(
        file,
        `${prefix}${key}`,
        whole,
        `invalid config in ${file}: key "${prefix}${key}" is not a known key; expected one of ${Object.keys(CONFIG_KEYS).join(', ')}`,
      );
    }
    const top = String(issue.path[0]) as keyof ReclazzConfig;
    const key = `${prefix}${issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('')}`;
    const expected = CONFIG_KEYS[top] ?? 'a string';
    const got = issue.path.reduce<unknown>((v, p) => (v as Record<PropertyKey, unknown> | undefined)?.[p as PropertyKey], value);
    throw new ConfigError(file, key, expected, `invalid config in ${file}: key "${key}": expected ${expected}, got ${describe(got)}`);
  }
  const { $schema: _schema, pathMap, ...config } = parsed.data;
  const dir = path.dirname(file);
  return {
    ...config,
    ...(pathMap === undefined ? {} : { pathMap: configPathMap(file, prefix, pathMap) }),
    ...(config.portFile === undefined ? {} : { portFile: path.resolve(dir, config.portFile) }),
    ...(config.classesDirs === undefined ? {} : { classesDirs: config.classesDirs.map((d) => path.resolve(dir, d)) }),
    ...(config.watch === undefined ? {} : { watch: config.watch.map((d) => path.resolve(dir, d)) }),
  };
}

/** The config's pathMap as entries, local paths relative to the config's folder. @throws ConfigError for an agent path that is not absolute. */
function configPathMap(file: string, prefix: string, map: Record<string, string>): PathMapEntry[] {
  return Object.entries(map).map(([agent, local]) => {
    try {
      return parsePathMap(`${agent}=${local}`, path.dirname(file));
    } catch (error) {
      if (!(error instanceof PathMapError)) throw error;
      const key = `${prefix}pathMap.${agent}`;
      throw new ConfigError(file, key, CONFIG_KEYS.pathMap, `invalid config in ${file}: key "${key}": expected ${CONFIG_KEYS.pathMap}`);
    }
  });
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return `an array ${JSON.stringify(value).slice(0, 60)}`;
  return JSON.stringify(value)?.slice(0, 60) ?? String(value);
}
