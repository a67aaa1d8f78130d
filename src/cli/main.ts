/**
 * The command line: parses arguments, renders events, turns signals into an AbortSignal and exits
 * with the exit status. The build and subcommands load only when needed (not for `--help`).
 */
// First: starts reading the core while commander is set up.
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { afterToolWords, closestName, collect, integer, pathMap, token } from './option-values.js';
import type { ToolKind } from '../outcome/facts.js';
import type { CliOptions } from './build.js';
import type { WatchFlags } from './watch.js';
import { addAgentCommands, addMcp, type CommandHost } from './commands.js';
import { EXIT_NOT_SAFE, EXIT_SIGNALLED, EXIT_USAGE } from '../outcome/exit.js';
import { exitHelp, ownOptionAfterToolText, unknownToolText } from '../report/shortfall-words.js';
import { errorText, interruptedAgainText } from '../report/step-words.js';
import { describeOutcome } from '../report/words.js';
import { paletteFor } from '../report/palette.js';
import { stdoutBroken } from './stdout.js';
import { usageError, usageHint, writeUsageJson } from './usage.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** Where reclazz-build's options go, and which words after the tool's name are the tool's (option-values.ts). */
const AFTER_TOOL = `
After gradle or mvn every word goes to the tool (-q and --quiet quiet the tool), but --help and
-h, which print this help; reclazz-build's own options go before the tool's name (after it, its
long options are a usage error). After -- every word is the command's.`;

const MORE_HELP = `${AFTER_TOOL}

Each subcommand has its own --help (reclazz-build doctor --help).

Defaults can come from reclazz.config.json or a "reclazz" key in package.json
(timeoutMs, verifyTimeoutMs, waitMs, waitForAgentMs, port, portFile, classesDirs, pathMap, gradleArgs, mvnArgs,
restartCommand, restartTimeoutMs; watch and debounceMs for reclazz-build watch); command-line options win.

${exitHelp('build')}`;

const EXAMPLES = `
Examples:
  $ reclazz-build gradle classes            # ./gradlew classes when the project has it
  $ reclazz-build mvn -q compile            # ./mvnw when present, else mvn
  $ reclazz-build -- make classes           # any build command after --
  $ reclazz-build --json mvn compile | jq -c 'select(.type=="result")'
  $ reclazz-build watch mvn -q compile      # build and prove live on every save, until Ctrl-C
  $ reclazz-build doctor                     # is the agent there, and does it watch this project?
  $ reclazz-build --port-file app/.reclazz/agent.port --verify-timeout 60000 gradle :app:classes`;

function addAgentOptions(command: Command): Command {
  return command
    .option('--port <n>', 'agent port (skips port-file discovery)', integer('--port', 1, 65535))
    .option(
      '--path-map <agent>=<local>',
      "read the agent's paths under <agent> as under <local> (an app in a container; repeatable)",
      pathMap,
    )
    .option(
      '--port-file <path>',
      "the agent's port file (repeatable: a build holds each agent; default: .reclazz/agent.port or .idea/reclazz/agent.port here, above, or every one below)",
      collect,
    )
    .option('--timeout <ms>', 'bound per receipt and for connecting (default 5000)', integer('--timeout', 1))
    .option('--config <file>', 'config file (default: reclazz.config.json or package.json "reclazz", here or above)')
    .option('--json', 'JSON lines on stdout (human messages stay on stderr)')
    .option('--verbose', 'more detail')
    .option('-q, --quiet', "only warnings and the verdict; hide the agent's events");
}

