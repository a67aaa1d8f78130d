/** agent/reports.ts: why a held capture failed, read from the agent's ERROR (agent ReloadQueue.capture and acceptBuild, FileWatcher.scanNow). */
import { describe, expect, it } from 'vitest';
import { keptHoldCause } from '../../src/agent/reports.js';

describe('keptHoldCause', () => {
  it('a file the capture could not read: its path, as the agent wrote it', () => {
    expect(
      keptHoldCause('Failed to read class file /p/target/classes/a/B$1.class: NoSuchFileException: /p/target/classes/a/B$1.class'),
    ).toEqual({
      kind: 'unreadable-file',
      file: '/p/target/classes/a/B$1.class',
    });
  });

  it("a scan that did not finish: the watcher starting or stopped, whatever follows the agent's words", () => {
    const message =
      'Accepting build output failed: IllegalStateException: Build scan did not finish; build remains held (caused by TimeoutException)';
    expect(keptHoldCause(message)).toEqual({ kind: 'scan-unfinished' });
  });

  it('anything else is no kept hold: an unheld scan, another failure, a look-alike inside another message', () => {
    expect(
      keptHoldCause('Scanning build output failed: IllegalStateException: Build scan did not finish; build remains held'),
    ).toBeUndefined();
    expect(keptHoldCause('FileWatcher error: IOException: User limit of inotify watches reached')).toBeUndefined();
    expect(keptHoldCause('x Accepting build output failed: IllegalStateException: Build scan did not finish')).toBeUndefined();
  });
});
