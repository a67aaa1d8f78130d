/**
 * What the "application" has loaded and the reload batches the agent runs on it, feeding the
 * VERIFY ledger (protocol.md, "VERIFY": receipts, running -> final status, not-loaded classes,
 * batch warnings).
 */
import { scanClassFiles, type CachedHash, type ClassFile } from './capture.js';
import { VerifyLedger } from './ledger.js';
import type { FinalStatus } from './types.js';

/** `source` of receipts for batches the watcher captured from class files. */
const RECEIPT_SOURCE = 'external-class-file';

/** Settings and side-effect hooks of a {@link ClassReloader}. Durations in ms. */
export interface ReloaderOptions {
  /** Absolute watched class output directories. */
  watchDirs: readonly string[];
  /** How long an admitted batch reads `running` before its final statuses. */
  reloadMs: number;
  /** Classes whose latest receipt the ledger keeps. */
  ledgerSize: number;
  /** Reuse a file's hash while its stamp is unchanged (see FakeAgentOptions.scanCache). */
  scanCache?: boolean;
  /** Final status of a loaded class's attempt; undefined -> applied. */
  verifyStatus?: (className: string, sha256: string) => FinalStatus | undefined;
  /** Run `run` after `ms` (cancelled when the agent stops or restarts). */
  later(ms: number, run: () => void): void;
  /** Broadcast one status event to every client. */
  broadcast(level: string, message: string): void;
}

/** One class of a reload batch. */
interface BatchEntry extends ClassFile {
  /** Present when the rules decide the outcome, not `verifyStatus`. */
  forced?: { status: FinalStatus; detail: string };
}

/**
 * The bytes the agent last admitted per class file, the classes loaded at (re)start, and the
 * ledger of reload receipts.
 */
export class ClassReloader {
  /** Latest receipt per class, answered by VERIFY and DIAGNOSE. */
  readonly ledger: VerifyLedger;
  /** sha256 of the bytes last admitted, per absolute class file path. */
  private readonly known = new Map<string, string>();
  /** Binary names loaded "by the application": the classes present at (re)start. */
  private readonly loaded = new Set<string>();
  private attempts = 0;

  private readonly hashCache: Map<string, CachedHash> | undefined;

  constructor(private readonly options: ReloaderOptions) {
    this.hashCache = options.scanCache ? new Map() : undefined;
    this.ledger = new VerifyLedger(options.ledgerSize);
  }

  /** An application (re)start: the classes on disk now are loaded and known; no receipts. */
  reset(): void {
    this.known.clear();
    this.loaded.clear();
    this.ledger.clear();
    for (const file of scanClassFiles(this.options.watchDirs, this.hashCache)) {
      this.known.set(file.path, file.sha256);
      this.loaded.add(file.className);
    }
  }

  /** Class files whose bytes differ from the last admitted ones (new files included). Throws on read errors. */
  changedFiles(): ClassFile[] {
    return scanClassFiles(this.options.watchDirs, this.hashCache).filter((file) => this.known.get(file.path) !== file.sha256);
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
   * Admit `changed` as one reload batch: each class gets a `running` receipt for its new bytes
   * now and its final status after reloadMs. A class not loaded before the reload, or whose
   * binary name appears twice in the batch, ends `unverified`; otherwise `verifyStatus` decides
   * (default `applied`), and an `unverified` from it (a batch WARN) makes the batch's applied
   * members `unverified` too.
   */
  admit(changed: ClassFile[]): void {
    if (changed.length === 0) return;
    const attempt = ++this.attempts;
    const perName = new Map<string, number>();
    for (const file of changed) perName.set(file.className, (perName.get(file.className) ?? 0) + 1);
    const batch: BatchEntry[] = changed.map((file) => {
      if (!this.loaded.has(file.className)) {
        return { ...file, forced: { status: 'unverified', detail: 'class was not loaded before the reload' } };
      }
      if ((perName.get(file.className) ?? 0) > 1) {
        return { ...file, forced: { status: 'unverified', detail: 'duplicate input name in one batch' } };
      }
      return file;
    });
    for (const file of batch) {
      this.known.set(file.path, file.sha256);
      this.ledger.record(file.className, {
        sha256: file.sha256,
        status: 'running',
        source: RECEIPT_SOURCE,
        detail: 'reload in progress',
        completedAt: '',
        attempt,
      });
    }
    const startedMs = Date.now();
    this.options.later(this.options.reloadMs, () => this.complete(batch, attempt, Date.now() - startedMs));
  }

  private complete(batch: BatchEntry[], attempt: number, elapsedMs: number): void {
    const outcomes = batch.map((file) => {
      if (file.forced) return { file, ...file.forced, warned: false };
      const status = this.options.verifyStatus?.(file.className, file.sha256) ?? 'applied';
      return { file, status, detail: outcomeDetail(status, elapsedMs), warned: status === 'unverified' };
    });
    const batchWarned = outcomes.some((outcome) => outcome.warned);
    const completedAt = new Date().toISOString();
    const events: Array<[string, string]> = [];
    for (const outcome of outcomes) {
      const { file } = outcome;
      let { status, detail } = outcome;
      if (status === 'applied' && batchWarned) {
        status = 'unverified';
        detail = 'a warning in the same reload batch';
      }
      // A newer attempt (even with the same bytes) keeps its own receipt.
      const current = this.ledger.get(file.className);
      if (current?.attempt === attempt && current.sha256 === file.sha256) {
        this.ledger.record(file.className, { ...current, status, detail, completedAt });
      }
      if (outcome.warned) events.push(['WARN', `Reload of ${file.className} finished with a warning (fake)`]);
      else if (status === 'failed') events.push(['ERROR', `Reload failed for ${file.className} (fake)`]);
      else if (file.forced) events.push(['INFO', `${file.className}: ${detail}`]);
      else events.push(['RELOAD', `Reloaded ${file.className} (${elapsedMs}ms)`]);
    }
    for (const [level, message] of events) this.options.broadcast(level, message);
  }
}

function outcomeDetail(status: FinalStatus, elapsedMs: number): string {
  switch (status) {
    case 'applied':
      return `reloaded in ${elapsedMs}ms`;
    case 'failed':
      return 'the reload attempt reported failure (fake)';
    case 'unverified':
      return 'the reload finished with a warning (fake)';
  }
}
