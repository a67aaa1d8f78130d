/**
 * The subcommands on the command line: the agent's (doctor, status, pause, resume, scan, verify,
 * events), whose work is in `actions.ts`, loaded only when one runs; and `mcp`, whose server
 * (src/mcp/) is bundled on its own into dist/mcp.cjs, beside the CLI's bundle, and required only
 * when it runs: a build's start-up neither reads nor compiles the MCP SDK.
 */
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { AGENT_RECEIPT_CAPACITY } from '../agent/limits.js';
import { exitHelp } from '../report/shortfall-words.js';

/** The subcommands' work, loaded when one of them runs. */
const actions = () => import('./actions.js');

/** What `main.ts` lends the subcommands. */
export interface CommandHost {
  /** Adds the agent-finding and output options (--port, --port-file, --timeout, --config, --json, --quiet, --verbose). */
  addAgentOptions(command: Command): Command;
  /** Runs `body` with SIGINT/SIGTERM as its AbortSignal, then exits with the status it returns. */
  run(body: (signal: AbortSignal) => Promise<number>): Promise<void>;
  /** Collects a repeatable option. */
  collect(value: string, previous: string[] | undefined): string[];
  /** Parses a whole number option. */
  integer(name: string, min: number, max?: number): (value: string) => number;
}

const AGENT_EXIT = exitHelp('agent');

/** Registers the subcommands on `program`. */
export function addAgentCommands(program: Command, host: CommandHost): void {
  addDoctor(program, host);
  addReloadCommands(program, host);
  addScan(program, host);
  addVerify(program, host);
  addEvents(program, host);
}

/** doctor: DOCTOR and the watch coverage of the class output directories here. */
function addDoctor(program: Command, host: CommandHost): void {
  const doctor = program
    .command('doctor')
    .description("show the agent's DOCTOR evidence, and whether it watches this project's class output directories");
  host
    .addAgentOptions(doctor)
    .option(
      '--classes-dir <dir>',
      'a class output directory to check besides target/classes and build/classes/*/main (repeatable)',
      host.collect,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ reclazz-build doctor
  $ reclazz-build doctor --port-file app/.reclazz/agent.port --classes-dir app/build/classes/kotlin/main
  $ reclazz-build doctor --json | jq '.classDirs'
${AGENT_EXIT}`,
    )
    .action((_o, cmd: Command) => host.run(async (signal) => (await actions()).doctorAction(cmd, signal)));
}

/** status, pause, resume: one RELOAD request and its receipt. */
function addReloadCommands(program: Command, host: CommandHost): void {
  const reloadHelp: Record<'status' | 'pause' | 'resume', [string, string]> = {
    status: [
      "show the agent's reload state (RELOAD status): paused, pending classes and actions, build hold",
      'reclazz-build status --json | jq .state.paused',
    ],
    pause: [
      'pause automatic reload agent-wide (RELOAD pause); changes stay pending until resume',
      'reclazz-build pause && ./gradlew classes && reclazz-build resume',
    ],
    resume: ['resume automatic reload (RELOAD resume); pending work is scheduled. It never releases a build hold', 'reclazz-build resume'],
  };
  for (const action of ['status', 'pause', 'resume'] as const) {
    const command = program.command(action).description(reloadHelp[action][0]);
    host
      .addAgentOptions(command)
      .addHelpText(
        'after',
        `
Prints the exact RELOAD_STATE receipt. Without it the outcome is uncertain: exit 69, and
check with \`reclazz-build status\` before retrying.

Examples:
  $ reclazz-build ${action}
  $ ${reloadHelp[action][1]}
${AGENT_EXIT}`,
      )
      .action((_o, cmd: Command) => host.run(async (signal) => (await actions()).reloadAction(action, cmd, signal)));
  }
}

