/**
 * What the agent watches, read from the app's JVM command line as the agent decides it (protocol.md
 * "What the agent's source shows"; agent source GitHub onurkat/reclazz):
 * - config/AgentConfig.java: options come only from `-javaagent:<jar>=<options>`, split on a comma
 *   only before a known key and `=`, trimmed, the last of a key winning; `watchDirs` and
 *   `excludePatterns` split on `;`; an exclude is a case-sensitive glob on the class file's whole
 *   name; a boolean is `true` in any case.
 * - platform/SpringBootContext.java: the `watchDirs` entries that are directories (relative to the
 *   JVM's working directory); else the class-path directories ending in `/target/classes` or
 *   `/target/test-classes` or holding `/build/classes/`; else `target/classes` and
 *   `build/classes/java/main` of the working directory. SAP Commerce (platform/PlatformDetector.java)
 *   watches by its own rules, not read here.
 * The JVM also takes options from `JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS` and `_JAVA_OPTIONS`.
 * Whether a directory existed when the agent started cannot be read back: it is checked now.
 */
import path from 'node:path';

/** The agent's option keys (config/AgentConfig.java KNOWN_KEYS): a comma splits options only before one of these and `=`. */
const KNOWN_KEYS = [
  'hybrisHome',
  'watchExtensions',
  'autoCompile',
  'autoImpex',
  'impexAllowRemove',
  'debounceMs',
  'verbose',
  'statusPort',
  'portFile',
  'wrapOutput',
  'excludePatterns',
  'excludeClasses',
  'startupDelaySec',
  'structuralReload',
  'transformDumpDir',
  'verifyTransform',
  'platform',
  'watchDirs',
  'jpaRefresh',
  'sessionLog',
  'reloadBoundary',
  'refreshOwnersOnHelper',
];
const SPLIT = new RegExp(`,(?=(?:${KNOWN_KEYS.join('|')})=)`);

/** Launcher options whose value is the next argument (`java --help`, `java --help-extra`). */
const WITH_VALUE = new Set([
  '-cp',
  '-classpath',
  '--class-path',
  '-p',
  '--module-path',
  '--upgrade-module-path',
  '--add-modules',
  '--enable-native-access',
  '--limit-modules',
  '--add-reads',
  '--add-exports',
  '--add-opens',
  '--patch-module',
  '--source',
]);

/** The variables the JVM takes options from, in the order it applies them around the command line. */
const BEFORE_COMMAND_LINE = 'JAVA_TOOL_OPTIONS';
const LAUNCHER_PREFIX = 'JDK_JAVA_OPTIONS';
const AFTER_COMMAND_LINE = '_JAVA_OPTIONS';

/** The app's JVM as its command line and environment show it. */
export interface JvmFacts {
  /**
   * The reclazz agent's option string (after `<jar>=`, `''` for none); undefined when no
   * `-javaagent` of a reclazz jar was found (attached at run time, or renamed), or more than one.
   */
  agentArgs: string | undefined;
  /** `java.class.path` split on the path separator, or undefined when it cannot be told (an argument file that cannot be read). */
  classPath: string[] | undefined;
  /** A SAP Commerce marker is set (`-DHYBRIS_BIN_DIR`, `-Dplatform.home`, or `HYBRIS_BIN_DIR` in the environment). */
  hybris: boolean;
  /** The test runner this JVM runs ({@link testRunnerOf}), if any: a test JVM, not the app's. */
  testRunner?: string;
}

/**
 * The test runner a JVM's arguments show, in words: Surefire's or Failsafe's forked booter, or
 * Gradle's test worker. The attach plugins put the agent on these JVMs too (protocol.md "The port
 * file is anyone's to delete").
 */
function testRunnerOf(args: readonly string[]): string | undefined {
  if (args.some((arg) => arg === 'org.apache.maven.surefire.booter.ForkedBooter' || /surefirebooter[^/\\]*\.jar$/.test(arg)))
    return "Maven Surefire's forked test JVM";
  if (args.includes('worker.org.gradle.process.internal.worker.GradleWorkerMain')) return "Gradle's test worker";
  return undefined;
}

/** How an argument file (`@file`) reads: its text, or undefined when it cannot be read. */
export type ReadArgFile = (file: string) => string | undefined;

/**
 * The JVM facts of a process with arguments `args` (program first) and environment `env`
 * (undefined: not readable); undefined without a `java`/`javaw` argument (a native launcher, a
 * wrapper). `@file` arguments are read with `readArgFile`, relative to `cwd`.
 */
