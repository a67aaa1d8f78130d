/**
 * Running a Windows batch file (`gradlew.bat`, `mvnw.cmd`, `mvn.cmd`...) with every argument
 * intact. cmd.exe parses the arguments twice (its own line, then the script's `%*`), and the `\"`
 * quoting of cross-spawn lets an `&` after a quote escape (BatBadBut, CVE-2024-24576). So the
 * cmd.exe line is written here, by the rule of Rust's `make_bat_command_line`: quote any argument
 * that is empty, ends in `\`, holds a control character, or holds an ASCII character outside
 * letters, digits and `#$*+-./:?@\_` (other non-ASCII characters need no quotes);
 * double each `"` (and the backslashes before it or the closing quote); write `%` as `%%cd:~,%`
 * (an empty substring, so no `%name%` forms); refuse CR, LF and NUL. The line is
 * `cmd.exe /d /e:ON /v:OFF /s /c ""<script>" <args>"`: no AutoRun, extensions on (for the
 * substring), no delayed `!` expansion, `/s` strips the outer quotes.
 */

/** True for a file that Windows runs through cmd.exe (`.bat`, `.cmd`, any case). */
export function isBatchFile(file: string): boolean {
  return /\.(bat|cmd)$/i.test(file);
}

/** ASCII characters that need no quotes (besides letters and digits). */
const UNQUOTED = '#$*+-./:?@\\_';

/** Why `args` cannot be passed to a batch file, or undefined when they can. */
export function batchArgumentProblem(args: readonly string[]): string | undefined {
  const bad = args.find((arg) => /[\r\n\0]/.test(arg));
  return bad === undefined
    ? undefined
    : `an argument holds a line break or NUL, which cannot be passed to a Windows batch file: ${JSON.stringify(bad)}`;
}

/**
 * One argument for a batch file's command line (see the module comment for the rule).
 * @internal for its tests
 */
export function quoteBatchArgument(arg: string): string {
  const quote =
    arg === '' ||
    arg.endsWith('\\') ||
    [...arg].some((ch) => {
      const code = ch.codePointAt(0)!;
      const control = code < 0x20 || (code >= 0x7f && code <= 0x9f);
      return control || (code < 0x80 && !/[A-Za-z0-9]/.test(ch) && !UNQUOTED.includes(ch));
    });
  let out = quote ? '"' : '';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes += 1;
      continue;
    }
    if (ch === '"') {
      out += '\\'.repeat(backslashes * 2) + '""';
    } else {
      out += '\\'.repeat(backslashes) + (ch === '%' ? '%%cd:~,%' : ch);
    }
    backslashes = 0;
  }
  out += '\\'.repeat(quote ? backslashes * 2 : backslashes);
  return quote ? `${out}"` : out;
}

/** What to spawn: the file, its arguments, and whether they are already one verbatim command line. */
export interface SpawnPlan {
  file: string;
  args: string[];
  /** True: Node must pass `args` unquoted (child_process `windowsVerbatimArguments`). */
  windowsVerbatimArguments: boolean;
}

/**
 * How to start `file` with `args` on `platform`: a batch file on Windows runs through `comspec`
 * (cmd.exe) with a line written by {@link quoteBatchArgument}; anything else is spawned as it is.
 * @param file the executable, resolved (a batch file must be recognisable by its extension).
 * @throws Error for a script path holding `"`, or an argument {@link batchArgumentProblem} refuses.
 */
export function planSpawn(file: string, args: readonly string[], platform: NodeJS.Platform, comspec = 'cmd.exe'): SpawnPlan {
  if (platform !== 'win32' || !isBatchFile(file)) return { file, args: [...args], windowsVerbatimArguments: false };
  const problem = batchArgumentProblem(args);
  if (problem !== undefined) throw new Error(problem);
  if (file.includes('"')) throw new Error(`a Windows path cannot hold a double quote: ${file}`);
  const script = `"${file.replace(/%/g, '%%cd:~,%')}"`;
  const line = [script, ...args.map(quoteBatchArgument)].join(' ');
  return { file: comspec, args: ['/d', '/e:ON', '/v:OFF', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
}
