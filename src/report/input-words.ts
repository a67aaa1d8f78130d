/**
 * The words for what the user gave that cannot be used: a usage error (arguments, config file,
 * `verify`'s paths, a watch with nothing to watch) and a bad port file or `RECLAZZ_PORT`.
 */
import type { PortFault, UsageProblem } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';

/** What `verify` takes, for its usage errors. */
const VERIFY_PATHS_HINT =
  'give .class files or the directories holding them, as paths from this folder (for example target/classes, or target/classes/com/acme/App.class)';

/** The words for a usage error (exit 2): the input named, and how to give it. */
export function describeUsage(problem: UsageProblem): Words {
  switch (problem.kind) {
    case 'input':
      return {
        message: problem.text,
        hint: problem.forBuild ? 'usage: reclazz-build [options] -- <command> [args...]' : 'run reclazz-build --help for usage',
      };
    case 'config':
      return { message: problem.text, hint: 'fix the key named above, or name another config file with --config <file>' };
    case 'never-ending':
      return {
        message: `Gradle's ${problem.argument} never finishes, so the hold could never be released with BUILD ok`,
        hint: `for a build on every save, use reclazz-build watch (reclazz-build watch gradle classes); for one build, drop ${problem.argument}`,
      };
    case 'class-path':
      return { message: problem.text, hint: VERIFY_PATHS_HINT };
    case 'no-class-files':
      return {
        message: `no class files found in ${problem.paths.join(', ') || 'the class output directories here'}`,
        hint: VERIFY_PATHS_HINT,
      };
    case 'no-working-dir':
      return {
        message: 'the working directory no longer exists (it was deleted or moved away while this shell was in it)',
        hint: 'cd to the project folder (cd "$PWD" enters it again if it was recreated) and run again',
      };
    case 'no-sources':
      return {
        message: `nothing to watch in ${problem.projectDir}: no source folder there or in its modules (src/main/java, src/main/kotlin, src/main/resources; an SAP Commerce extension's src), so no save could start a build`,
        hint: 'run the watch from the project folder, or name what to watch with --watch <folder> (for example --watch src)',
      };
  }
}

/** The words for a bad port file or `RECLAZZ_PORT`, after `waitedMs` ms of waiting for one when it waited. */
export function describePortFault(fault: PortFault, waitedMs: number | undefined): Words {
  if (fault.input === 'RECLAZZ_PORT') {
    return {
      message: portText('RECLAZZ_PORT', fault.problem, fault.text),
      hint: 'set RECLAZZ_PORT to the agent port (1-65535) or unset it',
    };
  }
  const file = fault.file;
  switch (fault.problem) {
    case 'missing':
      return {
        message:
          waitedMs === undefined
            ? `port file ${file} does not exist: the agent is not running, or writes its port file elsewhere`
            : `port file ${file} did not appear within ${waitedMs} ms (--wait-for-agent): the agent did not start, or writes its port file elsewhere`,
        hint: 'start the app with the agent, check the path, or pass --port <n>',
      };
    case 'cannot-stat':
      return {
        message: `cannot look at port file ${file} (${fault.code})`,
        hint: 'check the permissions of the folders on its path, or pass --port <n>',
      };
    case 'directory':
      return {
        message: `port file ${file} is a directory, not a file`,
        hint: 'pass the agent.port file itself with --port-file <path>, or remove the directory so the agent can write its port file there',
      };
    case 'not-regular':
      return {
        message: `port file ${file} is not a regular file (a device, pipe or socket)`,
        hint: 'point --port-file at the agent.port file the agent writes, or pass --port <n>',
      };
    case 'too-large':
      return {
        message: `port file ${file} holds more than ${fault.limit} bytes: it is not a port number the agent wrote`,
        hint: 'the agent writes only its port number there: delete the file and restart the app, or pass --port <n>',
      };
    case 'unreadable':
      return {
        message: `cannot read port file ${file} (${fault.code})`,
        hint: 'check its permissions (the agent writes it as the user running the app), or pass --port <n>',
      };
    default:
      return {
        message: portText(`port file ${file}`, fault.problem, fault.text),
        hint: 'the agent writes it whole at start-up, so it was left by something else or damaged; delete it and restart the app, or pass --port <n>',
      };
  }
}

function portText(what: string, problem: 'empty' | 'not-a-number' | 'out-of-range', text: string): string {
  if (problem === 'empty') return `${what} is empty`;
  if (problem === 'not-a-number') return `${what} does not hold a port number (${JSON.stringify(text.slice(0, 40))})`;
  return `${what} holds ${text}, outside 1-65535`;
}
