/**
 * Running a Windows batch file (`gradlew.bat`, `mvnw.cmd`, or `gradle.bat`/`mvn.cmd` from PATH)
 * with every argument intact: spaces, quotes, `%`, `^`, `&`, `|`, `<`, `>`, `(`, `)`, `!`.
 *
 * Windows cannot start a batch file directly: cmd.exe reads one command line and hands the
 * arguments to the script, whose `%*` line cmd.exe parses a second time when it forwards them
 * to java. execa 9 leaves the line to cross-spawn, which quotes an embedded `"` as `\"` and
 * protects the rest with `^`. That survives the first parse but not the script's `%*`: cmd.exe
 * does not know `\"`, so the quote flips its quote state and an `&` or `|` after it becomes a
 * command separator (the BatBadBut class of bug, CVE-2024-24576). So reclazz-build writes the
 * cmd.exe line itself and starts cmd.exe with it verbatim, by the rule the Rust standard
 * library adopted for batch files after CVE-2024-24576 (`make_bat_command_line` in
 * `std/src/sys/.../windows/args.rs`):
 *
 * - an argument that is empty, ends in `\`, or holds any ASCII character other than letters,
 *   digits and `#$*+-./:?@\_` (or any control character) is put in double quotes: inside quotes
 *   cmd.exe takes `& | < > ( ) ^` as text, in both parses;
 * - an embedded `"` is doubled: `""` toggles cmd.exe's quote state twice, so nothing is ever
 *   left outside a quoted region, and the C runtime (java's launcher included) reads `""` inside
 *   quotes as one `"`; backslashes before a `"` or before the closing quote are doubled, other
 *   backslashes are literal (the C runtime's rule);
 * - `%` is written `%%cd:~,%`: `%cd:~,%` is an empty substring of the always-defined `cd`
 *   variable, so it expands to nothing and no `%name%` can form for cmd.exe to expand; one `%`
 *   is left;
 * - CR, LF and NUL cannot reach a batch file (cmd.exe ends the command at a line break): such
 *   an argument is refused before anything runs.
 *
 * The line is `cmd.exe /d /e:ON /v:OFF /s /c ""<script>" <args>"`: no AutoRun commands,
 * command extensions on (the `%cd:~,%` substring needs them), delayed `!` expansion off, and
 * `/s` strips exactly the outer pair of quotes.
 */

/** True for a file that Windows runs through cmd.exe (`.bat`, `.cmd`, any case). */
export function isBatchFile(file: string): boolean {
  return /\.(bat|cmd)$/i.test(file);
}

/** ASCII characters that need no quotes (besides letters and digits). */
const UNQUOTED = '#$*+-./:?@\\_';

/**
 * Why `args` cannot be passed to a batch file, or undefined when they can.
 */
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
 * How to start `file` with `args` on `platform`. Anything but a batch file on Windows is
 * spawned as it is; a batch file on Windows runs through `comspec` (cmd.exe) with a command line
 * written by {@link quoteBatchArgument}.
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
