/**
 * The stand-in for the application's JVM: a real idle process in the app's folder, so DOCTOR's
 * `pid` and `workingDirectory` (protocol.md, "DOCTOR") name a process a client can look up. Its
 * command line reads like a JVM's: `java -javaagent:<jar>=<options> -cp <class path> <main class>`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import type { JavaFacts } from './types.js';

/** Marker in the stand-in's command line, so a test can find leftovers with `ps`. */
export const STAND_IN_MARKER = 'reclazz-fake-jvm';

/** How long stop() waits for the stand-in to leave after its stdin closes, before SIGKILL. Milliseconds. */
const STOP_GRACE_MS = 2000;

// Both idle until their stdin closes: that happens on stop(), and also when the parent dies in
// any way (even SIGKILL), so a stand-in never outlives the fake agent that started it. A shell
// running cat starts in a millisecond; node (for Windows) takes about 100 ms. The JVM's words
// follow as the keep-alive's own arguments (`$0`... of the shell), which it ignores.
const POSIX_KEEP_ALIVE = ['/bin/sh', ['-c', 'cat >/dev/null; :']] as const;
const NODE_KEEP_ALIVE = [
  process.execPath,
  ['-e', "process.stdin.on('data',()=>{});process.stdin.on('end',()=>process.exit(0));process.stdin.on('error',()=>process.exit(0));"],
] as const;

/** The stand-in's main class, after which its marker arguments come as program arguments. */
const MAIN_CLASS = 'reclazz.fake.App';

/** Variables a JVM reads its options from: the stand-in has only those its {@link JvmLine} sets. */
const JVM_VARIABLES = ['JAVA_TOOL_OPTIONS', 'JDK_JAVA_OPTIONS', '_JAVA_OPTIONS', 'CLASSPATH'];

/** What the stand-in's command line and environment say, as a JVM's would. */
export interface JvmLine {
  /** JVM options before the main class (`-javaagent:...`, `-cp`, `<class path>`). */
  options: string[];
  /** Environment variables to set (e.g. `JAVA_TOOL_OPTIONS`). */
  env: Record<string, string>;
}

/** A running stand-in JVM. */
export interface StandIn {
  /** Its process id. */
  readonly pid: number;
  /** Its working directory as the process sees it (symbolic links resolved, as `user.dir` would be). */
  readonly cwd: string;
  /** End it (stdin closed, then SIGKILL after 2 s) and wait until it has exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start a stand-in in `cwd` (`/bin/sh` running `cat` from a pipe; on Windows node running a
 * keep-alive script) whose command line goes on with `java <jvm.options> reclazz.fake.App
 * reclazz-fake-jvm parent=<this pid>`. Resolves once the process exists. Rejects with an error
 * naming `cwd` when it is not a directory, or when the process cannot be started.
 */
export async function startStandIn(cwd: string, jvm: JvmLine = { options: [], env: {} }): Promise<StandIn> {
  let resolved: string;
  try {
    if (!statSync(cwd).isDirectory()) throw new Error('not a directory');
    resolved = realpathSync(cwd);
  } catch {
    throw new Error(`the app folder ${cwd} is not a directory; create it or pass another appDir (the stand-in JVM runs there)`);
  }
  // The stand-in is this process's child, as a JVM is its launcher's: it inherits the environment.
  // eslint-disable-next-line no-restricted-properties -- the fake agent stands in for another process
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // a keep-alive needs no preloaded modules
  for (const name of JVM_VARIABLES) delete env[name];
  Object.assign(env, jvm.env);
  const [command, keepAlive] = process.platform === 'win32' ? NODE_KEEP_ALIVE : POSIX_KEEP_ALIVE;
  const args = [...keepAlive, 'java', ...jvm.options, MAIN_CLASS, STAND_IN_MARKER, `parent=${process.pid}`];
  const child = spawn(command, args, {
    cwd: resolved,
    env,
    stdio: ['pipe', 'ignore', 'ignore'],
    windowsHide: true,
  });
  await new Promise<void>((resolveSpawn, rejectSpawn) => {
    child.once('spawn', resolveSpawn);
    child.once('error', (error) => rejectSpawn(new Error(`cannot start the stand-in JVM in ${cwd}: ${error.message}`)));
  });
  child.on('error', () => {
    /* after spawn: a failed write to stdin of an exited stand-in */
  });
  // Neither the process nor its stdin pipe may keep a test runner or the CLI alive.
  child.unref();
  unrefStdin(child);
  const exited = new Promise<void>((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit();
    else child.once('exit', () => resolveExit());
  });
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid as number,
    cwd: resolved,
    stop: () => (stopping ??= stopChild(child, exited)),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  child.ref(); // stop() is awaited: keep the loop alive until the exit is seen
  child.stdin?.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

function unrefStdin(child: ChildProcess): void {
  const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
  stdin?.unref?.();
}

/** How long `java -version` may take before the fake agent reports the Java as unknown. Milliseconds. */
const JAVA_VERSION_TIMEOUT_MS = 20_000;

let installed: Promise<JavaFacts> | undefined;

/**
 * The Java an app started here would run on: what `java -version` of the `java` on PATH says
 * (asked once per process), or `unknown` for each fact it does not say (no `java`, or an answer
 * of another shape). Never rejects.
 */
export function installedJava(): Promise<JavaFacts> {
  installed ??= new Promise((resolveFacts) => {
    execFile('java', ['-version'], { timeout: JAVA_VERSION_TIMEOUT_MS, windowsHide: true }, (_error, stdout, stderr) => {
      // `java -version` writes to stderr: `openjdk version "17.0.15" 2025-04-15`, the runtime, then `<VM name> (build ...)`.
      const text = `${stderr}\n${stdout}`;
      resolveFacts({
        version: /^\S+ version "([^"\s]+)"/m.exec(text)?.[1] ?? 'unknown',
        vmName: /^(\S.*? VM) \(build /m.exec(text)?.[1] ?? 'unknown',
      });
    });
  });
  return installed;
}
