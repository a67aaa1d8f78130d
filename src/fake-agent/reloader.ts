/**
 * What the "application" has loaded and the reload batches the agent runs on it, feeding the
 * VERIFY ledger (protocol.md, "VERIFY": receipts, running -> final status, not-loaded classes,
 * batch warnings; "Batch-wide verdicts").
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CachedHash, type ClassFile, type Hierarchy, readHierarchy, scanClassFiles, superclassChange } from './capture.js';
import { SessionCounts } from './doctor.js';
import { receiptText, RestartLedger, VerifyLedger } from './ledger.js';
import type { PathReporter } from './paths.js';
import type { FinalStatus, SuperclassChange } from './types.js';
import { RootWatches } from './watches.js';
import type { LoadedClasses } from './loaded.js';

/**
 * Detail of a class that was not loaded exactly once before its batch (new to the JVM, or loaded
 * by two class loaders), and of every class of a batch with ambiguous input (agent
 * ReloadVerification.java, exact; protocol.md, "Batch-wide verdicts").
 */
const NON_UNIQUE_DETAIL = 'Class was not uniquely loaded before the batch, or input class names were ambiguous';
/** The reason PENDING gives for a superclass change (agent reload/StructuralReloader.java, exact). */
const SUPERCLASS_REASON = 'superclass change not applied; restart required';

/** Settings and side-effect hooks of a {@link ClassReloader}. Durations in ms. */
export interface ReloaderOptions {
  /** Class file names the watcher skips (the agent's `excludePatterns`): never captured, pending or reloaded. */
  excluded?: ((fileName: string) => boolean) | undefined;
  /** Folders whose watch registration the OS refused: their class files are never seen. */
  refused?: readonly string[] | undefined;
  /** How long an admitted batch reads `running` before its final statuses. */
  reloadMs: number;
  /** Classes whose latest receipt the ledger keeps. */
  ledgerSize: number;
  /** Reuse a file's hash while its stamp is unchanged (see FakeAgentOptions.scanCache). */
  scanCache?: boolean;
  /** Final status of a loaded class's attempt; undefined -> applied. */
  verifyStatus?: ((className: string, sha256: string) => FinalStatus | undefined) | undefined;
  /** See FakeAgentOptions.restartRequired. */
  restartRequired?: ((className: string, sha256: string) => SuperclassChange | undefined) | undefined;
  /** See FakeAgentOptions.autoCompile: receipts carry the agent's own compiled bytes. */
  autoCompile?: boolean;
  /** See FakeAgentOptions.newBean. */
  newBean?: ((className: string) => 'registered' | 'refused' | undefined) | undefined;
  /** A class file's path as the agent reports it (VERIFY `source`). */
  reportPath: PathReporter;
  /** What the application's JVM has loaded and runs: a reload redefines a class it loaded, wherever from. */
  jvm: LoadedClasses;
  /** Run `run` after `ms` (cancelled when the agent stops or restarts). */
  later(ms: number, run: () => void): void;
  /** Broadcast one status event to every client. */
  broadcast(level: string, message: string): void;
}

/** One class of a reload batch. */
type Attempt = ClassFile;

/**
 * A class's attempt in a batch: its final status, its own detail, whether HEALTH counts it, and
 * what it does to the JVM: redefines the class with its bytes, in part, or not at all.
 */
interface Outcome {
  status: FinalStatus;
  detail?: string;
  counted: boolean;
  applies: 'bytes' | 'part' | 'none';
}

/** One admitted reload batch, open from admission until its statuses are final. */
interface Batch {
  number: number;
  attempts: Attempt[];
  /** Every file of the batch, two of one binary name included: the agent applies each (agent ReloadQueue.applyCaptured). */
  files: ClassFile[];
  /** Two files with one binary name: every class is `unverified`. */
  ambiguous: boolean;
  /** The first WARN or ERROR broadcast while the batch was open, as `LEVEL: message`. */
  warning?: string;
}

/**
 * The bytes the agent last admitted per class file, the classes loaded at (re)start, and the
 * ledger of reload receipts.
 */
