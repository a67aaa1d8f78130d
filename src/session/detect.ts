/**
 * The last steps of a cycle, after `BUILD ok` was acknowledged: set the class files against the
 * record by the evidence rule (classes/evidence.ts), VERIFY what it says needs asking under one
 * deadline (proof.ts), and keep every row's evidence for the next cycle; and watch mode's stat pass.
 */
import path from 'node:path';
import { batchWideCause } from '../agent/reports.js';
import { askReload, observeAgentAfterLoss } from '../agent/requests.js';
import { saveHolding } from '../hold/owner.js';
import type { Outcome } from '../outcome/outcome.js';
import { type AgentView, classWatched, jvmPathsOf, watchCoverage } from '../classes/coverage.js';
import { type PathMapEntry, toAgent } from '../agent/path-map.js';
import { isDescriptorClassName } from '../agent/protocol.js';
import { type ClassIndex, sameStampAsRow } from '../classes/columns.js';
import { COARSE_CLOCK_MS, noticeMs, verdictOf } from '../classes/evidence.js';
import { type JvmPaths, Placement } from '../classes/placement.js';
import { jarRunOf } from '../classes/jar-run.js';
import { detectChanges, type Detection } from '../classes/snapshot.js';
import { afterBuildFacts, type FileFacts } from '../classes/file-facts.js';
import type { AppStart, BuildRun, ChangeSummary, ClassChange, ClassVerdict, NeverReloads } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import type { Warning } from '../outcome/events.js';
import { readClassIndex, writeClassIndex } from '../state/store.js';
import { autoCompiled, otherBytesEverywhere, verdictOutcome } from '../verify/verdict.js';
import { type BuildSession, type Cycle, end, saveAfterOk } from './options.js';
import { diagnoseFolders, type FolderAnswers, proveClasses } from './proof.js';
import { captureWatch } from './check.js';
import { classFolders, linkBetween, Pacer, statClassFile, UNREADABLE } from '../classes/scan.js';

/** What the steps before the build found, for the evidence rule. Times in epoch ms. */
export interface Before {
  /** The record before this build (classes/baseline.ts). */
  baseline: ClassIndex;
  /** Class output directories before the build. */
  dirs: string[];
  /** Those of them the baseline scanned now, and the folders that scan could not list. */
  scanned: string[];
  unseen: string[];
  /** Per folder of the record, whether its history is whole just before the build (classes/history.ts). */
  whole: ReadonlyMap<string, boolean>;
  /** When the BUILD started receipt came: a class file stamped before it was not written by this build. */
  holdAtMs: number;
  /** The hold was already ours when this cycle started (a failed build's output held for this one): its changes are this build's. */
  heldBefore: boolean;
  /** RELOAD status before the build showed nothing pending and no earlier hold (evidence.ts, kind `watcher-saw`). */
  quiet: { atMs: number } | undefined;
  /** When the app's JVM started (tool/proc.ts `findAppStart`). */
  appStart: AppStart;
  /** Class files not live by the record that had its stamp just before the build: since when they hold its bytes (classes/baseline.ts `steadyBefore`). */
  steady: ReadonlyMap<string, number>;
}

/**
 * Detects, verifies and records; the cycle's result.
 * @param dirs the class output directories after the build.
 * @param searchRoot where class output directories were looked for (named when there is none).
 */
