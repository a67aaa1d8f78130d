/**
 * What the "application" has loaded and the reload batches the agent runs on it, feeding the
 * VERIFY ledger (protocol.md, "VERIFY": receipts, running -> final status, not-loaded classes,
 * batch warnings; "Batch-wide verdicts").
 */
import { readFileSync } from 'node:fs';
import { scanClassFiles, type CachedHash, type ClassFile } from './capture.js';
import { describeHierarchyChange, readHierarchy, type Hierarchy } from './classfile.js';
import { SessionCounts } from './health.js';
import { VerifyLedger, receiptText } from './ledger.js';
import type { PathReporter } from './paths.js';
import type { FinalStatus } from './types.js';

/** Detail of a class that was not loaded exactly once, or of a batch with ambiguous input (protocol.md, "Batch-wide verdicts"). */
const AMBIGUOUS_DETAIL = 'class was not loaded exactly once before the batch, or input class names were ambiguous';

/** Settings and side-effect hooks of a {@link ClassReloader}. Durations in ms. */
export interface ReloaderOptions {
  /** Class file names the watcher skips (the agent's `excludePatterns`): never captured, pending or reloaded. */
  excluded?: (fileName: string) => boolean;
  /** How long an admitted batch reads `running` before its final statuses. */
  reloadMs: number;
  /** Classes whose latest receipt the ledger keeps. */
  ledgerSize: number;
  /** Reuse a file's hash while its stamp is unchanged (see FakeAgentOptions.scanCache). */
  scanCache?: boolean;
  /** Final status of a loaded class's attempt; undefined -> applied. */
  verifyStatus?: (className: string, sha256: string) => FinalStatus | undefined;
  /** See FakeAgentOptions.unreadableClassFile. */
  unreadableClassFile?: (path: string, className: string) => boolean;
  /** See FakeAgentOptions.restartRequired. */
  restartRequired?: (className: string, sha256: string) => string | undefined;
  /** A class file's path as the agent reports it (VERIFY `source`). */
  reportPath: PathReporter;
  /** Run `run` after `ms` (cancelled when the agent stops or restarts). */
  later(ms: number, run: () => void): void;
  /** Broadcast one status event to every client. */
  broadcast(level: string, message: string): void;
}

/** One class of a reload batch. */
interface Attempt extends ClassFile {
  /** Loaded exactly once before the batch, and the batch's input was unambiguous. */
  unique: boolean;
}

/** One admitted reload batch, open from admission until its statuses are final. */
interface Batch {
  number: number;
  attempts: Attempt[];
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
  /** Restart-required changes of this session, per class (PENDING). */
  readonly restartNotes = new Map<string, string>();
  /** What was reloaded and failed since the (re)start, per class attempt (HEALTH). */
  counts = new SessionCounts();
  /** sha256 of the bytes last admitted, per absolute class file path. */
  private readonly known = new Map<string, string>();
  /** Binary names loaded "by the application": the classes present at (re)start, with their hierarchy when readable. */
  private readonly loaded = new Map<string, Hierarchy | null>();
  /** Hierarchy of the bytes last read per class file path. */
  private readonly hierarchies = new Map<string, { sha256: string; hierarchy: Hierarchy | null }>();
  private readonly open = new Set<Batch>();
  private batches = 0;
  /** The watched class output directories (absolute): those that existed when the application started. */
  private roots: readonly string[] = [];

  private readonly hashCache: Map<string, CachedHash> | undefined;

  constructor(private readonly options: ReloaderOptions) {
    this.hashCache = options.scanCache ? new Map() : undefined;
    this.ledger = new VerifyLedger(options.ledgerSize);
  }

  /**
   * An application (re)start watching `roots` (absolute, existing): the classes on disk now are
   * loaded and known, excluded ones too; no receipts, no notes, no open batch.
   */
  reset(roots: readonly string[]): void {
    this.roots = roots;
    this.known.clear();
    this.loaded.clear();
    this.ledger.clear();
    this.restartNotes.clear();
    this.counts = new SessionCounts();
    this.open.clear();
    for (const file of this.scan(true)) {
      this.known.set(file.path, file.sha256);
      if (!this.loaded.has(file.className)) this.loaded.set(file.className, this.hierarchyOf(file));
    }
  }