export class ClassReloader {
  /** Latest receipt per class, answered by VERIFY and DIAGNOSE. */
  readonly ledger: VerifyLedger;
  /** What needs a restart in this session (PENDING). */
  readonly restarts = new RestartLedger();
  /** What was reloaded and failed since the (re)start, per class attempt (HEALTH). */
  counts = new SessionCounts();
  /** sha256 of the bytes last admitted, per absolute class file path. */
  private readonly known = new Map<string, string>();
  /** Hierarchy of the bytes last read per class file path. */
  private readonly hierarchies = new Map<string, { sha256: string; hierarchy: Hierarchy | null }>();
  private readonly open = new Set<Batch>();
  private batches = 0;
  /** The watched class output directories: those that existed when the application started, as the agent's watches follow them. */
  private readonly roots = new RootWatches();

  private readonly hashCache: Map<string, CachedHash> | undefined;

  constructor(private readonly options: ReloaderOptions) {
    this.hashCache = options.scanCache ? new Map() : undefined;
    this.ledger = new VerifyLedger(options.ledgerSize);
  }

  /**
   * An application (re)start watching `roots` (absolute, existing), its JVM started: the class
   * files there now are known (the watcher's baseline), excluded ones too; no receipts, no notes,
   * no open batch.
   */
  reset(roots: readonly string[]): void {
    this.roots.reset(roots);
    this.known.clear();
    this.ledger.clear();
    this.restarts.clear();
    this.counts = new SessionCounts();
    this.open.clear();
    for (const file of this.scan(true)) this.known.set(file.path, file.sha256);
  }

  /**
   * Class files whose bytes differ from the last admitted ones (new files included), without
   * the excluded ones unless `withExcluded` (the agent's start-up dispatch skips no name).
   * Throws on read errors.
   */
  changedFiles(withExcluded = false): ClassFile[] {
    return this.scan(withExcluded).filter((file) => this.known.get(file.path) !== file.sha256);
  }

  /**
   * The watcher arms (agent watcher/FileWatcher.java prepopulateContentHashes, then
   * dispatchClassesChangedDuringStartup): a class file whose mtime (whole ms) is no later than the
   * JVM's start `jvmStartMs` becomes its baseline with the bytes it has now, so one rewritten since
   * the start that kept an older mtime (`cp -p`, `rsync -a`, `tar x`) is never reloaded and the
   * JVM keeps the bytes it loaded; the others are dispatched: returned when their bytes changed
   * (excluded names too), and pending until admitted. Throws on read errors.
   */
  armWatcher(jvmStartMs: number): ClassFile[] {
    const files = this.scan(true);
    for (const file of files) if (Math.floor(statSync(file.path).mtimeMs) <= jvmStartMs) this.known.set(file.path, file.sha256);
    return files.filter((file) => this.known.get(file.path) !== file.sha256);
  }

  /** True when the application's JVM has loaded `className`. */
  isLoaded(className: string): boolean {
    return this.options.jvm.isLoaded(className);
  }

  /** Lets go of the watched folders (the application stops). */
  release(): void {
    this.roots.release();
  }

  /** Class files whose bytes the agent knows (HEALTH's "holding <n> files"). */
  get knownFiles(): number {
    return this.known.size;
  }

  /** Number of changed class files; 0 when the scan fails. */
  countChanged(): number {
    try {
      return this.changedFiles().length;
    } catch {
      return 0;
    }
  }

  /**
   * Note one broadcast event: a WARN or ERROR while a batch is open makes that whole batch
   * `unverified` (protocol.md, "A client that stops reading harms others").
   */
  noteEvent(level: string, message: string): void {
    if (level !== 'WARN' && level !== 'ERROR') return;
    for (const batch of this.open) batch.warning ??= receiptText(`${level}: ${message}`);
  }

  /**
   * Admit `changed` as one reload batch. Older receipts read from the same files are forgotten;
   * each class gets a `running` receipt for its new bytes now and its final status after
   * reloadMs. Two files with one binary name (the later one is attempted) make the input
   * ambiguous: every class is `unverified`.
   */
  admit(changed: ClassFile[]): void {
    if (changed.length === 0) return;
    let ambiguous = false;
    const byName = new Map<string, ClassFile>();
    for (const file of changed) {
      this.known.set(file.path, file.sha256);
      this.ledger.forgetSource(this.options.reportPath(file.path));
      if (byName.has(file.className)) ambiguous = true;
      byName.set(file.className, file);
    }
    const own = (file: ClassFile): ClassFile => (this.options.autoCompile === true ? { ...file, sha256: ownBytes(file.sha256) } : file);
    const batch: Batch = { number: ++this.batches, attempts: [...byName.values()].map(own), files: changed.map(own), ambiguous };
    for (const attempt of batch.attempts) {
      this.ledger.record(attempt.className, {
        sha256: attempt.sha256,
        status: 'running',
        source: this.options.reportPath(attempt.path),
        detail: 'reload batch has not completed',
        completedAt: '',
        batch: batch.number,
      });
    }
    this.open.add(batch);
    const startedMs = Date.now();
    this.options.later(this.options.reloadMs, () => this.complete(batch, Date.now() - startedMs));
  }