export function readJvm(
  args: readonly string[],
  env: Record<string, string> | undefined,
  cwd: string,
  readArgFile: ReadArgFile,
): JvmFacts | undefined {
  const launcher = args.findIndex((arg) => /^javaw?(\.exe)?$/i.test(path.basename(arg)));
  if (launcher < 0) return undefined;
  const agents: string[] = [];
  let hybris = env?.HYBRIS_BIN_DIR !== undefined;
  const takeVmOption = (arg: string, classPath: { value: string[] | undefined }): void => {
    if (arg.startsWith('-javaagent:')) agents.push(arg.slice('-javaagent:'.length));
    else if (arg.startsWith('-Djava.class.path=')) classPath.value = splitPath(arg.slice('-Djava.class.path='.length));
    else if (arg.startsWith('-DHYBRIS_BIN_DIR=') || arg.startsWith('-Dplatform.home=')) hybris = true;
  };
  // JAVA_TOOL_OPTIONS first; the launcher's class path is set after it, so only its agents count.
  for (const arg of splitOptions(env?.[BEFORE_COMMAND_LINE])) takeVmOption(arg, { value: undefined });
  const classPath = { value: splitPath(env?.CLASSPATH ?? '.') as string[] | undefined };
  const line = [...splitOptions(env?.[LAUNCHER_PREFIX]), ...args.slice(launcher + 1)];
  for (let i = 0; i < line.length; i++) {
    const arg = line[i]!;
    if (arg.startsWith('@') && arg.length > 1) {
      const text = readArgFile(path.resolve(cwd, arg.slice(1)));
      if (text === undefined) return { agentArgs: undefined, classPath: undefined, hybris };
      line.splice(i + 1, 0, ...splitOptions(text));
      continue;
    }
    if (arg === '-jar') {
      if (line[i + 1] !== undefined) classPath.value = [line[i + 1]!];
      break;
    }
    if (arg === '-m' || arg === '--module' || arg.startsWith('--module=') || !arg.startsWith('-')) break;
    if (arg === '-cp' || arg === '-classpath' || arg === '--class-path') classPath.value = splitPath(line[i + 1] ?? '');
    else if (arg.startsWith('--class-path=')) classPath.value = splitPath(arg.slice('--class-path='.length));
    else takeVmOption(arg, classPath);
    if (WITH_VALUE.has(arg)) i++;
  }
  for (const arg of splitOptions(env?.[AFTER_COMMAND_LINE])) takeVmOption(arg, classPath);
  const ours = agents.map(agentOptionString).filter((options): options is string => options !== undefined);
  const testRunner = testRunnerOf(line);
  return {
    agentArgs: ours.length === 1 ? ours[0] : undefined,
    classPath: classPath.value,
    hybris,
    ...(testRunner === undefined ? {} : { testRunner }),
  };
}

/** The option string of a `-javaagent` value when its jar is reclazz's (its file name says so), else undefined. */
function agentOptionString(value: string): string | undefined {
  const eq = value.indexOf('=');
  const jar = eq < 0 ? value : value.slice(0, eq);
  if (!/reclazz/i.test(path.basename(jar))) return undefined;
  return eq < 0 ? '' : value.slice(eq + 1);
}

/** Options in an environment variable or argument file: split on whitespace, `"` and `'` quoting a part. */
function splitOptions(text: string | undefined): string[] {
  if (text === undefined) return [];
  const out: string[] = [];
  for (const match of text.matchAll(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g)) out.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, '$1$2'));
  return out;
}

function splitPath(value: string): string[] {
  return value.split(path.delimiter);
}

/**
 * The agent's options as config/AgentConfig.java parses them: key to value, the last of a key winning.
 * @internal for its tests
 */