export async function checkChanges(cycle: Cycle, build: BuildRun, before: Before, dirs: string[], searchRoot: string): Promise<RunResult> {
  const { session, options } = cycle;
  const warn = (warning: Warning) => session.emit({ type: 'warning', ...warning });
  if (dirs.length === 0) {
    warn({ kind: 'no-class-dirs', root: searchRoot });
    if (options.verify === false) return end(cycle, { reason: 'ok', proof: { kind: 'not-verified', changed: 0 } }, { build });
    return end(cycle, { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'no-class-dirs', searchRoot } }, { build });
  }
  // A folder that did not exist before the build: its files were written during it (new to the JVM only as history.ts shows).
  const fresh = dirs.filter((d) => !before.dirs.includes(d));
  // A stamp from before the hold (within the clock's coarseness) was not written by this build.
  const holdAtMs = before.heldBefore ? 0 : before.holdAtMs;
  // Watch mode: only the folders the class watch saw change, unless a full pass is due (watch/hints.ts).
  const folders = await options.changedFolders?.(dirs, before.scanned.length > 0 || fresh.length > 0);
  const scan = {
    judge: (file: FileFacts) => verdictOf(afterBuildFacts(file, holdAtMs)),
    history: { kind: 'after' as const, before: before.whole },
    scannedBeforeBuild: new Set([...before.scanned, ...fresh]),
    unseenBefore: before.unseen,
    resourcesSinceMs: before.holdAtMs - COARSE_CLOCK_MS,
    watched: jvmPathsOf(session.view, session.checkout).watched,
  };
  // Detection from the watch's hints (classes/hinted.ts) is a watch's alone: a build never loads it.
  const detected =
    folders === undefined
      ? await detectChanges(before.baseline, dirs, scan)
      : await (await import('../classes/hinted.js')).detectInFolders(before.baseline, dirs, folders, scan);
  if (detected.unreadable.length > 0) warn({ kind: 'unreadable', files: detected.unreadable });
  if (detected.unreadableDirs.length > 0) warn({ kind: 'unreadable-folders', folders: detected.unreadableDirs });
  // The next cycle's record: every row with the evidence this cycle found for it (proof.ts records what the answers gave).
  const scanned = Buffer.from(detected.index.evidence);
  const result = await verifyChanges(cycle, detected, dirs, build, before);
  if (detected.dirty || !scanned.equals(detected.index.evidence))
    saveAfterOk(session, () => writeClassIndex(session.state, detected.index));
  return result;
}

/**
 * Asks VERIFY what the rule says needs asking (proof.ts) and judges the cycle: every class file
 * live by evidence, or what was not proven, not checked, or not readable.
 */
async function verifyChanges(cycle: Cycle, detected: Detection, dirs: string[], build: BuildRun, before: Before): Promise<RunResult> {
  const { session, options } = cycle;
  const { changes, unreadable, unreadableDirs, resources } = detected;
  const notVerifiable = changes.changed.filter((c) => !c.verifiable);
  // package-info and module-info are never reloaded; any other name VERIFY refuses may be loaded code it cannot prove.
  const unprovable = notVerifiable.filter((c) => !isDescriptorClassName(c.className)).length;
  // A name VERIFY cannot take is listed only when this build changed it (it never reloads).
  const checks = changes.checks.filter((c) => c.verifiable);
  const summary: ChangeSummary = { ...changes, checks, notVerifiable, resources };
  // A class new to the JVM is asked once too: the agent may have failed to register it (proof.ts).
  const added = changes.added.filter((c) => c.verifiable);
  const asked = changes.changed.length - notVerifiable.length + checks.length + added.length;
  const counts = { changed: changes.changed.length, checks: checks.length, added: changes.added.length, removed: changes.removed.length };
  session.emit({ type: 'changes', ...counts, notVerifiable: notVerifiable.length, total: changes.total });
  warnNeverLive(session, jvmPathsOf(session.view, session.checkout), dirs, [...changes.changed, ...checks], added);
  const facts = { build, changes: summary };
  // An agent that compiles by itself loads its own bytes: nothing the build wrote is asked (75, never 0).
  if (session.view.autoCompile) return end(cycle, autoCompiled('options', asked), facts);
  if (options.verify === false) return end(cycle, { reason: 'ok', proof: { kind: 'not-verified', changed: asked } }, facts);
  const unread = { unreadable: unreadable.length, folders: unreadableDirs.length };
  if (changes.total === 0 && unread.folders === 0) {
    const shortfall = { kind: 'no-class-files' as const, dirs: dirs.length };
    return end(cycle, { reason: 'verify-incomplete', applied: 0, total: 0, shortfall }, facts);
  }
  if (asked === 0) return end(cycle, await keptHold(cycle, nothingAsked(unread, unprovable, notVerifiable)), facts);
  const { watch, never } = await watchingOf(session, [...changes.changed, ...checks], dirs);
  const shown = shownWatched(session, before.appStart, dirs, watch);
  const report = await proveClasses({
    connection: session.connection,
    sessionId: session.agent.sessionId,
    verifyTimeoutMs: options.verifyTimeoutMs,
    receiptTimeoutMs: session.timeoutMs,
    onProgress: (p) => session.emit({ type: 'verify-progress', ...p }),
    ...(session.signal === undefined ? {} : { signal: session.signal }),
    changes: { changed: changes.changed, checks, added },
    index: detected.index,
    watched: shown,
    refused: session.view.refused,
    noticeMs: noticeMs(session.view.debounceMs, session.host.platform),
    paths: jvmPathsOf(session.view, session.checkout),
    ...(before.appStart.kind === 'known' ? { start: { startMs: before.appStart.startMs, errorMs: before.appStart.errorMs } } : {}),
    agentPaths: session.view,
    sinceMs: before.holdAtMs,
    unwatched: never,
    watch: captureWatch(session.connection, {
      timeoutMs: session.timeoutMs,
      watcherStarting: session.doctor.watcherState !== 'watching',
      ...(cycle.readFailure === undefined ? {} : { readFailure: cycle.readFailure }),
      ...(session.signal === undefined ? {} : { signal: session.signal }),
    }),
    ...(before.quiet === undefined ? {} : { quiet: before.quiet }),
    steady: before.steady,
  });
  const { verdicts, checked, added: stayNew, ...verify } = report;
  const kept = { build, changes: { ...summary, added: stayNew } };
  warnBatchWide(session, verdicts);
  const lost = verdicts.some((v) => v.status === 'connection-lost');
  const found = lost ? await observeAgentAfterLoss(session.agent.port, session.agent.sessionId, session.timeoutMs) : undefined;
  // Every class asked is new and stays new: nothing that was loaded changed.
  if (verdicts.length === 0 && unread.unreadable + unread.folders === 0 && unprovable === 0)
    return end(
      cycle,
      await keptHold(cycle, { reason: 'ok', proof: { kind: 'nothing-to-prove', added: stayNew.length, ...skippedOf(notVerifiable) } }),
      kept,
    );
  const outcome = otherBytesEverywhere(verdicts)
    ? autoCompiled('receipts', verdicts.length)
    : verdictOutcome(report, {
        files: false,
        signal: session.signal,
        unreadable: unread.unreadable,
        unreadableDirs: unread.folders,
        checked,
        skipped: notVerifiable.length,
        unprovable,
        ...(found === undefined ? {} : { found }),
        ...neverReloaded(session.view, verdicts, dirs, watch),
      });
  return end(cycle, await keptHold(cycle, outcome), { ...kept, verify, verdicts });
}

