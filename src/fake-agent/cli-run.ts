/**
 * Argument parsing and start-up of the `reclazz-fake-agent` command (cli.ts runs it with
 * process.argv and signal handling; tests call it directly).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Writable } from 'node:stream';
import { formatEvent, parseBuild } from './wire.js';
import { startFakeAgent } from './server.js';
import type { FakeAgent, FakeAgentOptions, FinalStatus, HostileOptions, InterceptAction, InterceptCommand } from './types.js';

interface CliOptions {
  portFile: string;
  port?: number;
  watch: string[];
  heartbeatMs?: number;
  captureDelayMs?: number;
  reloadMs?: number;
  oldAgent?: boolean;
  notReady?: boolean;
  crlf?: boolean;
  verifyStatus?: FinalStatus;
  rejectStarted?: boolean;
  silent: string[];
  log?: boolean;
  standInJvm: boolean;
  appDir?: string;
  reportPid?: string;
  reportWorkingDir?: string;
  pathMap: string[];
  watchSampleTruncated?: boolean;
  startingMs?: number;
  verifyWiredMs?: number;
  watcherStartMs?: number;
  scanTimeoutMs?: number;
  excludePattern: string[];
  agentArgs?: string;
  classPath: string[];
  jar?: string;
  agentOn?: 'command-line' | 'JAVA_TOOL_OPTIONS' | 'attached';
  startingDoctor?: 'observed' | 'silent';
  portFileDelayMs?: number;
  listenDelayMs?: number;
  shutdownMs?: number;
  lingeringSlots?: boolean;
  unreadableClass: string[];
  restartRequired: string[];
  newBean: string[];
  autoReload?: boolean;
  watchDebounceMs?: number;
  hostile: HostileFeature[];
}

/** `--hostile` features, each a switch of {@link HostileOptions}. */
const HOSTILE_FEATURES = ['levels', 'messages', 'doctor', 'verify', 'reload', 'health', 'oversized-line', 'flood', 'silent-connect', 'half-line'] as const;
type HostileFeature = (typeof HOSTILE_FEATURES)[number];

function hostileOptions(features: HostileFeature[]): HostileOptions | undefined {
  if (features.length === 0) return undefined;
  const on = (feature: HostileFeature): true | undefined => (features.includes(feature) ? true : undefined);
  return {
    levels: on('levels'),
    messages: on('messages'),
    doctor: on('doctor'),
    verify: on('verify'),
    reload: on('reload'),
    health: on('health'),
    oversizedLine: on('oversized-line'),
    flood: on('flood'),
    silentConnect: on('silent-connect'),
    halfLine: on('half-line'),
  };
}

/** `<agent path>=<local path>` pairs of --path-map as an object. */
function pathMapOf(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  return Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

function pathPair(value: string, previous: string[]): string[] {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1) throw new InvalidArgumentError('expected <agent path>=<local path>, e.g. /app=.');
  return [...previous, value];
}

function msOrForever(value: string): number {
  return value === 'forever' ? Infinity : nonNegativeInt(value);
}

/**
 * The `<class>[=<from>-><to>]` entries of --restart-required as a lookup: a superclass change of
 * that class (default: from `<package>.Base` to `<package>.OtherBase`).
 */
function restartRequiredOf(entries: string[]): FakeAgentOptions['restartRequired'] {
  if (entries.length === 0) return undefined;
  const changes = new Map(
    entries.map((entry) => {
      const eq = entry.indexOf('=');
      const className = eq < 0 ? entry : entry.slice(0, eq);
      const pkg = className.includes('.') ? className.slice(0, className.lastIndexOf('.') + 1) : '';
      const [from, to] = eq < 0 ? [`${pkg}Base`, `${pkg}OtherBase`] : entry.slice(eq + 1).split('->');
      return [className, { from: from!.trim(), to: (to ?? '').trim() || 'java.lang.Object' }];
    }),
  );
  return (className) => changes.get(className);
}

