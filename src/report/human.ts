/**
 * Human output on stderr: progress while waiting (one live line in a terminal, nothing
 * animated otherwise), the agent's own reload events, and the closing report whose last line
 * says plainly whether the change is proven live.
 */
import kleur from 'kleur';
import type { RunEvent, RunResult } from '../events.js';
import type { ClassVerdict, VerdictStatus } from '../verify/verify.js';

/** Lists at most this many classes by name in the report; the rest are counted. */
export const MAX_LISTED = 20;

/** Where and how to write. */
export interface HumanOptions {
  write: (text: string) => void;
  /** Replace a live status line in place (stderr is a terminal and not CI). */
  live: boolean;
  /** Hide the agent's own events and the routine steps. */
  quiet: boolean;
  verbose: boolean;
}

/**
 * True when colour should be used on `stream`: honours NO_COLOR, FORCE_COLOR and TERM=dumb,
 * else the stream's own terminal status.
 */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

const LEVEL_COLOURS: Record<string, (text: string) => string> = {
  RELOAD: kleur.green,
  STRUCTURAL_RELOAD: kleur.magenta,
  COMPILE: kleur.cyan,
  WARN: kleur.yellow,
  ERROR: kleur.red,
};

/** Renders events and the result as text. Create one per run. */
export class HumanReporter {
  private liveShown = false;
  private lastWaitLine: { what: string; atMs: number } | undefined;

  constructor(private readonly options: HumanOptions) {}

  /** Renders one event. */
  event(event: RunEvent): void {
    const { quiet, verbose } = this.options;
    switch (event.type) {
      case 'agent': {
        const a = event.agent;
        if (!quiet) this.line(`agent ${kleur.bold(a.agentVersion)} (pid ${a.pid}, Java ${a.javaVersion}) on 127.0.0.1:${a.port} from ${a.source}, session ${a.sessionId}`);
        return;
      }
      case 'hold':
        if (!quiet) {
          const from = event.ownerSource === 'saved' ? 'reused from the last run against this agent session' : event.ownerSource === 'option' ? 'from --owner' : 'new';
          this.line(`owner token ${kleur.bold(event.owner)} (${from}); to recover a held build: --owner ${event.owner}`);
        }
        return;
      case 'warning':
        this.line(kleur.yellow(`warning: ${event.message}`));
        return;
      case 'waiting': {
        const text = `waiting for ${event.what}… ${(event.elapsedMs / 1000).toFixed(1)} s`;
        if (this.options.live) this.progress(text);
        else if (this.lastWaitLine === undefined || this.lastWaitLine.what !== event.what || event.elapsedMs - this.lastWaitLine.atMs >= 5000) {
          this.lastWaitLine = { what: event.what, atMs: event.elapsedMs };
          this.line(text);
        }
        return;
      }
      case 'build-start':
        if (!quiet) this.line(`hold acquired; running ${kleur.bold(event.command)}${event.wrapper ? ' (the project wrapper script)' : ''}`);
        if (verbose) this.line(`class output directories: ${event.classDirs.join(', ') || '(none yet)'}`);
        return;
      case 'build-end':
        if (!quiet) this.line(`build ${event.exitCode === 0 ? kleur.green('ok') : kleur.red(`failed (exit status ${event.exitCode})`)} in ${seconds(event.durationMs)}`);
        return;
      case 'finish':
        if (!quiet || !event.acknowledged) {
          this.line(event.acknowledged ? `BUILD ${event.state} acknowledged` : kleur.red(`BUILD ${event.state} NOT acknowledged`));
        }
        return;
      case 'changes':
        if (!quiet) {
          const parts = [`${event.changed} changed`, `${event.added} added`, `${event.removed} removed`];
          if (event.notVerifiable > 0) parts.push(`${event.notVerifiable} not verifiable`);
          this.line(`class files: ${parts.join(', ')} (of ${event.total})`);
        }
        return;
      case 'verify-progress':
        this.progress(`VERIFY applied ${event.applied}/${event.total} (${event.final} final)`);
        return;
      case 'agent-event':
        if (!quiet) this.line(`${kleur.dim('agent')} ${(LEVEL_COLOURS[event.level] ?? kleur.white)(event.level)} ${event.message}`);
        return;
    }
  }

  /** Renders the closing report; the last line says whether the change is proven live. */
  result(result: RunResult): void {
    this.clearLive();
    const { quiet } = this.options;
    if (!quiet && result.changes !== undefined) {
      const c = result.changes;
      for (const change of c.added.slice(0, MAX_LISTED)) this.detail('added', change.className, 'new class: nothing was loaded to replace, not verified');
      more(c.added.length, (n) => this.detail('added', `… and ${n} more`, ''));
      for (const change of c.removed.slice(0, MAX_LISTED)) this.detail('removed', change.className, 'class file deleted');
      more(c.removed.length, (n) => this.detail('removed', `… and ${n} more`, ''));
      for (const change of c.notVerifiable.slice(0, MAX_LISTED)) this.detail('skipped', change.className, 'not a name VERIFY accepts; not verified');
      more(c.notVerifiable.length, (n) => this.detail('skipped', `… and ${n} more`, ''));
    }
    if (result.verdicts.length > 0) this.verdicts(result.verdicts, quiet);
    if (result.hint !== undefined && result.exitCode !== 0) this.line(kleur.dim(`next: ${result.hint}`));
    const mark = result.provenLive ? kleur.green().bold('✔ proven live:') : result.exitCode === 0 ? kleur.yellow().bold('• not proven live:') : kleur.red().bold('✘ not proven live:');
    this.line(`${mark} ${result.message}`);
  }

  private verdicts(verdicts: ClassVerdict[], quiet: boolean): void {
    const counts = new Map<VerdictStatus, number>();
    for (const v of verdicts) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
    const notApplied = verdicts.filter((v) => v.status !== 'applied');
    if (verdicts.length <= MAX_LISTED && !quiet) {
      for (const v of verdicts) this.detail(v.status, v.className, v.detail);
    } else {
      this.line(`VERIFY: ${[...counts].map(([status, n]) => `${n} ${status}`).join(', ')}`);
      for (const v of notApplied.slice(0, MAX_LISTED)) this.detail(v.status, v.className, v.detail);
      more(notApplied.length, (n) => this.detail('', `… and ${n} more not applied (--json lists every class)`, ''));
    }
  }

  private detail(status: string, name: string, detail: string): void {
    const colour = status === 'applied' ? kleur.green : status === 'added' || status === 'removed' || status === 'skipped' ? kleur.dim : kleur.red;
    this.write(`  ${colour(status.padEnd(16))} ${name}${detail ? kleur.dim(`  ${detail}`) : ''}\n`);
  }

  private line(text: string): void {
    this.clearLive();
    this.write(`${kleur.dim('reclazz-build:')} ${text}\n`);
  }

  private progress(text: string): void {
    if (!this.options.live) return;
    this.write(`\r\x1b[K${kleur.dim('reclazz-build:')} ${text}`);
    this.liveShown = true;
  }

  private clearLive(): void {
    if (!this.liveShown) return;
    this.write('\r\x1b[K');
    this.liveShown = false;
  }

  private write(text: string): void {
    this.options.write(text);
  }
}

function more(total: number, say: (rest: number) => void): void {
  if (total > MAX_LISTED) say(total - MAX_LISTED);
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
