/**
 * agent/reports.ts: why a held capture failed, read from the agent's ERROR (agent ReloadQueue.capture and acceptBuild,
 * FileWatcher.scanNow); DIAGNOSE's answer as agent ReloadDiagnostics.explain frames it.
 */
import { describe, expect, it } from 'vitest';
import { DiagnosisReader, keptHoldCause } from '../../src/agent/reports.js';

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

describe('DiagnosisReader', () => {
  const read = (lines: string[]) => {
    const reader = new DiagnosisReader();
    for (const line of lines) reader.read(line);
    return reader.diagnoses;
  };
  const loaded = 'Loaded and prepared by the agent, so a reload of it would be applied.';
  const notLoaded =
    'The JVM has not loaded this class yet, so there is nothing to reload. It will use the current code the first time it is used.';

  it("takes only the answer's sentences: INFO lines between them and after its last-attempt line are another's", () => {
    const said = read([
      'Reclazz diagnosis for a.B',
      'Build started; holding 3 class files until BUILD ok',
      'Compiled file: /p/a/B.class (last built 2s ago)',
      'DOCTOR_RESULT t1 {"status":"observed"}',
      loaded,
      'Last attempt 1s ago: failed (boom)',
      'Loaded 2 times, by different classloaders.',
      'Nothing is waiting on a restart.',
    ]);
    expect(said.get('a.B')).toEqual({
      files: ['/p/a/B.class'],
      loaded: true,
      words: ['Compiled file: /p/a/B.class (last built 2s ago)', loaded],
    });
  });

  it('without a class file the answer ends with its load state; each header starts the next answer', () => {
    const said = read([
      'Reclazz diagnosis for a.C',
      'No compiled .class file for this name under any watched directory.',
      'Either the build has not run, or this class is built somewhere Reclazz is not watching. Watched output directories: /p',
      notLoaded,
      loaded,
      'Reclazz diagnosis for a.D',
      'Compiled file: /p/a/D.class (last built 1s ago)',
      notLoaded,
      'Reclazz has not attempted a reload of this class.',
    ]);
    expect(said.get('a.C')).toMatchObject({ files: [], loaded: false });
    expect(said.get('a.C')!.words).toHaveLength(3);
    expect(said.get('a.D')).toEqual({
      files: ['/p/a/D.class'],
      loaded: false,
      words: ['Compiled file: /p/a/D.class (last built 1s ago)', notLoaded],
    });
  });
});