/** The options of a build, for the build itself and for `watch`. */
function addBuildOptions(command: Command): Command {
  return command
    .option('--owner <token>', 'owner token for the hold (default: the saved one for this agent session, else new)', token)
    .option('--verify-timeout <ms>', 'one deadline for all VERIFY polling (default 30000)', integer('--verify-timeout', 1))
    .option(
      '--wait <ms>',
      "how long to wait for another run's lock, another owner's hold, a free client slot, or a starting agent (0: do not wait; default 30000)",
      integer('--wait', 0),
    )
    .option(
      '--wait-for-agent <ms>',
      'how long to wait for the port file to appear and its port to answer, while the app starts (default 0: refuse at once)',
      integer('--wait-for-agent', 0),
    )
    .option('--no-verify', 'do not VERIFY changed classes (nothing is proven live)')
    .option(
      '--classes-dir <dir>',
      'class output directory to check (repeatable; added to target/classes and build/classes/*/main)',
      collect,
    )
    .option(
      '--restart-command <cmd>',
      'when classes need an app restart (and only then): run this shell command to restart the app, wait for it, and prove the change live there',
    )
    .option('--await-restart', 'when classes need an app restart: wait for you to restart the app, then prove the change live there')
    .option(
      '--restart-timeout <ms>',
      'how long to wait for the app to come back after a restart (default 120000)',
      integer('--restart-timeout', 1),
    );
}

const WATCH_EXAMPLES = `${AFTER_TOOL}

Each save starts one safe build after a quiet period; saves during a build make exactly one
more. Every build takes the hold, runs, and proves its changed classes, as a single run does.
A cycle's start line has "▶ building", its end line "✔", "⚠" or "✖" after the clock: the
patterns for an editor's problem matcher are in docs/editors.md.

Examples:
  $ reclazz-build watch mvn -q compile
  $ reclazz-build watch --debounce 500 gradle classes
  $ reclazz-build watch --watch shared/src -- make classes
  $ reclazz-build watch --json mvn -q compile | jq -c 'select(.type=="cycle") | .line'`;

/** watch: a safe build on every save, until Ctrl-C. */
function addWatch(program: Command): void {
  const watch = program
    .command('watch')
    .description('build and prove live on every save: gradle|mvn [tool args...], or -- <command> [args...]')
    .usage('[options] gradle|mvn [tool args...]   or   [options] -- <command> [args...]')
    .passThroughOptions()
    .argument('[command...]', 'gradle or mvn and its arguments, or after --: any build command');
  addBuildOptions(watch)
    .option('--debounce <ms>', 'quiet period after a change before a build starts (default 300)', integer('--debounce', 0, 2_147_483_647))
    .option('--watch <path>', 'also watch this folder or file (repeatable; added to the source folders found)', collect)
    .option('--exit-on-agent-loss', 'end the watch when the agent goes away (default: keep watching and reconnect)')
    // Not a watch option: taken only to say why, rather than "unknown option".
    .addOption(new Option('--allow-no-agent').hideHelp());
  addAgentOptions(watch).addHelpText('after', WATCH_EXAMPLES);
  watch.action(async (words: string[]) => {
    if (watch.opts<{ allowNoAgent?: boolean }>().allowNoAgent)
      usageError(
        'watch proves every build live, which needs the agent: --allow-no-agent is for a single build (reclazz-build --allow-no-agent mvn compile); for a watch, start the app with the agent first, or add --wait-for-agent <ms>',
      );
    const at = process.argv.indexOf('--', 2);
    const dashed = at !== -1 && process.argv[at + 1] === words[0];
    if (words.length === 0) usageError('no build command to watch: use gradle, mvn, or put any command after --');
    const tool = !dashed && (words[0] === 'gradle' || words[0] === 'mvn') ? words[0] : dashed ? 'command' : undefined;
    if (tool === undefined) usageError(unknownToolText(words[0]!, closestName(words[0]!, BUILD_TOOLS)));
    if (tool !== 'command') checkAfterTool(tool, words.slice(1), watch, true);
    const { watchAction } = await import('./watch.js');
    await exit(await watchAction(tool, tool === 'command' ? words : words.slice(1), watch.opts<WatchFlags>(), interruptController));
  });
}