  /**
   * Apply the batch (its events are broadcast while it is still open), then record final
   * statuses: a class loaded once before is reloaded by `verifyStatus`, a superclass change
   * salvaged (WARN: the batch is unverified) or refused (failed); a class the application had not
   * loaded is a new class or bean (`newBean`), never applied; an ambiguous batch is unverified whole.
   */
  private complete(batch: Batch, elapsedMs: number): void {
    const outcomes = new Map<Attempt, Outcome>();
    for (const attempt of batch.attempts) outcomes.set(attempt, this.attempt(attempt, elapsedMs, batch.ambiguous));
    for (const attempt of batch.attempts) this.apply(attempt, outcomes.get(attempt)!.applies, batch.files);
    this.open.delete(batch);
    const completedAt = new Date().toISOString();
    const after: Array<[string, string]> = [];
    for (const attempt of batch.attempts) {
      const outcome = outcomes.get(attempt)!;
      let { status } = outcome;
      let detail = outcome.detail ?? `reloaded in ${elapsedMs}ms`;
      // Failed takes priority; an unverified detail is the batch's first warning before anything else.
      if (status === 'failed') after.push(['ERROR', `Reload failed for ${attempt.className} (${detail})`]);
      else if (batch.warning !== undefined) [status, detail] = ['unverified', batch.warning];
      // Counted per class attempt, as the agent's ReloadQueue reports each class of a batch to
      // SessionReport; a new bean's registration is not (it records its outcome without it).
      if (outcome.counted) {
        if (status === 'failed') this.counts.failed();
        else this.counts.reloaded(elapsedMs);
      }
      // A newer attempt (even with the same bytes), or a forgotten receipt, stays as it is.
      const current = this.ledger.get(attempt.className);
      if (current?.batch === batch.number && current.sha256 === attempt.sha256) {
        this.ledger.record(attempt.className, { ...current, status, detail, completedAt });
      }
    }
    for (const [level, message] of after) this.options.broadcast(level, message);
  }

  /**
   * What the JVM runs after the batch (agent ReloadQueue.applyCaptured hands every file of it to
   * the handler, two files of one class included, in an order of its own): a loaded class runs the
   * bytes it was redefined with, or bytes of no one file (applied in part, or one of several files
   * with different bytes); a failed redefinition changes nothing.
   */
  private apply(attempt: Attempt, applies: Outcome['applies'], files: readonly ClassFile[]): void {
    if (applies === 'none') return;
    const bytes = new Set(files.filter((file) => file.className === attempt.className).map((file) => file.sha256));
    const whole = applies === 'bytes' && bytes.size <= 1;
    this.options.jvm.redefine(attempt.className, whole ? attempt.sha256 : undefined, attempt.path);
  }