/**
 * What the agent is known to do with each class file: watch it, never reload it (and why), or
 * unknown (coverage.ts); what nothing else decides, DIAGNOSE is asked, a folder at a time.
 */
async function watchingOf(session: BuildSession, changes: readonly ClassChange[], dirs: readonly string[]) {
  const { view } = session;
  const folders = await diagnoseUndecided(session, changes);
  const watch = (file: string) => classWatched(view, file) ?? folders.get(path.dirname(file)) ?? null;
  return { watch, never: neverReloadedBy(watch, dirs) };
}

/**
 * Why the agent never reloads a class file, by what `watch` (coverage.ts `classWatched`) says of
 * it: its folder (the one of `dirs` it lies in) is not watched, or its name is excluded; else undefined.
 */
export function neverReloadedBy(
  watch: (file: string) => ReturnType<typeof classWatched>,
  dirs: readonly string[],
): (file: string) => NeverReloads | undefined {
  return (file) => {
    const state = watch(file);
    if (state === false) return { kind: 'not-watched', dir: dirOf(file, dirs) ?? path.dirname(file) };
    return state !== null && state !== true ? { kind: 'excluded', pattern: state.excludedBy, fileName: path.basename(file) } : undefined;
  };
}

/**
 * Whether the folder of a class file is shown watched (classes/evidence.ts, kind `watcher-saw`): the
 * agent watches it (`watch`), and its class output directory has been at its path since the app
 * started (classes/placement.ts), so the agent found it there and its watch is on that folder.
 */
function shownWatched(
  session: BuildSession,
  appStart: AppStart,
  dirs: readonly string[],
  watch: (file: string) => ReturnType<typeof classWatched>,
): (file: string) => boolean {
  if (appStart.kind !== 'known') return () => false;
  const placement = new Placement({ startMs: appStart.startMs, errorMs: appStart.errorMs }, jvmPathsOf(session.view, session.checkout));
  return (file) => {
    const dir = dirOf(file, dirs) ?? path.dirname(file);
    // A folder through a symbolic link is never registered by the agent's watcher (scan.ts `linkBetween`).
    return watch(file) === true && placement.placed(dir) && linkBetween(dir, file) === undefined;
  };
}

