/**
 * The real process as a session's host: its working folder, environment, platform, clock,
 * terminal, signalling and process facts. The one place the core's rooms get `process` from.
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