/** @param aside the words after `--` that {@link main} set aside (see {@link setAsideCommand}). */
function buildProgram(aside: { command?: string[] }): Command {
  const program = new Command('reclazz-build');
  program
    .description(
      "Run a Java build under the reclazz agent's named build hold, then prove by SHA-256 " +
        'which changed classes the running app really applied. The subcommands talk to the agent without building.',
    )
    // Set before any subcommand is added: subcommands inherit them (usage errors exit 2 everywhere).
    .exitOverride()
    .showHelpAfterError(usageHint())
    .configureOutput({ outputError: (text, write) => write(paletteFor(process.stderr, process.env).red(text)) })
    .version(version, '-V, --version')
    .usage('[options] gradle|mvn [tool args...]   or   [options] -- <command> [args...]')
    .enablePositionalOptions()
    .passThroughOptions()
    .argument('[command...]', 'after --: any build command and its arguments');
  addBuildOptions(program).option('--allow-no-agent', 'with no agent found, run the build without a hold and say so');
  addAgentOptions(program);
  program.addHelpText('after', `${EXAMPLES}\n${MORE_HELP}`);
  program.action(async (parsed: string[]) => {
    const words = parsed.length === 1 && parsed[0] === AFTER_DASHES ? (aside.command ?? []) : parsed;
    // Nothing to build: a short usage error, as for any other; --help prints the whole help.
    if (words.length === 0) usageError('no build command: use gradle, mvn, or put any command after --');
    if (!process.argv.includes('--'))
      usageError(
        unknownToolText(
          words[0]!,
          closestName(
            words[0]!,
            program.commands.map((c) => c.name()),
          ),
        ),
      );
    await startBuild('command', words, program.opts<CliOptions>());
  });
  for (const tool of ['gradle', 'mvn'] as const) {
    program
      .command(tool)
      .description(
        `run ${tool === 'gradle' ? "the project's gradlew, else gradle" : "the project's mvnw, else mvn"} under the hold; the words after it go to it untouched, but --help and -h`,
      )
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[args...]')
      .action(async (args: string[]) => {
        checkAfterTool(tool, args, program, false);
        await startBuild(tool, args, program.opts<CliOptions>());
      });
  }
  addWatch(program);
  const host: CommandHost = {
    addAgentOptions,
    collect,
    integer,
    run: async (body) => {
      const signals = interruptController(() => undefined);
      const code = await body(signals.signal);
      signals.dispose();
      await exit(code);
    },
  };
  addAgentCommands(program, host);
  addMcp(program, host, version);
  // A subcommand's usage error points at its own help (gradle and mvn pass every option on).
  for (const command of program.commands)
    if (command.name() !== 'gradle' && command.name() !== 'mvn') command.showHelpAfterError(usageHint(command.name()));
  return program;
}

/**
 * First SIGINT/SIGTERM aborts the run cleanly (it sends BUILD failed and exits 130/143);
 * a second one exits at once with one line on how to recover the hold.
 */
async function startBuild(tool: ToolKind, args: string[], opts: CliOptions): Promise<void> {
  const { buildAction: run } = await import('./build.js');
  await exit(await run(tool, args, opts, interruptController));
}