  /**
   * One class's attempt while its batch is open: its status, and its own detail when the
   * batch's first warning does not decide it (undefined: applied, or unverified by that warning).
   */
  private attempt(attempt: Attempt, elapsedMs: number, ambiguous: boolean): Outcome {
    const { className } = attempt;
    const loaded = this.options.jvm.isLoaded(className);
    // Ambiguous input: the receipts say so, yet the agent still redefines each loaded class (ReloadVerification.applyFiles).
    if (ambiguous) return { status: 'unverified', detail: NON_UNIQUE_DETAIL, counted: true, applies: loaded ? 'bytes' : 'none' };
    if (!loaded) return this.newClass(attempt);
    const status = this.options.verifyStatus?.(className, attempt.sha256) ?? 'applied';
    const change = this.superclassChangeOf(attempt);
    if (change !== undefined) {
      this.restarts.note(className, SUPERCLASS_REASON);
      const refused = { status: 'failed', counted: true, applies: 'none' } as const;
      if (change.refused !== undefined) return { ...refused, detail: receiptText(refusedSuperclass(className, change)) };
      // The StructuralReloader's warning: the batch's first WARN becomes every class's detail.
      this.options.broadcast('WARN', salvagedSuperclass(className, change));
      return status === 'failed' ? refused : { status: 'unverified', counted: true, applies: 'part' };
    }
    if (status === 'failed') return { status, detail: 'the reload attempt reported failure (fake)', counted: true, applies: 'none' };
    if (status === 'unverified') this.options.broadcast('WARN', `Reload of ${className} finished with a warning (fake)`);
    else this.options.broadcast('RELOAD', `Reloaded ${className} (${elapsedMs}ms)`);
    return { status, counted: true, applies: 'bytes' };
  }

  /** A class the application had not loaded: a new bean registered or refused, or a plain new class the JVM loads on first use. */
  private newClass(attempt: Attempt): Outcome {
    const { className } = attempt;
    const bean = this.options.newBean?.(className);
    if (bean === 'refused') {
      return { status: 'failed', detail: `New bean ${className} was not registered: the context refused it (fake)`, counted: false, applies: 'none' };
    }
    if (bean === 'registered') {
      this.options.jvm.define(className, attempt.sha256, attempt.path, this.hierarchyOf(attempt));
      this.options.broadcast('INFO', `Registered new bean ${className}`);
      return { status: 'unverified', detail: NON_UNIQUE_DETAIL, counted: false, applies: 'none' };
    }
    this.options.broadcast('INFO', `New class detected: ${className}`);
    return { status: 'unverified', detail: NON_UNIQUE_DETAIL, counted: true, applies: 'none' };
  }

  /** The superclass change of `attempt` against the class as loaded at start, if any. */
  private superclassChangeOf(attempt: Attempt): SuperclassChange | undefined {
    const configured = this.options.restartRequired?.(attempt.className, attempt.sha256);
    if (configured !== undefined) return configured;
    const before = this.options.jvm.hierarchyOf(attempt.className);
    const after = this.hierarchyOf(attempt);
    return before && after ? superclassChange(before, after) : undefined;
  }

  private scan(withExcluded = false): ClassFile[] {
    const refused = new Set(this.options.refused ?? []);
    return scanClassFiles(
      this.roots.current(),
      this.hashCache,
      (file, bytes) => this.hierarchies.set(file.path, { sha256: file.sha256, hierarchy: readHierarchy(bytes) }),
      withExcluded ? undefined : this.options.excluded,
    ).filter((file) => !refused.has(dirname(file.path)));
  }

  /** Hierarchy of `file`'s bytes (read again if the scan that hashed them did not read them). */
  private hierarchyOf(file: ClassFile): Hierarchy | null {
    const known = this.hierarchies.get(file.path);
    if (known?.sha256 === file.sha256) return known.hierarchy;
    try {
      const hierarchy = readHierarchy(readFileSync(file.path));
      this.hierarchies.set(file.path, { sha256: file.sha256, hierarchy });
      return hierarchy;
    } catch {
      return null;
    }
  }
}

/** The agent's StructuralReloader warning for a superclass change whose method bodies are salvaged (exact words). */
function salvagedSuperclass(className: string, change: SuperclassChange): string {
  return `${className}: ${SUPERCLASS_REASON}. Still extends ${simpleName(change.from)} instead of ${simpleName(change.to)}. Eligible method bodies will be attempted separately.`;
}

/** The agent's detail for a superclass change whose save is refused (exact words). */
function refusedSuperclass(className: string, change: SuperclassChange): string {
  return `${className} changed its superclass, and the rest of the class cannot be applied without it (${change.refused}). Reclazz keeps the loaded superclass. This save was refused; restart required to pick it up.`;
}

function simpleName(binaryName: string): string {
  return binaryName.slice(binaryName.lastIndexOf('.') + 1);
}

/** The hash of what the agent compiled itself from the source of a class file whose bytes hash to `sha256` (never the build's). */
function ownBytes(sha256: string): string {
  return createHash('sha256').update(`compiled by the agent from the source of ${sha256}`).digest('hex');
}
