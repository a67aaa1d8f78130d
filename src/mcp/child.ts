/**
 * One tool call as one run of the reclazz-build command line with `--json`, in a child process.
 *
 * Why a child process and not the library in this process:
 * - the same semantics as a terminal by construction: the call runs the very code, config
 *   loading, option parsing, run lock, hold, evidence, restart and exit status of the command
 *   line, so two calls for one checkout serialise on the run lock as two terminals do;
 * - cancelling is Ctrl-C: one SIGINT to the run, which sends BUILD failed, stops the build's
 *   processes and leaves the hold as after Ctrl-C, on the path the command line's own tests cover;
 * - stdout stays JSON-RPC only: the build (which inherits its stdin, stdout and stderr) and the
 *   run write to pipes of ours, and the build's stdin is /dev/null, never the client's messages;
 * - process-wide state stays apart: each run has its own working folder, exit hooks, signal
 *   handlers and memory, and a crash ends one call, not the server.
 * The cost is a start-up per call (about 0.1 s with the code cache), small beside a build.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { JsonLine } from '../report/schema.js';

/** A run of the command line. */
export interface CliCall {
  /** The node binary and the command line's script (`bin/reclazz-build.cjs`, the one this server came from). */
  node: string;
  cli: string;
  /** Its working folder (absolute): every relative path of the call resolves against it. */
  cwd: string;
  /** The words after `reclazz-build`, `--json` among them. */
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Aborted: the run is stopped as Ctrl-C stops it, with one SIGINT. */
  signal: AbortSignal;
  /** Each JSON line the run writes before its `result` line, as it comes. */
  onLine: (line: JsonLine) => void;
  /** Its stderr, as it comes: the run's human report and the build's own output (this server's log). */
  onLog: (chunk: Buffer) => void;
}

/** How a run ended. */
export interface CliEnd {
  /** Its exit status (128+N when a signal N ended it). */
  exitCode: number;
  /** Its `result` line, or undefined when it wrote none (it could not start, or was killed). */
  result: Record<string, unknown> | undefined;
}

/** Runs `call` to its end; never rejects (a run that cannot start ends with exit status 127 and no result). */
export function runCli(call: CliCall): Promise<CliEnd> {
  return new Promise((resolve) => {
    // Its own process group: a Ctrl-C at this server's terminal reaches it once, through us.
    // (Windows: a detached child gets a console window of its own, and a signal ends it at once.)
    const child = spawn(call.node, [call.cli, ...call.args], {
      cwd: call.cwd,
      env: call.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    let result: Record<string, unknown> | undefined;
    const decoder = new StringDecoder('utf8');
    let partial = '';
    const take = (line: string): void => {
      if (line.trim() === '') return;
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(line) as Record<string, unknown>;
      } catch {
        call.onLog(Buffer.from(`${line}\n`));
        return;
      }
      if (value.type === 'result') result = value;
      else call.onLine(value as JsonLine);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + decoder.write(chunk)).split('\n');
      partial = lines.pop()!;
      lines.forEach(take);
    });
    child.stderr.on('data', call.onLog);
    const stop = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    };
    call.signal.addEventListener('abort', stop, { once: true });
    child.once('error', (error) => {
      call.onLog(Buffer.from(`reclazz-build mcp: cannot start ${call.cli}: ${error.message}\n`));
    });
    child.once('close', (code, signal) => {
      call.signal.removeEventListener('abort', stop);
      take(partial + decoder.end());
      const signalled = signal === null ? undefined : 128 + os.constants.signals[signal];
      resolve({ exitCode: code ?? signalled ?? 127, result });
    });
  });
}
