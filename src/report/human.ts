/**
 * Human output on stderr: progress while waiting (one live line in a terminal, nothing
 * animated otherwise), the agent's own reload events, and the closing report whose last line
 * says plainly whether the change is proven live.
 */
import { restartCommandText, restartNeededText, restartRunningText } from './restart-words.js';
import { type ClassVerdict, LIVE_VERDICTS, type VerdictStatus } from '../outcome/facts.js';
import type { RunEvent } from '../outcome/events.js';
import type { RunResult } from '../outcome/result.js';
import { levelColour, LiveLine, palette, type Palette, visible, visibleFacts } from './palette.js';
import { LOADS_ON_FIRST_USE, verdictWords } from './verdict-words.js';
import { describeResult } from './words.js';
import { waitingWords, warningWords } from './step-words.js';

/** Lists at most this many classes by name in the report; the rest are counted. */
const MAX_LISTED = 20;

/** Where and how to write. */
export interface HumanOptions {
  write: (text: string) => void;
  /** Replace a live status line in place (stderr is a terminal and not CI). */
  live: boolean;
  /** Hide the agent's own events and the routine steps. */
  quiet: boolean;
  verbose: boolean;
  /** Colours for the stream written to (default: none). */
  paint?: Palette;
  /** Terminal width for the live line (default 80). */
  columns?: () => number | undefined;
}

const PREFIX = 'reclazz-build:';

/**
 * Renders events and the result as text; one per run. The live line says what is awaited,
 * inferred from the order of a run's events, and is hidden while the build writes.
 */
/** With --quiet, waits shorter than this (ms) are not shown. */
const QUIET_WAIT_MS = 5000;
/** Where a run's owner token came from (`hold`'s `ownerSource`). */
const OWNER_FROM = { saved: 'reused from the last run against this agent session', option: 'from --owner', new: 'new' } as const;
/** Why `mvn` runs elsewhere than the folder the run started in (`build-start`'s `movedFrom`). */
const movedWhy = 'the nearest folder with a pom.xml: there is none in the folder this run started in';

export class HumanReporter {
  private lastWaitLine: { what: string; atMs: number } | undefined;
  private readonly p: Palette;
  private readonly live: LiveLine;
  private verifyStarted = 0;
  /** The agent the lines being written are about (several agents), or ''. */
  private tag = '';

  constructor(private readonly options: HumanOptions) {
    this.p = options.paint ?? palette(false);
    this.live = new LiveLine({
      write: options.write,
      enabled: options.live,
      columns: options.columns ?? (() => undefined),
      prefix: `${this.p.dim(PREFIX)} `,
      prefixWidth: PREFIX.length + 1,
      escapes: this.p.enabled,
    });
  }

  /** Shows `text` on the live status line (a terminal only). */
  status(text: string): void {
    this.live.show(text);
  }

  /**
   * Renders one event. Its facts (the agent's text, paths, the command) are made visible here;
   * a warning's or a wait's text is words, already safe (report/step-words.ts).
   */
  event(event: RunEvent): void {
    // With several agents, each line about one agent's session starts with its name.
    this.tag = event.agentSource === undefined ? '' : `${this.p.bold(agentLabel(event.agentSource))}: `;
    this.render(event.type === 'warning' || event.type === 'waiting' || event.type === 'restart-output' ? event : visibleFacts(event));
    this.tag = '';
  }

