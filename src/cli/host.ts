/**
 * The real process as a session's host: its working folder, environment, platform, clock,
 * terminal, and signalling. The one place the core's rooms get `process` from.
 */
import type { Host } from '../session/options.js';

/** This process as a {@link Host}. */
export function processHost(): Host {
  return {
    cwd: process.cwd(),
    env: process.env,
    platform: process.platform,
    clock: { now: () => performance.now(), date: () => new Date() },
    sharesTerminal: process.stdin.isTTY === true,
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
      process.once('exit', listener);
      return () => process.off('exit', listener);
    },
  };
}