/** scan: SCAN, then a DOCTOR on the same connection. */
function addScan(program: Command, host: CommandHost): void {
  const scan = program
    .command('scan')
    .description('ask the agent to scan its watched directories now (SCAN); the agent never answers SCAN');
  host
    .addAgentOptions(scan)
    .addHelpText(
      'after',
      `
SCAN has no reply. To a current agent a DOCTOR follows on the same connection: its answer
shows that the agent read the SCAN line, not what the scan found. A build hold or a manual
pause still keeps class files back.

Examples:
  $ mvn -q compile && reclazz-build scan
${AGENT_EXIT}`,
    )
    .action((_o, cmd: Command) => host.run(async (signal) => (await actions()).scanAction(cmd, signal)));
}

/** verify: the build's VERIFY rules on class files given. */
function addVerify(program: Command, host: CommandHost): void {
  const verify = program
    .command('verify')
    .description('VERIFY class files against the running agent by SHA-256 (a directory: every .class below it)')
    .argument('[paths...]', 'class files or directories (default: the class output directories here)');
  host
    .addAgentOptions(verify)
    .option('--verify-timeout <ms>', 'one deadline for all VERIFY polling (default 30000)', host.integer('--verify-timeout', 1))
    .option('--classes-dir <dir>', 'a class output directory: files below it are named relative to it (repeatable)', host.collect)
    .addHelpText(
      'after',
      `
The same VERIFY loop, deadline and ${AGENT_RECEIPT_CAPACITY}-class capacity as a build. A point-in-time check:
classes never reloaded in this agent session read not_observed until the deadline.

Examples:
  $ reclazz-build verify target/classes
  $ reclazz-build verify build/classes/java/main/com/acme/Greeter.class --verify-timeout 5000
  $ reclazz-build verify --json target/classes | jq -c 'select(.type=="class" and .status!="applied")'

${exitHelp('verify')}`,
    )
    .action((paths: string[], _o, cmd: Command) => host.run(async (signal) => (await actions()).verifyAction(cmd, paths, signal)));
}

/** events: follow the agent's event stream. */
function addEvents(program: Command, host: CommandHost): void {
  const events = program.command('events').description("follow the agent's event stream like tail -f, until Ctrl-C or the agent goes away");
  host
    .addAgentOptions(events)
    .addHelpText(
      'after',
      `
Lines are coloured by level in a terminal; HEARTBEAT lines only with --verbose. With --json,
every line the agent sends (CONNECTED and HEARTBEAT included) is written as it came, one JSON
object per line. The agent serves at most 5 clients; a follower takes one.

Examples:
  $ reclazz-build events
  $ reclazz-build events --json | jq -c 'select(.level=="RELOAD")'
  $ reclazz-build events --json > agent-events.jsonl &

${AGENT_EXIT}`,
    )
    .action((_o, cmd: Command) => host.run(async (signal) => (await actions()).eventsAction(cmd, signal)));
}

/** What dist/mcp.cjs exports (src/mcp/main.ts). */
interface McpBundle {
  serveMcp(start: { version: string; node: string; cli: string; signal: AbortSignal }): Promise<number>;
}

/** Registers `mcp` on `program`. */
export function addMcp(program: Command, host: CommandHost, version: string): void {
  program
    .command('mcp')
    .description('serve build, verify, doctor and status to a coding agent: an MCP server on stdin/stdout (docs/coding-agents.md)')
    .addHelpText(
      'after',
      `
A coding agent (Claude Code, Cursor, VS Code) starts it itself; stdout carries only the protocol,
its log goes to stderr. Each call runs reclazz-build with --json in the call's cwd. The set-up of
each client, the tools and what they return: docs/coding-agents.md.

Examples:
  $ claude mcp add reclazz-build -- reclazz-build mcp`,
    )
    .action(() =>
      host.run((signal) => {
        // Relative to the CLI's bundle (dist/cli.cjs), which stands in for import.meta.url there.
        const { serveMcp } = createRequire(import.meta.url)('./mcp.cjs') as McpBundle;
        return serveMcp({ version, node: process.execPath, cli: process.argv[1]!, signal });
      }),
    );
}