  private render(event: RunEvent): void {
    const { quiet, verbose } = this.options;
    const p = this.p;
    switch (event.type) {
      case 'agent': {
        const a = event.agent;
        // Where it was found and its session matter when something is wrong: --verbose (doctor shows them too).
        const where = verbose ? ` from ${a.source}, session ${a.sessionId}` : '';
        if (!quiet) this.line(`agent ${p.bold(a.agentVersion)} (pid ${a.pid}, Java ${a.javaVersion}) on 127.0.0.1:${a.port}${where}`);
        return;
      }
      case 'hold':
        // The owner token matters once a build is held: the run's last words name it then.
        if (verbose)
          this.line(
            `owner token ${p.bold(event.owner)} (${OWNER_FROM[event.ownerSource]}); to recover a held build: --owner ${event.owner}`,
          );
        if (event.recovers && !quiet) this.line(`recovering the build an earlier run left held (owner token ${p.bold(event.owner)})`);
        this.live.show('waiting for the BUILD started receipt');
        return;
      case 'warning':
        this.line(p.yellow(`warning: ${warningWords(event)}`));
        return;
      case 'agent-dirs':
        if (verbose) this.agentDirs(event);
        return;
      case 'waiting':
        this.waiting(event);
        return;
      case 'build-start':
        this.live.hide();
        if (!quiet)
          this.line(
            `${event.held ? 'hold acquired; running' : 'running WITHOUT a hold:'} ${p.bold(event.command)}${event.wrapper ? ' (the project wrapper script)' : ''}${event.movedFrom === undefined ? '' : ` in ${event.cwd} (${movedWhy})`}`,
          );
        if (verbose) this.line(`class output directories: ${event.classDirs.join(', ') || '(none yet)'}`);
        return;
      case 'build-end':
        if (!quiet)
          this.line(
            `build ${event.exitCode === 0 ? p.green('ok') : p.red(`failed (exit status ${event.exitCode})`)} in ${seconds(event.durationMs)}`,
          );
        this.live.show(`waiting for the BUILD ${event.exitCode === 0 ? 'ok' : 'failed'} receipt`);
        return;
      case 'finish':
        if (!quiet || !event.acknowledged) {
          this.line(event.acknowledged ? `BUILD ${event.state} acknowledged` : p.red(`BUILD ${event.state} NOT acknowledged`));
        }
        if (event.acknowledged && event.state === 'ok') this.live.show('finding the class files whose bytes changed');
        else this.live.hide();
        return;
      case 'changes':
        if (!quiet) {
          const parts = [`${event.changed} changed`, `${event.added} added`, `${event.removed} removed`];
          if (event.notVerifiable > 0) parts.push(`${event.notVerifiable} not verifiable`);
          const checks =
            event.checks > 0
              ? `; ${event.checks} other${event.checks === 1 ? '' : 's'} asked once whether the app runs ${event.checks === 1 ? 'its' : 'their'} bytes: rewritten since proven live, or never proven`
              : '';
          this.line(`class files: ${parts.join(', ')} (of ${event.total})${checks}`);
        }
        this.verifyStarted = performance.now();
        this.live.show(`VERIFY applied 0/${event.changed - event.notVerifiable + event.checks}`, this.verifyStarted);
        return;
      case 'verify-progress':
        if (this.verifyStarted === 0) this.verifyStarted = performance.now();
        this.live.show(
          `VERIFY applied ${event.applied}/${event.total}${event.final > event.applied ? ` (${event.final - event.applied} not applied)` : ''}`,
          this.verifyStarted,
        );
        return;
      case 'agent-event':
        if (!quiet) this.line(`${p.dim('agent')} ${levelColour(p, event.level)(event.level)} ${event.message}`);
        return;
      case 'restart-needed':
      case 'restart':
      case 'restart-running':
      case 'restart-output':
        this.restartEvent(event);
        return;
    }
  }

  /** The restart of a change that needs one (session/group.ts): what it is about to do, its command's output, how the command ended or that it runs on. */
  private restartEvent(event: Extract<RunEvent, { type: 'restart-needed' | 'restart' | 'restart-running' | 'restart-output' }>): void {
    const p = this.p;
    // The command's own output, raw as a build's: it went to the terminal before it went to a log.
    if (event.type === 'restart-output') return this.write(event.text);
    if (event.type === 'restart-needed') {
      this.line(p.yellow(restartNeededText(event.classes, event.command, event.log, event.timeoutMs)));
      this.live.show(event.command === null ? 'waiting for the app to restart' : 'restarting the app');
      return;
    }
    if (event.type === 'restart-running') {
      this.line(restartRunningText(event.pid, event.log));
      return;
    }
    const text = restartCommandText(event.exitCode, event.durationMs, event.appBack);
    if (event.exitCode !== 0) this.line(event.appBack ? p.yellow(text) : p.red(text));
    else if (!this.options.quiet) this.line(text);
  }

  /** `--verbose`: the agent's watched directories and its JVM's class path folders that are class output directories here, and those not here. */
  private agentDirs(event: Extract<RunEvent, { type: 'agent-dirs' }>): void {
    if (event.fromAgent.length > 0) this.line(`class output directories taken from what the agent watches: ${event.fromAgent.join(', ')}`);
    if (event.fromClassPath.length > 0) {
      this.line(`class output directories taken from the app's class path: ${event.fromClassPath.join(', ')}`);
    }
    if (event.missing.length > 0) {
      const dirs = `director${event.missing.length === 1 ? 'y' : 'ies'}`;
      this.line(
        `the agent watches ${event.missing.length} ${dirs} not here: ${event.missing.join(', ')} (an app in a container? --path-map <agent path>=<local path>)`,
      );
    }
  }

  /** A wait: on the live line in a terminal, else a line when it starts and every 5 s. */
  private waiting(event: Extract<RunEvent, { type: 'waiting' }>): void {
    // --quiet: a wait is worth a line only once it is long enough to wonder about.
    if (this.options.quiet && event.elapsedMs < QUIET_WAIT_MS) return;
    const what = waitingWords(event);
    if (this.options.live) {
      this.live.show(`waiting for ${what}`, performance.now() - event.elapsedMs);
      return;
    }
    const last = this.lastWaitLine;
    if (last === undefined || last.what !== what || event.elapsedMs - last.atMs >= 5000) {
      this.lastWaitLine = { what, atMs: event.elapsedMs };
      this.line(`waiting for ${what}… ${(event.elapsedMs / 1000).toFixed(1)} s`);
    }
  }

