/**
 * The counterexamples the truth fuzz (truth.test.ts) found, each shrunk and kept as a named
 * sequence: every one of them ended 0 with a proof while a JVM ran other bytes than a class it
 * covered, and failed here before the fix in the evidence rule that closed it. A hole suspected
 * but found closed is kept too, saying what in the rule closes it.
 */
import { describe, expect, it } from 'vitest';
import { play, type Scenario } from '../support/truth-fuzz.js';

/** One app: A, loading svc-a then shared and watching both, with a quick watcher. */
const ONE_APP: Scenario['world'] = {
  twoApps: false,
  jar: [],
  linked: false,
  aWatchesShared: true,
  bWatchesShared: false,
  extra: false,
  late: false,
  debounceMs: 20,
  watcherStartMs: 0,
  jvmBootMs: 20,
  linkedPackage: false,
  captureDelayMs: 5,
  copy: false,
};

describe('the truth fuzz: sequences it found, replayed', () => {
  it('a copy of a loaded class built into another watched folder is reloaded over it: the first copy is no longer live by its age', async () => {
    await play({ world: ONE_APP, ops: [{ op: 'build', edits: [{ at: 'shared', cls: 'A1', v: 0 }], exit: 0 }] });
  });

  it("an old jar first on the class path holds the class: a no-attempt answer for the folder's copy says nothing of what the JVM runs", async () => {
    await play({
      world: { ...ONE_APP, jar: ['S1'] },
      ops: [
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [], exit: 0 },
      ],
    });
  });

  it("a copy that kept an older mtime, made while the app's watcher was still arming, is its baseline unseen: no attempt says nothing of what the JVM runs", async () => {
    await play({
      world: { ...ONE_APP, watcherStartMs: 400 },
      ops: [
        { op: 'outside', edits: [{ at: 'shared', cls: 'S1', v: 1 }], keepTime: true },
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [], exit: 0 },
      ],
    });
  });

  // A hostile trial met these: the copy's old mtime is its stamp only until a write of the same bytes, or a touch,
  // moves it; the watcher's baseline stays the copy's bytes, which the JVM never loaded.
  it("bytes copied in with an older mtime while the app's watcher armed, then written again identically by the build: no attempt says nothing of what the JVM runs", async () => {
    await play({
      world: { ...ONE_APP, watcherStartMs: 400 },
      ops: [
        { op: 'outside', edits: [{ at: 'shared', cls: 'S1', v: 1 }], keepTime: true },
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [{ at: 'shared', cls: 'S1', v: 1 }], exit: 0 },
      ],
    });
  });

  it("bytes copied in with an older mtime while the app's watcher armed, then written again identically outside (a touch): no attempt says nothing of what the JVM runs", async () => {
    await play({
      world: { ...ONE_APP, watcherStartMs: 400 },
      ops: [
        { op: 'outside', edits: [{ at: 'shared', cls: 'S1', v: 1 }], keepTime: true },
        { op: 'wait', until: 'noticed' },
        { op: 'outside', edits: [{ at: 'shared', cls: 'S1', v: 1 }] },
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [], exit: 0 },
      ],
    });
  });

  // A hostile trial met these: a single ask of the loaded copy, answered before the agent's capture reloaded the class
  // from the copy this build changed, kept it live (no attempt yet, or the receipt of an earlier run's bytes).
  it('a class in two class output directories on the class path: the build changes the copy the JVM did not load, and the loaded one, unchanged since the start, is no longer live by its age', async () => {
    await play({
      world: { ...ONE_APP, copy: true, captureDelayMs: 300 },
      ops: [{ op: 'build', edits: [{ at: 'shared', cls: 'S1', v: 1 }], exit: 0 }],
    });
  });

  it('a class in two class output directories on the class path: a copy proven by its receipt is not live once the build changes the other copy', async () => {
    await play({
      world: { ...ONE_APP, copy: true, captureDelayMs: 300 },
      ops: [
        { op: 'build', edits: [{ at: 'shared', cls: 'S1', v: 1 }], exit: 0 },
        { op: 'build', edits: [{ at: 'svc-a', cls: 'S1', v: 2 }], exit: 0 },
        { op: 'build', edits: [], exit: 0 },
      ],
    });
  });

  it("a package folder that is a symbolic link inside a class output directory: the agent's watcher never sees a change through it, so no change there is proven", async () => {
    await play({
      world: { ...ONE_APP, linkedPackage: true },
      ops: [{ op: 'build', edits: [{ at: 'shared', cls: 'S1', v: 1 }], exit: 0 }],
    });
  });

  // The fuzz met this by chance (seed 20262206): a write just after the load, stamped by the coarse file clock no later
  // than a JVM start the fake took after its boot. Here the boot is long and the stamp set, so it does not hang on timing:
  // the JVM's start must be its process's, before the boot (agent FileWatcher JVM_START_MILLIS, prepopulateContentHashes).
  it("class files written just after the JVM loaded its classes, while the watcher arms, are newer than the JVM's start: its start-up dispatch reloads them, none is baselined unseen", async () => {
    const { proven } = await play({
      world: { ...ONE_APP, watcherStartMs: 400, jvmBootMs: 200 },
      ops: [
        {
          op: 'outside',
          edits: [
            { at: 'svc-a', cls: 'A1', v: 1 },
            { at: 'shared', cls: 'S1', v: 1 },
          ],
          loadStamp: 'a',
        },
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [{ at: 'shared', cls: 'S2', v: 3 }], exit: 0 },
      ],
    });
    // The run is a ✔ the oracle checked, not a run that proved nothing.
    expect(proven).toBe(1);
  });

  // A hostile trial suspected this, and it held without a change: the files' old stamps say their bytes are there since
  // before the start, but the folder holding them came after it, and the watcher, arming later, took them as its
  // baseline without a reload. The folder renamed into place has a ctime after the start, so its history is not whole
  // (history.ts) and no `not_observed` reads as no attempt (evidence.ts `receipts-bounded`); with a record from before
  // the swap, the file's bytes are not the row's (`no-record`). Once the watcher runs, a folder moved in is registered
  // and its files dispatched by their bytes, whatever their mtime (agent FileWatcher.enqueueExistingFiles): a receipt.
  it("a package folder prepared before the app started, renamed into place while its watcher armed: its files' old stamps say nothing of what the JVM loaded", async () => {
    await play({
      world: { ...ONE_APP, watcherStartMs: 400 },
      ops: [
        { op: 'swap-package', at: 'shared' },
        { op: 'wait', until: 'noticed' },
        { op: 'build', edits: [], exit: 0 },
      ],
    });
  });
});
