/**
 * The fake agent's options resolved: every default filled in, and the stand-in JVM's command
 * line made from them.
 */
import { mkdirSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { agentArguments, agentJarPath, appDirOfPortFile, defaultOutputDirs, pathLocaliser, pathReporter, type PathReporter } from './paths.js';
import { Hostility } from './hostile.js';
import type { JvmLine } from './jvm.js';
import type { FakeAgentOptions } from './types.js';

/** Resolved options: every default filled in. */
export interface Settings {
  portFile?: string | undefined;
  port: number;
  watchDirs: string[];
  heartbeatMs: number;
  agentVersion: string | null;
  protocolVersion: number;
  captureDelayMs: number;
  reloadMs: number;
  crlf: boolean;
  ledgerSize: number;
  outboxLimit: number;
  maxClients: number;
  holdWarnMs: number;
  scanCache: boolean;
  verifyStatus?: FakeAgentOptions['verifyStatus'];
  intercept?: FakeAgentOptions['intercept'];
  failCapture?: FakeAgentOptions['failCapture'];
  unreadableClassFile?: FakeAgentOptions['unreadableClassFile'];
  restartRequired?: FakeAgentOptions['restartRequired'];
  newBean?: FakeAgentOptions['newBean'];
  autoCompile: boolean;
  testRunner?: FakeAgentOptions['testRunner'];
  standInJvm: boolean;
  appDir: string;
  java?: FakeAgentOptions['java'];
  reportedPid?: string | undefined;
  reportedWorkingDirectory?: string | undefined;
  reportPath: PathReporter;
  /** An agent path as a local one (the inverse of `reportPath`). */
  localPath: (agentPath: string) => string;
  forceWatchSampleTruncated: boolean;
  startingMs: number;
  verifyWiredMs: number;
  watcherStartMs: number;
  jvmBootMs: number;
  scanTimeoutMs: number;
  startingDoctor: 'observed' | 'silent';
  excludePatterns: string[];
  agentArgs?: string | undefined;
  classPath?: string[] | undefined;
  jar?: string | undefined;
  agentOn: 'command-line' | 'JAVA_TOOL_OPTIONS' | 'attached';
  portFileDelayMs: number;
  listenDelayMs: number;
  shutdownMs: number;
  lingeringSlots: boolean;
  autoReload: boolean;
  watchDebounceMs: number;
  watchPollMs: number;
  refuseWatch: string[];
  hostile: Hostility;
}

export function settingsFrom(options: FakeAgentOptions): Settings {
  const portFile = options.portFile === undefined ? undefined : resolve(options.portFile);
  const impliedAppDir = portFile === undefined ? undefined : appDirOfPortFile(portFile);
  const appDir = options.appDir !== undefined ? resolve(options.appDir) : (impliedAppDir ?? resolve());
  // The port file's folder is created anyway; its app folder must exist for the stand-in JVM.
  if (options.appDir === undefined && impliedAppDir !== undefined) mkdirSync(impliedAppDir, { recursive: true });
  const startingMs = options.notReady ? Infinity : (options.startingMs ?? 0);
  return {
    portFile,
    port: options.port ?? 0,
    watchDirs: (options.watchDirs ?? []).map((dir) => resolve(dir)),
    heartbeatMs: options.heartbeatMs ?? 10_000,
    agentVersion: options.agentVersion === undefined ? '1.4.0-fake' : options.agentVersion,
    protocolVersion: options.protocolVersion ?? 1,
    captureDelayMs: options.captureDelayMs ?? 100,
    reloadMs: options.reloadMs ?? 50,
    crlf: options.crlf ?? false,
    verifyStatus: options.verifyStatus,
    intercept: options.intercept,
    ledgerSize: options.ledgerSize ?? 512,
    outboxLimit: options.outboxLimit ?? 1000,
    maxClients: options.maxClients ?? 5,
    holdWarnMs: options.holdWarnMs ?? 300_000,
    failCapture: options.failCapture,
    // The watcher polls: reuse hashes of unchanged files (answers are the same).
    scanCache: (options.scanCache ?? false) || (options.autoReload ?? false),
    unreadableClassFile: options.unreadableClassFile,
    restartRequired: options.restartRequired,
    newBean: options.newBean,
    autoCompile: options.autoCompile ?? false,
    testRunner: options.testRunner,
    standInJvm: options.standInJvm ?? true,
    appDir,
    java: options.java,
    reportedPid: options.reportedPid,
    reportedWorkingDirectory: options.reportedWorkingDirectory,
    reportPath: pathReporter(options.pathMap),
    localPath: pathLocaliser(options.pathMap),
    forceWatchSampleTruncated: options.forceWatchSampleTruncated ?? false,
    startingMs,
    // The agent wires VERIFY before the rest: halfway through by default.
    verifyWiredMs: options.notReady ? Infinity : (options.verifyWiredMs ?? startingMs / 2),
    watcherStartMs: options.watcherStartMs ?? 0,
    jvmBootMs: options.jvmBootMs ?? 20,
    scanTimeoutMs: options.scanTimeoutMs ?? 10_000,
    startingDoctor: options.notReady ? 'silent' : (options.startingDoctor ?? 'observed'),
    excludePatterns: options.excludePatterns ?? [],
    agentArgs: options.agentArgs,
    classPath: options.classPath,
    jar: options.jar,
    agentOn: options.agentOn ?? 'command-line',
    portFileDelayMs: options.portFileDelayMs ?? 0,
    listenDelayMs: options.listenDelayMs ?? 0,
    shutdownMs: options.shutdownMs ?? 0,
    lingeringSlots: options.lingeringSlots ?? false,
    autoReload: options.autoReload ?? false,
    watchDebounceMs: options.watchDebounceMs ?? 500,
    watchPollMs: options.watchPollMs ?? 100,
    refuseWatch: (options.refuseWatch ?? []).map((dir) => resolve(dir)),
    hostile: new Hostility(options.hostile),
  };
}

/** The stand-in's JVM options and environment: the agent's jar with its options, and the class path. */
export function jvmLine(settings: Settings): JvmLine {
  const args =
    settings.agentArgs ??
    agentArguments({
      watchDirs: settings.watchDirs.map(settings.reportPath),
      excludePatterns: settings.excludePatterns,
      watcherStartMs: settings.watcherStartMs,
      debounceMs: settings.watchDebounceMs,
      autoCompile: settings.autoCompile,
    });
  const javaagent = `-javaagent:${agentJarPath(settings.agentVersion)}${args === '' ? '' : `=${args}`}`;
  // Without a class path given, the app loads its classes from what its agent watches, by its default rule when it names none.
  const classPath = (settings.classPath ?? localClassPath(settings)).map(settings.reportPath);
  // `-jar` ends the JVM's options and makes the jar the whole class path: no `-cp` with it.
  const runs = settings.jar !== undefined ? ['-jar', settings.reportPath(settings.jar)] : testRunnerLine(settings.testRunner, settings.appDir);
  const options = [...(classPath.length > 0 && settings.jar === undefined ? ['-cp', classPath.join(delimiter)] : []), ...runs];
  if (settings.agentOn === 'command-line') return { options: [javaagent, ...options], env: {} };
  if (settings.agentOn === 'JAVA_TOOL_OPTIONS') return { options, env: { JAVA_TOOL_OPTIONS: javaagent } };
  return { options, env: {} };
}

/**
 * The stand-in JVM's class path, local and absolute: the `jar` it runs (`java -jar`: the whole
 * class path), else `classPath` (agent paths, relative ones against the app folder, its working
 * directory), else what its agent watches, by its default
 * rule when it names none. Read when the JVM starts: the default depends on the folders there.
 */
export function localClassPath(settings: Settings): string[] {
  if (settings.jar !== undefined) return [settings.jar];
  if (settings.classPath !== undefined) return settings.classPath.map((entry) => resolve(settings.appDir, settings.localPath(entry)));
  return settings.watchDirs.length > 0 ? settings.watchDirs : defaultOutputDirs(undefined, settings.appDir);
}

/**
 * What a test JVM's command line says after its options: Surefire's manifest-only booter jar
 * (`-jar <basedir>/target/surefire/surefirebooter-<stamp>.jar`, its default), or Gradle's test
 * worker main class with its `'Gradle Test Executor <n>'` argument.
 */
function testRunnerLine(runner: FakeAgentOptions['testRunner'], appDir: string): string[] {
  if (runner === 'surefire') return ['-jar', resolve(appDir, 'target', 'surefire', 'surefirebooter-20261202013000000_3.jar')];
  if (runner === 'gradle') return ['worker.org.gradle.process.internal.worker.GradleWorkerMain', 'Gradle Test Executor 1'];
  return [];
}
