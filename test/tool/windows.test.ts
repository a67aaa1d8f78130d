/**
 * Windows batch files, simulated on any platform: which wrapper script is chosen, and the
 * cmd.exe command line that carries arguments with spaces, quotes, %, ^ and friends intact.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveBuildCommand } from '../../src/tool/resolve.js';
import { planSpawn, quoteBatchArgument } from '../../src/tool/windows.js';
import { tempDir } from '../support/cli.js';

/**
 * What a batch file's `%*` hands on, as java's launcher (the C runtime rules) splits it:
 * `/s /c` strips the outer quotes, the first token is the script, and `%%cd:~,%` leaves one `%`.
 */
function argvSeenByJava(cmdArgs: string[]): string[] {
  const line = cmdArgs
    .at(-1)!
    .slice(1, -1)
    .replace(/%%cd:~,%/g, '%');
  return msvcrtArgv(line).slice(1);
}

/** CommandLineToArgvW / MSVC runtime (2008+) splitting, `""` inside quotes being one `"`. */
function msvcrtArgv(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i += 1;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
      if (line[i] === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n += 1;
          i += 1;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) {
            arg += '"';
            i += 1;
          }
        } else arg += '\\'.repeat(n);
      } else if (line[i] === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
        } else {
          quoted = !quoted;
          i += 1;
        }
      } else {
        arg += line[i];
        i += 1;
      }
    }
    args.push(arg);
  }
  return args;
}

/** The characters cmd.exe would act on outside a quoted region of `line` (quotes toggle). */
function exposedMetacharacters(line: string): string {
  let quoted = false;
  let exposed = '';
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && '&|<>()^!'.includes(ch)) exposed += ch;
  }
  return exposed;
}

const HARD = [
  'clean',
  '-Pmsg=hello world',
  '-Pq="quoted"',
  'a"b&calc',
  '-Ppct=%PATH%',
  '100%',
  '%OS%%CD%',
  '-Pcaret=a^b',
  'x|y<z>w',
  '(group)',
  'wow!',
  'C:\\dir with space\\',
  'back\\"slash',
  '',
  'café',
];

describe('the cmd.exe line for a batch file (platform win32)', () => {
  const script = 'C:\\Users\\Jo Doe\\proj\\gradlew.bat';

  it('runs cmd.exe verbatim with /d /e:ON /v:OFF /s /c and the script in quotes', () => {
    const plan = planSpawn(script, ['clean', 'build'], 'win32', 'C:\\Windows\\system32\\cmd.exe');
    expect(plan).toEqual({
      file: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/e:ON', '/v:OFF', '/s', '/c', `""${script}" clean build"`],
      windowsVerbatimArguments: true,
    });
  });

  it('quotes by the rule Rust std uses for batch files', () => {
    expect(quoteBatchArgument('compileJava')).toBe('compileJava');
    expect(quoteBatchArgument('-Dx=1')).toBe('"-Dx=1"');
    expect(quoteBatchArgument('hello world')).toBe('"hello world"');
    expect(quoteBatchArgument('say "hi"')).toBe('"say ""hi"""');
    expect(quoteBatchArgument('%PATH%')).toBe('"%%cd:~,%PATH%%cd:~,%"');
    expect(quoteBatchArgument('a^b')).toBe('"a^b"');
    expect(quoteBatchArgument('C:\\dir\\')).toBe('"C:\\dir\\\\"');
    expect(quoteBatchArgument('C:\\dir\\x')).toBe('C:\\dir\\x');
    expect(quoteBatchArgument('')).toBe('""');
  });

  it('never leaves a metacharacter outside quotes, and java gets every argument back intact', () => {
    const plan = planSpawn(script, HARD, 'win32');
    // `/s /c` strips the outer pair of quotes; what is left is what cmd.exe (and the %* line) parse.
    expect(exposedMetacharacters(plan.args.at(-1)!.slice(1, -1))).toBe('');
    expect(argvSeenByJava(plan.args)).toEqual(HARD);
    for (const arg of HARD) expect(argvSeenByJava(planSpawn('mvnw.cmd', [arg], 'win32').args)).toEqual([arg]);
  });

  it('guards a % in the script path, and refuses line breaks', () => {
    expect(planSpawn('C:\\dev%HOME%\\mvnw.cmd', [], 'win32').args.at(-1)).toBe('""C:\\dev%%cd:~,%HOME%%cd:~,%\\mvnw.cmd""');
    expect(() => planSpawn(script, ['a\nb'], 'win32')).toThrow(/line break or NUL/);
  });

  it('leaves everything else alone: an .exe on Windows, any file elsewhere', () => {
    expect(planSpawn('C:\\tools\\make.exe', ['a b'], 'win32')).toEqual({
      file: 'C:\\tools\\make.exe',
      args: ['a b'],
      windowsVerbatimArguments: false,
    });
    expect(planSpawn('/proj/gradlew.bat', ['%x%'], 'linux')).toEqual({
      file: '/proj/gradlew.bat',
      args: ['%x%'],
      windowsVerbatimArguments: false,
    });
  });
});

describe('wrapper resolution by platform', () => {
  function checkout(): string {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, '.git'));
    for (const name of ['gradlew', 'gradlew.bat', 'mvnw', 'mvnw.cmd']) fs.writeFileSync(path.join(dir, name), '');
    fs.mkdirSync(path.join(dir, 'app'));
    return dir;
  }

  it('picks gradlew.bat and mvnw.cmd on win32, gradlew and mvnw elsewhere, from a subfolder too', () => {
    const dir = checkout();
    const cwd = path.join(dir, 'app');
    expect(resolveBuildCommand('gradle', ['classes'], { cwd, platform: 'win32' })).toMatchObject({
      file: path.join(dir, 'gradlew.bat'),
      wrapper: true,
    });
    expect(resolveBuildCommand('mvn', ['compile'], { cwd, platform: 'win32' })).toMatchObject({
      file: path.join(dir, 'mvnw.cmd'),
      wrapper: true,
    });
    expect(resolveBuildCommand('gradle', [], { cwd, platform: 'linux' })).toMatchObject({ file: path.join(dir, 'gradlew'), wrapper: true });
    expect(resolveBuildCommand('mvn', [], { cwd, platform: 'darwin' })).toMatchObject({ file: path.join(dir, 'mvnw'), wrapper: true });
  });

  it('refuses, as a usage error, arguments a batch file cannot receive on win32 only', () => {
    const dir = checkout();
    expect(() => resolveBuildCommand('gradle', ['-Pmsg=a\nb'], { cwd: dir, platform: 'win32' })).toThrow(/line break/);
    expect(() => resolveBuildCommand('command', ['build.cmd', 'a\rb'], { cwd: dir, platform: 'win32' })).toThrow(/line break/);
    expect(resolveBuildCommand('gradle', ['-Pmsg=a\nb'], { cwd: dir, platform: 'linux' }).args).toEqual(['-Pmsg=a\nb']);
  });
});