  /**
   * Renders the closing report; the last line says whether the change is proven live. With
   * several agents, each agent's report in hold order, then the line for all of them.
   */
  result(result: RunResult): void {
    this.live.hide();
    for (const agent of result.agents ?? []) {
      this.line(`${this.p.bold('agent')} ${visible(agent.agentSource)}:`);
      this.report(agent);
    }
    if (result.agents === undefined) this.report(result);
    else this.verdictLine(result);
  }

  /** One agent's (or the only) report: what changed, the verdicts, and the last line. */
  private report(result: Omit<RunResult, 'agents'>): void {
    const { quiet } = this.options;
    if (!quiet && result.changes !== undefined) {
      const c = result.changes;
      for (const change of c.added.slice(0, MAX_LISTED))
        this.detail(
          'added',
          change.className,
          change.verifiable ? LOADS_ON_FIRST_USE : 'new class: nothing was loaded to replace, not verified',
        );
      more(c.added.length, (n) => this.detail('added', `… and ${n} more`, ''));
      for (const change of c.removed.slice(0, MAX_LISTED)) this.detail('removed', change.className, 'class file deleted');
      more(c.removed.length, (n) => this.detail('removed', `… and ${n} more`, ''));
      for (const change of c.notVerifiable.slice(0, MAX_LISTED))
        this.detail('skipped', change.className, 'not a name VERIFY accepts; not verified');
      more(c.notVerifiable.length, (n) => this.detail('skipped', `… and ${n} more`, ''));
      for (const file of c.resources.slice(0, MAX_LISTED)) this.detail('not checked', file, 'not a class file: VERIFY cannot prove it');
      more(c.resources.length, (n) => this.detail('not checked', `… and ${n} more`, ''));
    }
    if (result.verdicts.length > 0) this.verdicts(result.verdicts, quiet);
    this.verdictLine(result);
  }

  /** The last line: proven live or not, in words, and what to do next. */
  private verdictLine(result: Omit<RunResult, 'agents'>): void {
    const p = this.p;
    const mark = verdictMark({ ...result, ran: result.build !== undefined || result.verdicts.length > 0 });
    const words = describeResult(result);
    this.line(`${{ proven: p.boldGreen, open: p.boldYellow, failed: p.boldRed }[mark.tone](mark.text)} ${words.message}`);
    if (words.hint !== undefined && !result.provenLive) this.line(p.dim(`next: ${words.hint}`));
  }

  private verdicts(verdicts: ClassVerdict[], quiet: boolean): void {
    const counts = new Map<VerdictStatus, number>();
    for (const v of verdicts) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
    const notApplied = verdicts.filter((v) => !LIVE_VERDICTS.has(v.status));
    if (verdicts.length <= MAX_LISTED && !quiet) {
      for (const v of verdicts) this.detail(v.status, v.className, verdictWords(v));
    } else {
      this.line(`VERIFY: ${[...counts].map(([status, n]) => `${n} ${status}`).join(', ')}`);
      for (const v of notApplied.slice(0, MAX_LISTED)) this.detail(v.status, v.className, verdictWords(v));
      more(notApplied.length, (n) => this.detail('', `… and ${n} more not live (--json lists every class)`, ''));
    }
  }

  /** One class: `name` (from a file name, or the agent's) and `detail` (the agent's) are made visible here. */
  private detail(status: string, name: string, detail: string): void {
    const p = this.p;
    [name, detail] = [visible(name), visible(detail)];
    const colour = LIVE_VERDICTS.has(status) ? p.green : ['added', 'removed', 'skipped', 'not checked'].includes(status) ? p.dim : p.red;
    this.write(`  ${colour(status.padEnd(16))} ${name}${detail ? p.dim(`  ${detail}`) : ''}\n`);
  }

  private line(text: string): void {
    this.write(`${this.p.dim(PREFIX)} ${this.tag}${text}\n`);
  }

  /** Writes above the live line: erase it, write, draw it again. */
  private write(text: string): void {
    this.live.clear();
    this.options.write(text);
    this.live.redraw();
  }
}

/**
 * What opens the last line: `✔ proven live:`, `• not proven live:` (exit 0 without proof:
 * `--no-verify`, no agent), `✘ not run:` (refused before the build ran or a verdict came), or
 * `✘ not proven live:`. `ran`: the build ran or some class has a verdict.
 */
export function verdictMark(result: { provenLive: boolean; exitCode: number; ran: boolean }): {
  text: string;
  tone: 'proven' | 'open' | 'failed';
} {
  if (result.provenLive) return { text: '✔ proven live:', tone: 'proven' };
  if (result.exitCode === 0) return { text: '• not proven live:', tone: 'open' };
  return { text: result.ran ? '✘ not proven live:' : '✘ not run:', tone: 'failed' };
}

/** A short name for the agent of port file `source`: its project folder's name (the report names the whole path). */
function agentLabel(source: string): string {
  const folder = source.replace(/[\\/](\.reclazz|\.idea[\\/]reclazz)[\\/]agent\.port$/, '');
  return visible(folder.split(/[\\/]/).pop() || source);
}

function more(total: number, say: (rest: number) => void): void {
  if (total > MAX_LISTED) say(total - MAX_LISTED);
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