/** The `<class>[=refused]` entries of --new-bean as a lookup. */
function newBeanOf(entries: string[]): FakeAgentOptions['newBean'] {
  if (entries.length === 0) return undefined;
  const beans = new Map(entries.map((entry) => (entry.endsWith('=refused') ? [entry.slice(0, -'=refused'.length), 'refused' as const] : [entry, 'registered' as const])));
  return (className) => beans.get(className);
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function createProgram(): Command {
  return new Command('reclazz-fake-agent')
    .version(packageVersion(), '-V, --version')
    .description(
      "A fake of the reclazz agent's loopback status socket: heartbeats, BUILD hold rules with receipts, " +
        'capture of changed class files, VERIFY, DOCTOR, RELOAD, and switches for what the running agent does ' +
        `that its docs do not say. Documented in ${guidePath()}.`,
    )
    .option('--port-file <path>', 'where to write the port (deleted on exit)', '.reclazz/agent.port')
    .option('--port <n>', 'TCP port on 127.0.0.1 (default: ephemeral)', nonNegativeInt)
    .option('--watch <dir...>', 'class output directories to watch (snapshotted at start as loaded)', collect, [])
    .option('--heartbeat-ms <n>', 'HEARTBEAT period in ms (default 10000; 0 disables)', nonNegativeInt)
    .option('--capture-delay-ms <n>', 'delay from BUILD ok / SCAN to the capture, in ms (default 100)', nonNegativeInt)
    .option('--reload-ms <n>', 'how long a captured class reads running, in ms (default 50)', nonNegativeInt)
    .option('--old-agent', 'act as an agent from before build ownership (no "agent" in CONNECTED, no VERIFY/DOCTOR/RELOAD)')
    .option('--not-ready', 'handlers not wired: BUILD, VERIFY, DOCTOR, RELOAD get no reply')
    .option('--crlf', 'end sent lines with \\r\\n')
    .addOption(
      new Option('--verify-status <status>', 'final status of every reload attempt').choices(['applied', 'failed', 'unverified']),
    )
    .option('--reject-started', 'answer every "BUILD started request=..." with BUILD_REJECTED (the hold is not taken)')
    .option('--silent <verb>', 'act on commands with this verb but never reply (lost receipts); repeatable', collect, [])
    .option('--log', 'print each received command line to stderr')
    .option('--no-stand-in-jvm', "report this process as the app's JVM instead of starting an idle stand-in process in the app folder")
    .option('--app-dir <dir>', 'the app folder, where the stand-in JVM runs (default: the folder holding .reclazz/ of --port-file)')
    .option('--report-pid <pid>', 'DOCTOR pid to report instead of the stand-in\'s (e.g. one not visible here)')
    .option('--report-working-dir <path>', 'DOCTOR workingDirectory to report instead of the stand-in\'s')
    .option('--path-map <agent>=<local>', 'report paths under <local> as under <agent> (an app in a container); repeatable', pathPair, [])
    .option('--watch-sample-truncated', 'DOCTOR watchSampleTruncated true whatever the sample')
    .option('--starting-ms <n>', "handlers not all wired for n ms after start ('forever' for ever): no BUILD/RELOAD replies", msOrForever)
    .option('--verify-wired-ms <n>', "VERIFY wired n ms after start, before the rest (default: half of --starting-ms)", msOrForever)
    .option('--watcher-start-ms <n>', "the watcher starts n ms after wiring, as the agent's startupDelaySec ('forever' for ever)", msOrForever)
    .option('--scan-timeout-ms <n>', 'how long a BUILD ok waits for a watcher that has not started (default 10000)', nonNegativeInt)
    .option('--exclude-pattern <glob>', "class file names the watcher skips (the agent's excludePatterns); repeatable", collect, [])
    .option('--agent-args <options>', "the agent's options on the stand-in JVM's -javaagent (default: watchDirs=... from --watch)")
    .option('--class-path <dir>', "an entry of the stand-in JVM's -cp (default: the --watch directories); repeatable", collect, [])
    .option('--jar <file>', 'the stand-in JVM runs from this jar (java -jar <file>): its whole class path, no -cp')
    .addOption(
      new Option('--agent-on <where>', 'where the stand-in JVM carries -javaagent').choices(['command-line', 'JAVA_TOOL_OPTIONS', 'attached']),
    )
    .addOption(new Option('--starting-doctor <mode>', "DOCTOR while starting: 'observed' (unwired observation) or 'silent'").choices(['observed', 'silent']))
    .option('--port-file-delay-ms <n>', 'write the port file only n ms after start', nonNegativeInt)
    .option('--listen-delay-ms <n>', 'write the port file at once but listen only n ms after start', nonNegativeInt)
    .option('--shutdown-ms <n>', "the app's JVM ends n ms after SIGTERM (its shutdown time); the agent's socket and port file go at once", nonNegativeInt)
    .option('--lingering-slots', 'a closed client keeps its slot until the second write to it (about two heartbeats)')
    .option('--unreadable-class <name>', 'class file (binary name) the agent cannot read: a held capture fails and the hold stays; repeatable', collect, [])
    .option('--restart-required <class[=from->to]>', 'class whose reload changes its superclass (restart required); repeatable', collect, [])
    .option('--new-bean <class[=refused]>', 'a new class the agent registers as a Spring bean (or refuses to); repeatable', collect, [])
    .option('--auto-reload', "the agent's own watcher: reload changes with no BUILD or SCAN after a debounce")
    .option('--watch-debounce-ms <n>', 'debounce of --auto-reload in ms (default 500)', nonNegativeInt)
    .addOption(
      new Option('--hostile <feature>', 'misbehave: taint a field with escape sequences, or break connections; repeatable')
        .choices(HOSTILE_FEATURES)
        .argParser((value: string, previous: string[] = []) => {
          if (!(HOSTILE_FEATURES as readonly string[]).includes(value)) {
            throw new InvalidArgumentError(`Allowed choices are ${HOSTILE_FEATURES.join(', ')}.`);
          }
          return [...previous, value];
        })
        .default([]),
    )
    .addHelpText(
      'after',
      `
Examples:
  $ reclazz-fake-agent --watch target/classes
  $ reclazz-fake-agent --port-file .reclazz/agent.port --watch build/classes/java/main --log
  $ reclazz-fake-agent --watch target/classes --verify-status failed
  $ reclazz-fake-agent --silent VERIFY          # receipts for VERIFY never arrive
  $ reclazz-fake-agent --old-agent              # client must refuse an owned build
  $ reclazz-fake-agent --watch target/classes --auto-reload    # a plain mvn compile reloads by itself
  $ reclazz-fake-agent --watch target/classes --path-map /app=.   # an app in a container
  $ reclazz-fake-agent --starting-ms 5000 --listen-delay-ms 2000  # an app still starting
  $ reclazz-fake-agent --hostile messages --hostile doctor      # escape sequences in what it says

Talk to it by hand (bash's /dev/tcp, no extra tools):
  $ exec 3<>/dev/tcp/127.0.0.1/"$(cat .reclazz/agent.port)"; printf 'DOCTOR d1\\n' >&3; head -2 <&3`,
    );
}

/** The folder of the reclazz-build package this file belongs to (found upward), or undefined. */
function packageRoot(): { dir: string; version: string } | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'reclazz-build' && pkg.version !== undefined) return { dir, version: pkg.version };
    } catch {
      // no package.json here
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function packageVersion(): string {
  return packageRoot()?.version ?? 'unknown';
}

/** The fake agent's guide the package ships, docs/fake-agent.md (its path when found, else its name). */
function guidePath(): string {
  const root = packageRoot();
  const guide = root && join(root.dir, 'docs', 'fake-agent.md');
  return guide && existsSync(guide) ? guide : "reclazz-build's docs/fake-agent.md";
}

/** Build the intercept hook for --reject-started, --silent and --log, or undefined. */
function interceptFor(options: CliOptions): FakeAgentOptions['intercept'] {
  const silent = new Set(options.silent.map((verb) => verb.toUpperCase()));
  if (!options.rejectStarted && silent.size === 0 && !options.log) return undefined;
  return (cmd: InterceptCommand): InterceptAction | undefined => {
    if (options.log) process.stderr.write(`[client ${cmd.client}] ${cmd.line}\n`);
    if (silent.has(cmd.verb)) return { kind: 'drop' };
    if (options.rejectStarted && !options.notReady) {
      const build = parseBuild(cmd.words);
      if (build?.kind === 'build' && build.state === 'started' && build.request) {
        const owner = build.owner === undefined || options.oldAgent ? '' : ` owner=${build.owner}`;
        return { kind: 'reply', lines: [formatEvent('INFO', `BUILD_REJECTED ${build.request} started${owner}`)] };
      }
    }
    return undefined;
  };
}

/**
 * Parse `argv` (user arguments only, without node and script path), start the fake agent and
 * write the ready line `fake agent listening on 127.0.0.1:<port> (port file <path>)` to `out`.
 * Relative `--port-file` / `--watch` / `--app-dir` / `--path-map` paths resolve against process.cwd(). Throws on bad
 * arguments (commander's own messages go to stderr) or when the port cannot be bound.
 */
export async function runFakeAgentCli(argv: string[], out: Writable = process.stdout): Promise<FakeAgent> {
  const program = createProgram().exitOverride();
  program.parse(argv, { from: 'user' });
  const options = program.opts<CliOptions>();
  const portFile = resolve(options.portFile);
  const agent = await startFakeAgent({
    portFile,
    port: options.port,
    watchDirs: options.watch.map((dir) => resolve(dir)),
    heartbeatMs: options.heartbeatMs,
    captureDelayMs: options.captureDelayMs,
    reloadMs: options.reloadMs,
    agentVersion: options.oldAgent ? null : undefined,
    notReady: options.notReady,
    crlf: options.crlf,
    verifyStatus: options.verifyStatus ? () => options.verifyStatus : undefined,
    intercept: interceptFor(options),
    standInJvm: options.standInJvm,
    appDir: options.appDir,
    reportedPid: options.reportPid,
    reportedWorkingDirectory: options.reportWorkingDir,
    pathMap: pathMapOf(options.pathMap),
    forceWatchSampleTruncated: options.watchSampleTruncated,
    startingMs: options.startingMs,
    verifyWiredMs: options.verifyWiredMs,
    watcherStartMs: options.watcherStartMs,
    scanTimeoutMs: options.scanTimeoutMs,
    excludePatterns: options.excludePattern.length > 0 ? options.excludePattern : undefined,
    agentArgs: options.agentArgs,
    classPath: options.classPath.length > 0 ? options.classPath.map((dir) => resolve(dir)) : undefined,
    jar: options.jar === undefined ? undefined : resolve(options.jar),
    agentOn: options.agentOn,
    startingDoctor: options.startingDoctor,
    portFileDelayMs: options.portFileDelayMs,
    listenDelayMs: options.listenDelayMs,
    shutdownMs: options.shutdownMs,
    lingeringSlots: options.lingeringSlots,
    unreadableClassFile: options.unreadableClass.length > 0 ? (_path, className) => options.unreadableClass.includes(className) : undefined,
    restartRequired: restartRequiredOf(options.restartRequired),
    newBean: newBeanOf(options.newBean),
    autoReload: options.autoReload,
    watchDebounceMs: options.watchDebounceMs,
    hostile: hostileOptions(options.hostile),
  });
  out.write(`fake agent listening on 127.0.0.1:${agent.port} (port file ${portFile})\n`);
  return agent;
}
