/**
 * The real process as a session's host: its working folder, environment, platform, clock,
 * terminal, and signalling. The one place the core's rooms get `process` from.
 */
import type { Host } from '../session/options.js';
import { localHost } from '../tool/proc.js';

/**
 * What must run when this process exits (each running build's kill of its process group): one
 * `exit` listener for them all, however many builds a library user runs at once.
 */
const atExit = new Set<() => void>();

function runAtExit(): void {
  for (const listener of atExit) listener();
}

/** This process as a {@link Host}. */
export function processHost(): Host {
  return {
    cwd: process.cwd(),
    env: process.env,
    platform: process.platform,
    clock: { now: () => performance.now(), date: () => new Date() },
    sharesTerminal: process.stdin.isTTY === true,
    proc: localHost,
    kill: (pid, signal) => process.kill(pid, signal),
    pid: process.pid,
    isAlive: (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
    onExit: (listener) => {
      const wrapped = (): void => listener();
      if (atExit.size === 0) process.on('exit', runAtExit);
      atExit.add(wrapped);
      return () => {
        atExit.delete(wrapped);
        if (atExit.size === 0) process.off('exit', runAtExit);
      };
    },
  };
}

/**
 * Writing to stdout when its reader may have gone (`--json | head -1`): an EPIPE ends stdout
 * output quietly instead of crashing with a stack trace; listeners may stop their work.
 */

let broken = false;
const listeners = new Set<() => void>();

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (broken) return;
  broken = true;
  for (const listener of listeners) listener();
});

/** Writes `text` to stdout unless its reader has gone. */
export function writeStdout(text: string): void {
  if (!broken) process.stdout.write(text);
}

/** True once stdout's reader has gone. */
export function stdoutBroken(): boolean {
  return broken;
}

/** Calls `listener` once stdout's reader has gone; returns a function that removes it. */
export function onStdoutBroken(listener: () => void): () => void {
  if (broken) listener();
  listeners.add(listener);
  return () => listeners.delete(listener);
}