export function agentOptions(args: string): Map<string, string> {
  const options = new Map<string, string>();
  if (args.trim() === '') return options;
  for (const pair of args.split(SPLIT)) {
    const eq = pair.indexOf('=');
    if (eq >= 0) options.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return options;
}

/** The `;`-separated entries of an option, trimmed, empty ones dropped. */
function entries(value: string | undefined): string[] {
  return (value ?? '')
    .split(';')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** What the agent watches by its options, in its own paths. */
export interface AgentWatch {
  /** The class output directories it watches (absolute; those that are directories now). */
  roots: string[];
  /** Where they come from: its `watchDirs=`, the class path, or its working directory. */
  from: 'watchDirs' | 'class-path' | 'working-directory';
  /** Its `excludePatterns=` globs: class file names it never reloads. */
  excludePatterns: string[];
  /** `autoCompile=true`: it watches sources and compiles them itself, not the class output directories. */
  autoCompile: boolean;
  /** Its watcher's `debounceMs=`: how long a change waits before it is dispatched, in ms (0 to 60 000, 500 by default). */
  debounceMs: number;
  /**
   * Its JVM's class path entries in order (absolute; jars and folders alike, the first of a repeat):
   * where its app loads classes from, watched or not, first entry first. Empty when the class path
   * cannot be told.
   */
  classPath: string[];
  /** Its JVM runs a test runner (JvmFacts `testRunner`): a test JVM, never the app's. */
  testRunner?: string;
}

/** What an app's JVM says of itself when its agent's options are not on its command line (attached at run time, a renamed jar). */
export interface JvmOnly {
  /** As {@link AgentWatch.classPath}. */
  classPath: string[];
  /** As {@link AgentWatch.testRunner}. */
  testRunner?: string;
}

/** The class path and test runner of `jvm` (working directory `userDir`), or undefined when its class path cannot be told. */
export function jvmOnly(jvm: JvmFacts, userDir: string): JvmOnly | undefined {
  if (jvm.classPath === undefined) return undefined;
  const classPath = [...new Set(jvm.classPath.map((entry) => path.resolve(userDir, entry)))];
  return jvm.testRunner === undefined ? { classPath } : { classPath, testRunner: jvm.testRunner };
}

/**
 * What the agent of `jvm` watches, its working directory being `userDir`; `isDir` says whether one of
 * its paths may have been a directory when the agent started (through --path-map). Undefined when
 * its options were not found, it is SAP Commerce's, or it needs a class path that cannot be read.
 */
export function agentWatch(jvm: JvmFacts, userDir: string, isDir: (agentPath: string) => boolean): AgentWatch | undefined {
  if (jvm.agentArgs === undefined) return undefined;
  const options = agentOptions(jvm.agentArgs);
  const platform = (options.get('platform') ?? 'auto').toLowerCase();
  const explicit = platform === 'spring' || platform === 'generic';
  if (platform === 'hybris' || (!explicit && (options.has('hybrisHome') || jvm.hybris))) return undefined;
  const excludePatterns = entries(options.get('excludePatterns'));
  const autoCompile = (options.get('autoCompile') ?? '').toLowerCase() === 'true';
  const absolute = (entry: string) => path.resolve(userDir, entry);
  const classPath = [...new Set((jvm.classPath ?? []).map(absolute))];
  const debounceMs = debounceOf(options.get('debounceMs'));
  const base = {
    excludePatterns,
    autoCompile,
    debounceMs,
    classPath,
    ...(jvm.testRunner === undefined ? {} : { testRunner: jvm.testRunner }),
  };
  // Given entries that are no directories are dropped, and with none left nothing is watched.
  const given = entries(options.get('watchDirs')).map(absolute);
  if (given.length > 0) return { roots: given.filter(isDir), from: 'watchDirs', ...base };
  if (jvm.classPath === undefined) return undefined;
  const detected = jvm.classPath.filter((entry) => isClassOutput(entry) && isDir(absolute(entry))).map(absolute);
  if (detected.length > 0) return { roots: detected, from: 'class-path', ...base };
  const fallback = [path.join(userDir, 'target', 'classes'), path.join(userDir, 'build', 'classes', 'java', 'main')].filter(isDir);
  return { roots: fallback, from: 'working-directory', ...base };
}

/** The agent's default `debounceMs`, in ms (config/AgentConfig.java). */
const DEBOUNCE_MS = 500;
/** The largest `debounceMs` it takes, in ms: a larger one is cut to it (config/AgentConfig.java). */
const MAX_DEBOUNCE_MS = 60_000;

/** `debounceMs=` as config/AgentConfig.java parses it: a whole number held to 0..60 000; anything else is the default. */
function debounceOf(value: string | undefined): number {
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return DEBOUNCE_MS;
  return Math.max(0, Math.min(Number(value), MAX_DEBOUNCE_MS));
}

/** The class-path test of SpringBootContext: the entry as `Paths.get` prints it, `\` as `/`. */
function isClassOutput(entry: string): boolean {
  const printed = entry
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/')
    .replace(/(.)\/$/, '$1');
  return printed.endsWith('/target/classes') || printed.endsWith('/target/test-classes') || printed.includes('/build/classes/');
}

/** A matcher of class file names for `excludePatterns` (AgentConfig.globToRegex: `*` any run, `?` one character). */
export function excludedName(patterns: readonly string[]): (fileName: string) => string | undefined {
  const compiled = patterns.map((pattern) => ({
    pattern,
    regex: new RegExp(
      `^${[...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))).join('')}$`,
    ),
  }));
  return (fileName) => compiled.find(({ regex }) => regex.test(fileName))?.pattern;
}