/** The outcome when nothing needs asking: every class file live by the record, or what leaves that unproven. */
function nothingAsked(unread: { unreadable: number; folders: number }, unprovable: number, notVerifiable: readonly ClassChange[]): Outcome {
  const readable = unread.unreadable + unread.folders === 0;
  if (readable && unprovable === 0) return { reason: 'ok', proof: { kind: 'nothing-to-prove', ...skippedOf(notVerifiable) } };
  const shortfall = readable ? { kind: 'not-verifiable' as const, classes: unprovable } : { kind: 'unreadable' as const, ...unread };
  return { reason: 'verify-incomplete', applied: 0, total: 0, shortfall, noneChanged: true };
}

/**
 * `outcome`, unless the agent's capture failed (it could not read a held class file, or its scan did
 * not finish) and RELOAD status still shows the named hold: the agent kept it for our owner although
 * `ok` was acknowledged (protocol.md "What the agent's source shows"), so owner.json says so again and
 * the cycle ends naming the cause (75).
 */
async function keptHold(cycle: Cycle, outcome: Outcome): Promise<Outcome> {
  const { session } = cycle;
  const cause = cycle.readFailure?.();
  if (cause === undefined) return outcome;
  const state = await askReload(session.connection, 'status', session.timeoutMs, session.signal).catch(() => undefined);
  if (state?.buildHold !== 'named') return outcome;
  session.hold.keptAfterOk();
  saveAfterOk(session, () => saveHolding(cycle.record, session.host.clock.date()));
  const { applied, total } = outcome.reason === 'verify-incomplete' ? outcome : { applied: 0, total: 0 };
  return { reason: 'verify-incomplete', applied, total, shortfall: { kind: 'hold-kept', cause, owner: session.hold.owner } };
}

/**
 * Warns of what keeps classes to ask (`asked`, then `added`) in class output directories `dirs`
 * from going live: a directory the agent does not watch that holds one of `asked` (those changes
 * never reload), a symbolic link on the way to one, and a jar the JVM of `paths` loads one of
 * them from instead (classes/jar-run.ts).
 */
export function warnNeverLive(
  session: Pick<BuildSession, 'view' | 'emit'>,
  paths: JvmPaths,
  dirs: readonly string[],
  asked: readonly ClassChange[],
  added: readonly ClassChange[] = [],
): void {
  const changed = dirs.filter((dir) => asked.some((c) => c.verifiable && dirOf(c.path, [dir]) !== undefined));
  const watched = session.view.complete ? session.view.watched.map((w) => w.local) : undefined;
  for (const { dir } of watchCoverage(changed, session.view).filter((c) => c.watched === false)) {
    session.emit({ type: 'warning', kind: 'unwatched', dir, ...(watched === undefined ? {} : { watched }) });
  }
  const links = new Set(asked.flatMap((c) => linkBetween(dirOf(c.path, dirs) ?? path.dirname(c.path), c.path) ?? []));
  for (const link of links) session.emit({ type: 'warning', kind: 'linked-folder', link });
  const jarRun = jarRunOf(
    paths,
    [...asked, ...added].map((c) => c.path),
    dirs,
  );
  if (jarRun !== undefined) session.emit({ type: 'warning', kind: 'jar-run', run: jarRun });
}

/** DIAGNOSE's answers for the folders of the verifiable classes whose watching nothing else decides. */
async function diagnoseUndecided(session: BuildSession, changes: readonly ClassChange[]): Promise<FolderAnswers> {
  const { view } = session;
  const undecided = changes.filter((c) => c.verifiable && classWatched(view, c.path) === null);
  if (undecided.length === 0 || view.autoCompile || !session.doctor.verifySupported) return new Map();
  return diagnoseFolders(session.connection, undecided, view, session.timeoutMs, session.signal);
}

/** The changed class files VERIFY does not accept, as a proof counts them. */
function skippedOf(notVerifiable: readonly ClassChange[]): { skipped?: number } {
  return notVerifiable.length > 0 ? { skipped: notVerifiable.length } : {};
}

/** The class output directory of `dirs` that `file` lies in. */
function dirOf(file: string, dirs: readonly string[]): string | undefined {
  return dirs.find((dir) => file.startsWith(dir + path.sep));
}

