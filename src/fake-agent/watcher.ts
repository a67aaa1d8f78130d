/**
 * The agent's own file watcher (protocol.md, "Without a hold the agent reloads on its own"):
 * changes in a watched directory that no build hold covers are captured after a debounce,
 * with no BUILD signal at all. Polls, so that it behaves the same on every platform.
 */
import type { ClassFile } from './capture.js';

/** What the watcher needs from the agent. Durations in ms. */
export interface WatcherHooks {
  /** Quiet time after the last seen change before the capture (the agent's default: 500). */
  debounceMs: number;
  /** How often the watched directories are looked at. */
  pollMs: number;
  /** Class files whose bytes differ from those last admitted; throws on read errors. */
  changedFiles(): ClassFile[];
  /** True while a capture may run on its own: wired, no hold, not paused, none scheduled. */
  mayCapture(): boolean;
  /** Run a capture now. */
  capture(): void;
}

/** A running watcher; stop() ends its polling. */
export interface Watcher {
  stop(): void;
}

/** Start polling; the timer never keeps the process alive. */
export function startWatcher(hooks: WatcherHooks): Watcher {
  let seen = '';
  let quietSinceMs = 0;
  const poll = (): void => {
    let changed: ClassFile[];
    try {
      changed = hooks.changedFiles();
    } catch {
      return; // a file vanished mid-scan: look again next time
    }
    const now = Date.now();
    const signature = changed.map((file) => `${file.path}\0${file.sha256}`).sort().join('\n');
    if (signature !== seen) {
      seen = signature;
      quietSinceMs = now;
      return;
    }
    if (changed.length > 0 && now - quietSinceMs >= hooks.debounceMs && hooks.mayCapture()) {
      hooks.capture();
      seen = '';
    }
  };
  const timer = setInterval(poll, hooks.pollMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
