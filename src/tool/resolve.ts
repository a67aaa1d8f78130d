/**
 * Which build command runs: the project's wrapper script (`gradlew`, `mvnw`, or their
 * Windows `.bat`/`.cmd` forms) when it has one, else the tool from PATH, else any command.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolKind } from '../outcome/facts.js';
import { batchArgumentProblem, isBatchFile } from './windows.js';

/** A resolved build command. Arguments are passed to the tool untouched. */
export interface BuildCommand {
  kind: ToolKind;
  /** Executable to spawn: an absolute wrapper script path or a bare name looked up on PATH. */
  file: string;
  args: string[];
  /** True when `file` is the project's wrapper script. */
  wrapper: boolean;
  /** Folder the build runs in. */
  cwd: string;
  /**
   * The folder the run was started in, when the build runs elsewhere: `mvn` started below a
   * Maven project's folder without a `pom.xml` of its own runs where the nearest one is.
   */
  movedFrom?: string;
}

const WRAPPERS: Record<Exclude<ToolKind, 'command'>, { posix: string; windows: string }> = {
  gradle: { posix: 'gradlew', windows: 'gradlew.bat' },
  mvn: { posix: 'mvnw', windows: 'mvnw.cmd' },
};

/** Options for {@link resolveBuildCommand}. */
export interface ResolveOptions {
  cwd: string;
  /** `process.platform`; a parameter so Windows resolution is testable anywhere. */
  platform: NodeJS.Platform;
}

/**
 * Resolves `gradle`/`mvn` to the project's wrapper script, found in `cwd` or a parent up to
 * the checkout root (the first folder holding `.git`), else to the bare tool name. For
 * `command`, `args[0]` is the executable.
 * @throws Error when `command` has no executable.
 */
export function resolveBuildCommand(kind: ToolKind, args: string[], options: ResolveOptions): BuildCommand {
  if (kind === 'command') {
    const [file, ...rest] = args;
    if (file === undefined || file === '') throw new Error('no build command given after --');
    if (options.platform === 'win32' && isBatchFile(file)) assertBatchArguments(rest);
    return { kind, file, args: rest, wrapper: false, cwd: options.cwd };
  }
  // On Windows gradlew.bat, mvnw.cmd, gradle.bat and mvn.cmd are all batch files.
  if (options.platform === 'win32') assertBatchArguments(args);
  const names = WRAPPERS[kind];
  const name = options.platform === 'win32' ? names.windows : names.posix;
  const found = findUpward(options.cwd, name);
  const where = kind === 'mvn' ? mavenFolder(options.cwd, args) : { cwd: options.cwd };
  return { kind, file: found ?? kind, args, wrapper: found !== undefined, ...where };
}

/** Maven's options that name the POM, so that it is not looked for in the folder it runs in. */
const POM_OPTION = /^(-f|--file)(=|$)/;

/**
 * Where `mvn` runs: the folder of the run, unless it has no `pom.xml` (Maven would stop at once
 * with "there is no POM in this directory") and a folder above it, up to the checkout root, has
 * one; then the nearest such folder, as `cd` to the project would. A POM named with `-f` stays.
 */
function mavenFolder(cwd: string, args: readonly string[]): { cwd: string; movedFrom?: string } {
  const stays = args.some((arg) => POM_OPTION.test(arg)) || ['pom.xml', '.git'].some((name) => fs.existsSync(path.join(cwd, name)));
  const pom = stays || path.dirname(cwd) === cwd ? undefined : findUpward(path.dirname(cwd), 'pom.xml');
  return pom === undefined ? { cwd } : { cwd: path.dirname(pom), movedFrom: cwd };
}

/** The command as a user would type it, for messages (arguments with spaces or quotes are quoted). */
export function describeCommand(command: Pick<BuildCommand, 'file' | 'args'>): string {
  return [command.file, ...command.args].map(quoteForDisplay).join(' ');
}

function quoteForDisplay(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function findUpward(start: string, name: string): string | undefined {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, name);
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
    if (fs.existsSync(path.join(dir, '.git')) || path.dirname(dir) === dir) return undefined;
  }
}

/** Gradle short options that take a value attached to them (`-Pkey=value`), so their letters are not flags. */
const GRADLE_VALUE_OPTIONS = new Set(['P', 'D', 'I', 'c', 'b', 'g', 'p', 'x', 'M']);

/** `-t`, or a cluster of short flags holding it (`-qt`, `-tq`), but not `-Ptest=1`. */
function isContinuousCluster(arg: string): boolean {
  const match = /^-([A-Za-z]+)$/.exec(arg);
  if (match === null) return false;
  const letters = match[1]!;
  return !GRADLE_VALUE_OPTIONS.has(letters[0]!) && letters.includes('t');
}

/**
 * Finds a tool argument that would never let a build finish: Gradle's continuous mode
 * (`--continuous`, `-t`) never exits, so no `BUILD ok` could follow.
 * @returns the argument, or undefined when the arguments are fine.
 */
export function neverEndingArgument(command: BuildCommand): string | undefined {
  const isGradle = command.kind === 'gradle' || /(^|[\\/])gradle(w(\.bat)?)?$/.test(command.file);
  if (!isGradle) return undefined;
  return command.args.find((arg) => arg === '--continuous' || isContinuousCluster(arg));
}

function assertBatchArguments(args: readonly string[]): void {
  const problem = batchArgumentProblem(args);
  if (problem !== undefined) throw new Error(problem);
}
