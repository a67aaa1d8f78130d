/**
 * The words of `reclazz-build mcp` (src/mcp/): what each tool is for, as a coding agent reads it
 * when choosing a tool; the progress messages of a call; and the short text beside a tool's
 * structured result (the verdict, the classes not proven, a failed build's last lines).
 */
import { LIVE_VERDICTS } from '../outcome/facts.js';
import { verdictMark } from './human.js';
import type { JsonLine } from './schema.js';

/** Each tool's description: when a coding agent should call it, and what its result means. */
export const TOOL_DESCRIPTIONS = {
  build:
    'Compile the Java (or Kotlin) project while the running app holds its hot reloads back, then prove which changed classes the app now runs: ' +
    'the agent in the app confirms each changed class file by SHA-256. Call it after editing JVM sources, instead of running Maven or Gradle yourself. ' +
    'Only provenLive: true means the change runs in the app. Otherwise isError is true and classes[] (and the text) say which class is not live and why: ' +
    'restart-required (the change needs an app restart; pass options.restartCommand to have it done), not-watched, timeout, ...; ' +
    "a failed build returns the compiler's last lines in build.output. Calls for one checkout run one after another.",
  verify:
    'Ask the running app, without building, whether it runs exactly these class files (SHA-256, as build does). Use it after classes were compiled ' +
    'some other way (the IDE, a build run without this server), or to check again later. Default: every class file of the project here.',
  doctor:
    "Check the set-up: is the app's hot-reload agent running and reachable from cwd, which version, and does it watch this project's class output " +
    'directories. Call it when build or verify refuse (no agent, old agent) or report not-watched, and follow its hint.',
  status:
    "Read the agent's reload state: paused or not, pending classes and actions, and whether someone (the IDE, another build) holds its build hold. " +
    'Use it when reloads seem held back.',
} as const;

/** The input fields, described for the agent. */
export const INPUT_WORDS = {
  cwd: 'Absolute path of the project folder (the checkout or the module whose classes to build); every path in the call resolves against it.',
  command:
    'The build command as typed after reclazz-build and its options: ["mvn","-q","compile"] or ["gradle","classes"] (the project\'s mvnw or gradlew ' +
    'when it has one), or "--" then any command: ["--","make","classes"].',
  paths: 'Class files or folders to check (default: the class output directories of the project).',
  options: "Options by the configuration file's keys (reclazz.config.json), which they override for this call; paths resolve against cwd.",
} as const;

/** Why a call was refused before anything ran. */
export const CALL_REFUSALS = {
  cwd: (cwd: string) => `cwd must be the absolute path of an existing folder, not ${JSON.stringify(cwd)}`,
  command:
    'command must start with "mvn", "gradle", or "--" followed by the command to run: ["mvn","-q","compile"], ["--","make","classes"]',
  noResult: (exitCode: number) =>
    `reclazz-build ended with exit status ${exitCode} without a result; its stderr is in this server's log (stderr)`,
  cancelled: (message: string) => `build cancelled: ${message}`,
} as const;

/** A progress message for one `--json` event line of a running call, or undefined for lines that are not a step. */
export function progressText(line: JsonLine): string | undefined {
  switch (line.type) {
    case 'waiting':
      return `waiting for ${line.what}`;
    case 'build-start':
      return `building: ${line.command}`;
    case 'build-end':
      return line.exitCode === 0 ? 'build ok' : `build failed (exit status ${line.exitCode})`;
    case 'finish':
      return `BUILD ${line.state} ${line.acknowledged ? 'acknowledged' : 'NOT acknowledged'}`;
    case 'changes':
      return `verifying 0 of ${line.changed - line.notVerifiable + line.checks}`;
    case 'verify-progress':
      return `verifying ${line.final} of ${line.total}`;
    case 'restart-needed':
      return line.command === null ? 'waiting for the app to restart' : 'restarting the app';
    default:
      return undefined;
  }
}

/** The most classes the text names one per line; the rest are counted (structuredContent has them all). */
const LISTED = 20;

/** The parts of a build's or `verify`'s `result` line the text is made of. */
interface RunResultText {
  provenLive: boolean;
  exitCode: number;
  message: string;
  hint: string | null;
  build: { output?: string[] | undefined } | null;
  classes: Array<{ className: string; status: string; detail: string }>;
}

/** The text beside a build's or `verify`'s result: the verdict, the next step, each class not proven, a failed build's last lines. */
export function runResultText(result: RunResultText): string {
  const mark = verdictMark({ ...result, ran: result.build !== null || result.classes.length > 0 });
  const lines = [`${mark.text} ${result.message}`];
  if (result.hint !== null && !result.provenLive) lines.push(`next: ${result.hint}`);
  const open = result.classes.filter((c) => !LIVE_VERDICTS.has(c.status) && !['added', 'removed', 'not-verifiable'].includes(c.status));
  for (const c of open.slice(0, LISTED)) lines.push(`${c.status} ${c.className}: ${c.detail}`);
  if (open.length > LISTED) lines.push(`… and ${open.length - LISTED} more not live (classes[] lists every class)`);
  const output = result.build?.output;
  if (output !== undefined && output.length > 0) lines.push('last lines of the build:', ...output);
  return lines.join('\n');
}

/** The text beside a subcommand's result (doctor, status): what it found, and the next step. */
export function commandResultText(result: { message: string; hint: string | null }): string {
  return result.hint === null ? result.message : `${result.message}\nnext: ${result.hint}`;
}
