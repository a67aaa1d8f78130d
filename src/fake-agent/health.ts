/**
 * HEALTH's report of what the agent did since it started, in the order and words of the agent's
 * `SessionReport.lines` (agent/SessionReport.java): the count of reloads and failures, counted
 * once per class attempt as `ReloadQueue.java` reports each class of a batch, is what a client
 * reads to know whether a receipt can have been evicted (protocol.md "SCAN, PENDING, HEALTH,
 * DIAGNOSE").
 */

/** How many latencies the report remembers (SessionReport's ring). */
const REMEMBERED_LATENCIES = 512;

/** What the agent counted since it (re)started. */
export class SessionCounts {
  reloads = 0;
  failures = 0;
  /** Epoch ms of the start, and of the last reload or failure (0: none yet). */
  startedAtMs = Date.now();
  lastChangeAtMs = 0;
  private readonly latencies: number[] = [];

  /** A class whose reload landed, after `ms`. */
  reloaded(ms: number): void {
    this.reloads += 1;
    this.lastChangeAtMs = Date.now();
    this.latencies.push(ms);
    if (this.latencies.length > REMEMBERED_LATENCIES) this.latencies.shift();
  }

  /** A class whose reload failed. */
  failed(): void {
    this.failures += 1;
    this.lastChangeAtMs = Date.now();
  }

  /** The report's lines: the version and uptime, the counts and latencies, the watch (when wired), the last change, restarts. */
  lines(version: string, watch: { directories: number; files: number } | undefined, needingRestart: number): string[] {
    const now = Date.now();
    const lines = [`Reclazz ${version}, up ${humanDuration(now - this.startedAtMs)}.`];
    if (this.reloads === 0 && this.failures === 0) lines.push('Nothing has reloaded yet this session.');
    else {
      const failures = this.failures > 0 ? `, and ${plural(this.failures, 'failure')}` : '';
      lines.push(`${plural(this.reloads, 'reload')}: 0 structural, ${this.reloads} method bodies${failures}.`, this.latencyLine());
    }
    if (watch !== undefined) {
      lines.push(`${plural(watch.directories, 'directory', 'directories')} watched, holding ${plural(watch.files, 'file')}.`);
    }
    lines.push(
      this.lastChangeAtMs === 0 ? 'No file has changed under a watched directory yet.' : `Last change ${humanDuration(now - this.lastChangeAtMs)} ago.`,
    );
    lines.push(needingRestart === 0 ? 'Nothing is waiting on a restart.' : `${plural(needingRestart, 'thing')} waiting on a restart; ask PENDING for what.`);
    return lines;
  }

  private latencyLine(): string {
    const taken = [...this.latencies].sort((a, b) => a - b);
    const count = taken.length;
    if (count === 0) return 'None of them was timed, which is the batch path reloading a whole directory.';
    const from = count === this.reloads ? `over all ${count} of them` : `over the last ${count} of ${this.reloads}`;
    const at95 = taken[Math.max(0, Math.ceil(count * 0.95) - 1)]!;
    return `Save to reloaded: ${taken[Math.floor(count / 2)]}ms median, ${at95}ms at the 95th, ${taken[count - 1]}ms worst, ${from}.`;
  }
}

/** `<n> <word>`, singular only for 1 (the agent's Plural.of). */
function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** Whole seconds, minutes, hours or days (SessionReport.humanDuration). */
function humanDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return plural(seconds, 'second');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  return hours < 24 ? plural(hours, 'hour') : plural(Math.floor(hours / 24), 'day');
}