/**
 * What the `not-watched` verdicts need for their advice: the unwatched class output directories
 * (with the `watchDirs=` value that adds them) and the `excludePatterns` that skip the others.
 */
function neverReloaded(
  view: AgentView,
  verdicts: readonly ClassVerdict[],
  dirs: readonly string[],
  watch: (file: string) => ReturnType<typeof classWatched>,
): { unwatched?: { dirs: string[]; watchDirs?: string; excludedBy?: string[]; unseen?: string[] } } {
  const never = verdicts.filter((v) => v.status === 'not-watched');
  if (never.length === 0) return {};
  const dirOfVerdict = (v: ClassVerdict) => dirOf(v.path, dirs) ?? path.dirname(v.path);
  const unwatched = [...new Set(never.filter((v) => watch(v.path) === false).map(dirOfVerdict))];
  const patterns = new Set<string>();
  const unseen = new Set<string>();
  for (const v of never) {
    const state = watch(v.path);
    if (state !== null && typeof state === 'object') patterns.add(state.excludedBy);
    else if (state !== false) unseen.add(dirOfVerdict(v));
  }
  const fixing = view.complete && unwatched.length > 0 ? { watchDirs: watchDirsFixing(view, unwatched, view.map) } : {};
  return {
    unwatched: {
      dirs: unwatched,
      ...fixing,
      ...(patterns.size > 0 ? { excludedBy: [...patterns] } : {}),
      ...(unseen.size > 0 ? { unseen: [...unseen] } : {}),
    },
  };
}

/**
 * The agent's `watchDirs=` value that adds `unwatched`: what it watches as it names them, then these
 * in its own paths, `;`-separated (AgentConfig). Only when all it watches is known.
 */
function watchDirsFixing(view: AgentView, unwatched: readonly string[], map: readonly PathMapEntry[]): string {
  return [...new Set([...view.watched.map((w) => w.reported), ...unwatched.map((dir) => toAgent(map, dir))])].join(';');
}

/** Names a batch-wide `unverified` as such, with its likely cause (agent/protocol.ts), once per cause. */
function warnBatchWide(session: BuildSession, verdicts: readonly ClassVerdict[]): void {
  const counts = new Map<'not-unique' | 'slow-client', number>();
  for (const v of verdicts) {
    const cause = v.status === 'unverified' ? batchWideCause(v.agentDetail ?? '') : undefined;
    if (cause !== undefined) counts.set(cause, (counts.get(cause) ?? 0) + 1);
  }
  for (const [cause, count] of counts) session.emit({ type: 'warning', kind: 'batch-unverified', count, cause });
}

/**
 * Watch mode's full stat pass between cycles (watch/hints.ts): the folders (absolute) below `dirs`
 * with a class file whose stamp is not the index's or that has no row, or none where a row is; every
 * folder without an index, and one that cannot be listed. One stat per file, no hashing: the next
 * cycle's detection (classes/snapshot.ts) decides. Never throws for the class folders.
 * @throws StateError when the state folder or the index is a symbolic link.
 */
export async function staleFolders(projectDir: string, dirs: readonly string[], warn: (message: string) => void): Promise<Set<string>> {
  const index = readClassIndex(projectDir, warn);
  const rowOf = new Map(index.paths.map((file, row) => [file, row]));
  const seen = new Uint8Array(index.paths.length);
  const stale = new Set<string>();
  const pacer = new Pacer();
  const unreadable: string[] = [];
  for (const dir of dirs) {
    for (const { folder, names } of classFolders(path.resolve(dir), unreadable)) {
      await pacer.turn();
      for (const name of names) {
        const file = folder + path.sep + name;
        const row = rowOf.get(file);
        if (row !== undefined) seen[row] = 1;
        const stat = statClassFile(file);
        if (stat === undefined) continue;
        if (row === undefined || index.gone[row] === 1 || stat === UNREADABLE || !sameStampAsRow(index, row, stat)) stale.add(folder);
      }
    }
  }
  for (const folder of unreadable) stale.add(folder);
  const scanned = dirs.map((dir) => path.resolve(dir));
  index.paths.forEach((file, row) => {
    const inScanned = scanned.some((dir) => file.startsWith(dir + path.sep));
    if (seen[row] === 0 && index.gone[row] === 0 && inScanned) stale.add(path.dirname(file));
  });
  return stale;
}