function interruptController(owner: () => string | undefined): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = (signal: NodeJS.Signals): void => {
    signalled = true;
    if (!controller.signal.aborted) {
      controller.abort(signal);
      return;
    }
    process.stderr.write(interruptedAgainText(owner()));
    process.exit(EXIT_SIGNALLED[signal === 'SIGTERM' ? 'SIGTERM' : 'SIGINT']);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

const BUILD_TOOLS = ['gradle', 'mvn'];

/**
 * Reads `args`, the words after `tool`, as {@link afterToolWords} does: prints `command`'s help
 * (exit 0, nothing sent) for a `--help` or `-h` among them, a usage error for one of its own
 * options; else returns, and they all go to the tool.
 */
function checkAfterTool(tool: string, args: readonly string[], command: Command, watch: boolean): void {
  const words = afterToolWords(tool, args, command);
  if (words?.kind === 'help') command.help();
  if (words?.kind === 'own') usageError(ownOptionAfterToolText(words.option, tool, watch, words.short));
}

/** True for the error Node throws when the working directory was deleted (`process.cwd()`, `path.resolve`). */
function isWorkingDirGone(error: unknown): boolean {
  const { code, syscall } = error as NodeJS.ErrnoException;
  return code === 'ENOENT' && syscall === 'uv_cwd';
}

/** Reports a working directory that no longer exists (a usage error, with its `--json` line) and exits 2. */
async function workingDirGone(argv: string[], subcommands: readonly string[]): Promise<never> {
  const { message, hint } = describeOutcome({ reason: 'usage', problem: { kind: 'no-working-dir' } });
  process.stderr.write(`${paletteFor(process.stderr, process.env).red(`error: ${message}`)}\nnext: ${hint}\n`);
  writeUsageJson(argv, subcommands, { kind: 'no-working-dir' });
  return exit(EXIT_USAGE);
}

/** Set once SIGINT or SIGTERM came: then the exit does not wait for a reader that stopped reading. */
let signalled = false;
/** How long an exit after a signal waits for stdout and stderr to be taken, in ms. */
const SIGNALLED_FLUSH_MS = 200;

/**
 * Exits once stdout and stderr are flushed; after a signal, at most {@link SIGNALLED_FLUSH_MS} ms
 * later, so a reader that stopped reading (`events | sleep 30`) cannot keep the process.
 */
async function exit(code: number): Promise<never> {
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (stream.destroyed || stream.writableLength === 0) resolve();
      else stream.write('', () => resolve());
    });
  const both = Promise.all([stdoutBroken() ? Promise.resolve() : flushed(process.stdout), flushed(process.stderr)]);
  await (signalled ? Promise.race([both, new Promise((resolve) => setTimeout(resolve, SIGNALLED_FLUSH_MS))]) : both);
  process.exit(code);
}

/**
 * Stands in for the words after `--` while commander parses: it dispatches on the first operand
 * even after `--`, so `-- status` would run `status`. Holds a NUL, so no one types it.
 */
const AFTER_DASHES = '\0after--';

/**
 * `argv` with the words after the first `--` replaced by {@link AFTER_DASHES}, and those words;
 * unchanged when there is no `--`, or a subcommand is named before it (`mvn -- -q`).
 */
function setAsideCommand(argv: string[], commands: readonly string[]): { parse: string[]; command: string[] | undefined } {
  const at = argv.indexOf('--', 2);
  if (at === -1 || argv.slice(2, at).some((w) => commands.includes(w))) return { parse: argv, command: undefined };
  return { parse: [...argv.slice(0, at + 1), AFTER_DASHES], command: argv.slice(at + 1) };
}

/** Parses `argv` and runs; the process exits with the documented exit status. */
export async function main(argv: string[]): Promise<void> {
  const aside: { command?: string[] } = {};
  const program = buildProgram(aside);
  const { parse, command } = setAsideCommand(
    argv,
    program.commands.map((c) => c.name()),
  );
  if (command !== undefined) aside.command = command;
  try {
    await program.parseAsync(parse);
  } catch (error) {
    if (error instanceof CommanderError) {
      const ok = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
      if (!ok)
        writeUsageJson(
          argv,
          program.commands.map((c) => c.name()),
          error.message.replace(/^error: /, ''),
        );
      await exit(ok ? 0 : EXIT_USAGE);
    }
    if (isWorkingDirGone(error))
      await workingDirGone(
        argv,
        program.commands.map((c) => c.name()),
      );
    process.stderr.write(`reclazz-build: internal error (a bug in reclazz-build; please report it): ${errorText(error)}\n`);
    await exit(EXIT_NOT_SAFE);
  }
}

void main(process.argv);