  /**
   * Class files whose bytes differ from the last admitted ones (new files included), without
   * the excluded ones unless `withExcluded` (the agent's start-up dispatch skips no name).
   * Throws on read errors.
   */
  changedFiles(withExcluded = false): ClassFile[] {
    return this.scan(withExcluded).filter((file) => this.known.get(file.path) !== file.sha256);
  }

  /** True when the application loaded `className` at its start. */
  isLoaded(className: string): boolean {
    return this.loaded.has(className);
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
   * reloadMs. An unreadable class file (no receipt of its own) or two files with one binary
   * name (the later one is attempted) make the input ambiguous: every class is `unverified`.
   */
  admit(changed: ClassFile[]): void {
    if (changed.length === 0) return;
    let ambiguous = false;
    const byName = new Map<string, ClassFile>();
    for (const file of changed) {
      this.known.set(file.path, file.sha256);
      this.ledger.forgetSource(this.options.reportPath(file.path));
      if (this.options.unreadableClassFile?.(file.path, file.className)) {
        ambiguous = true;
        continue;
      }
      if (byName.has(file.className)) ambiguous = true;
      byName.set(file.className, file);
    }
    const batch: Batch = {
      number: ++this.batches,
      attempts: [...byName.values()].map((file) => ({ ...file, unique: !ambiguous && this.loaded.has(file.className) })),
    };
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

  /** Apply the batch (its events are broadcast while it is still open), then record final statuses. */
  private complete(batch: Batch, elapsedMs: number): void {
    const statuses = new Map<Attempt, FinalStatus>();
    for (const attempt of batch.attempts) {
      const status = attempt.unique ? (this.options.verifyStatus?.(attempt.className, attempt.sha256) ?? 'applied') : 'unverified';
      statuses.set(attempt, status);
      const change = attempt.unique ? this.hierarchyChange(attempt) : undefined;
      if (change !== undefined) {
        this.restartNotes.set(attempt.className, change);
        this.options.broadcast('WARN', `Hierarchy of ${attempt.className} changed (${change}); restart required to apply it`);
      }
      if (status === 'unverified' && attempt.unique) this.options.broadcast('WARN', `Reload of ${attempt.className} finished with a warning (fake)`);
      else if (status === 'applied' && change === undefined) this.options.broadcast('RELOAD', `Reloaded ${attempt.className} (${elapsedMs}ms)`);
    }
    this.open.delete(batch);
    const completedAt = new Date().toISOString();
    const after: Array<[string, string]> = [];
    for (const attempt of batch.attempts) {
      let status = statuses.get(attempt) as FinalStatus;
      let detail: string;
      if (status === 'failed') {
        detail = 'the reload attempt reported failure (fake)';
        after.push(['ERROR', `Reload failed for ${attempt.className} (fake)`]);
      } else if (!attempt.unique) {
        detail = AMBIGUOUS_DETAIL;
        after.push(['INFO', `${attempt.className}: ${detail}`]);
      } else if (batch.warning !== undefined) {
        status = 'unverified';
        detail = batch.warning;
      } else {
        detail = `reloaded in ${elapsedMs}ms`;
      }
      // Counted per class attempt, as the agent's ReloadQueue reports each class of a batch to SessionReport.
      if (status === 'failed') this.counts.failed();
      else this.counts.reloaded(elapsedMs);
      // A newer attempt (even with the same bytes), or a forgotten receipt, stays as it is.
      const current = this.ledger.get(attempt.className);
      if (current?.batch === batch.number && current.sha256 === attempt.sha256) {
        this.ledger.record(attempt.className, { ...current, status, detail, completedAt });
      }
    }
    for (const [level, message] of after) this.options.broadcast(level, message);
  }

  /** The hierarchy change of `attempt` against the class as loaded at start, if any. */
  private hierarchyChange(attempt: Attempt): string | undefined {
    const configured = this.options.restartRequired?.(attempt.className, attempt.sha256);
    if (configured !== undefined) return configured;
    const before = this.loaded.get(attempt.className);
    const after = this.hierarchyOf(attempt);
    return before && after ? describeHierarchyChange(before, after) : undefined;
  }

  private scan(withExcluded = false): ClassFile[] {
    return scanClassFiles(
      this.roots,
      this.hashCache,
      (file, bytes) => this.hierarchies.set(file.path, { sha256: file.sha256, hierarchy: readHierarchy(bytes) }),
      withExcluded ? undefined : this.options.excluded,
    );
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
