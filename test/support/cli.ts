/**
 * Runs the real CLI binary (`bin/reclazz-build.cjs`, built into dist/ by `npm test`) as a user
 * would, with colours off and CI on so output is plain and stable.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import { execa, type ResultPromise } from 'execa';

/** Absolute path of the CLI shim. */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/reclazz-build.cjs');

/** What a finished CLI run printed and how it exited. */
export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options for {@link runCli}. */
export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Kill the CLI after this many ms (default 60000). */
  timeoutMs?: number;
  /** Run as an unprivileged user (nobody) when the tests run as root. */
  unprivileged?: boolean;
}

/** The code cache of the CLI runs of the tests: theirs, not the user's ~/.cache/reclazz-build (removed after the run: global-setup.ts). */
export const TEST_CODE_CACHE_DIR = path.join(os.tmpdir(), `reclazz-test-code-cache-${process.getuid?.() ?? 'user'}`);

/** The environment a CLI run gets: ours without reclazz variables, plus plain output. */
export function cliEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    ...process.env,
    RECLAZZ_SAFE_BUILD_ACTIVE: undefined,
    RECLAZZ_PORT: undefined,
    RECLAZZ_PORT_FILE: undefined,
    RECLAZZ_CODE_CACHE: undefined,
    RECLAZZ_CODE_CACHE_DIR: TEST_CODE_CACHE_DIR,
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    CI: 'true',
    ...extra,
  };
}

/** Starts the CLI without waiting (for signal tests). */
export function startCli(args: string[], options: CliOptions): ResultPromise<{ reject: false }> {
  // As root, `unprivileged` runs it as nobody (setpriv), for what only permissions can show.
  const asNobody = options.unprivileged === true && process.getuid?.() === 0;
  const [file, ...prefix] = asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'node'] : ['node'];
  return execa(file!, [...prefix, asNobody ? binForNobody() : BIN, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 60_000,
  }) as unknown as ResultPromise<{ reject: false }>;
}

/** The `--json` result line of a finished run (its last line on stdout). */
export function jsonResult(run: CliRun): { reason: string; exitCode: number; durationMs: number } & Record<string, unknown> {
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

/** Runs the CLI to its end. */
export async function runCli(args: string[], options: CliOptions): Promise<CliRun> {
  const result = await startCli(args, options);
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The temp folders {@link tempDir} made in this test file. */
const created: string[] = [];

let nobodysBin: string | undefined;

/**
 * A copy of the built CLI that nobody can reach: the checkout may sit in a folder only root may
 * enter (`mktemp -d` makes it 0700). The bundle needs nothing but these files.
 */
function binForNobody(): string {
  if (nobodysBin === undefined || !fs.existsSync(nobodysBin)) {
    const root = tempDir('reclazz-test-cli-');
    const checkout = path.resolve(path.dirname(BIN), '..');
    for (const file of ['package.json', 'bin/reclazz-build.cjs', 'dist/launch.cjs', 'dist/cli.cjs']) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true, mode: 0o755 });
      fs.copyFileSync(path.join(checkout, file), path.join(root, file));
    }
    fs.chmodSync(root, 0o755);
    nobodysBin = path.join(root, 'bin', 'reclazz-build.cjs');
  }
  return nobodysBin;
}

/** A fresh temp folder, removed after the test file (setup.ts). */
export function tempDir(prefix = 'reclazz-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every folder {@link tempDir} made so far (whatever is in them, whoever made it). */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Writes a fake class file (any bytes) below `classesDir` for a binary name like `com.acme.Foo$Bar`. */
export function writeClass(classesDir: string, className: string, bytes: string | Buffer): string {
  const file = path.join(classesDir, ...className.split('.')) + '.class';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, bytes);
  return file;
}

/** Quotes `word` for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `shellCommand` in a pseudo-terminal (util-linux `script`): stdin, stdout and stderr of
 * the command are a terminal, and everything it writes to them comes back in `output`, with
 * the terminal's `\r\n` line ends. `CI` is unset unless `env` sets it.
 */
export async function runInTerminal(shellCommand: string, options: CliOptions): Promise<{ exitCode: number; output: string }> {
  const result = await execa('script', ['-qec', shellCommand, '/dev/null'], {
    cwd: options.cwd,
    env: cliEnv({ CI: undefined, NO_COLOR: undefined, TERM: 'xterm-256color', ...options.env }),
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 60_000,
  });
  return { exitCode: result.exitCode ?? -1, output: String(result.stdout) };
}

/** The shell command that runs the CLI with `args`. */
export function cliCommand(args: string[]): string {
  return ['node', BIN, ...args].map(shellQuote).join(' ');
}
