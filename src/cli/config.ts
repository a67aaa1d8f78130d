/**
 * Project defaults: `reclazz.config.json` or a `reclazz` key in `package.json`, in the working
 * directory or a parent up to the checkout root. Relative paths are relative to the file's folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parsePathMap, PathMapError, type PathMapEntry } from '../agent/path-map.js';
import { CONFIG_KEYS, configSchema, expectedOf, OPTIONS, resolveConfigPaths, type ReclazzConfig } from './options.js';

/** The config file name searched for in each folder (before `package.json`). */
export const CONFIG_FILE = 'reclazz.config.json';
/** The key read from `package.json`. */
export const PACKAGE_KEY = 'reclazz';

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
 * Finds and reads the config for `cwd`: `explicit` (`--config`), else the nearest one. Paths come back absolute.
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
  const whole = `an object with any of the keys ${CONFIG_KEYS.join(', ')}`;
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
        `invalid config in ${file}: key "${prefix}${key}" is not a known key; expected one of ${CONFIG_KEYS.join(', ')}`,
      );
    }
    const top = String(issue.path[0]);
    const key = `${prefix}${issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('')}`;
    const expected = top in OPTIONS ? expectedOf(top as keyof typeof OPTIONS) : 'a string';
    const got = issue.path.reduce<unknown>((v, p) => (v as Record<PropertyKey, unknown> | undefined)?.[p as PropertyKey], value);
    throw new ConfigError(file, key, expected, `invalid config in ${file}: key "${key}": expected ${expected}, got ${describe(got)}`);
  }
  const { $schema: _schema, pathMap, ...config } = parsed.data as Record<string, unknown> & { pathMap?: Record<string, string> };
  return {
    ...resolveConfigPaths(config, path.dirname(file)),
    ...(pathMap === undefined ? {} : { pathMap: configPathMap(file, prefix, pathMap) }),
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
      throw new ConfigError(file, key, expectedOf('pathMap'), `invalid config in ${file}: key "${key}": expected ${expectedOf('pathMap')}`);
    }
  });
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return `an array ${JSON.stringify(value).slice(0, 60)}`;
  return JSON.stringify(value)?.slice(0, 60) ?? String(value);
}
