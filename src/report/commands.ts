/**
 * Human output of the agent subcommands. What was asked for (the DOCTOR table, the reload
 * state, the event stream) goes to stdout; a refusal or an uncertain outcome goes to stderr
 * with what to do next. The agent's text in them is made visible here (report/palette.ts).
 */
import type { AgentEndpoint, ReloadState } from '../outcome/facts.js';
import type { CommandResult, DoctorResult, ReloadResult } from '../outcome/result.js';
import { levelColour, type Palette, visible, visibleFacts } from './palette.js';
import { describeResult } from './words.js';

const PREFIX = 'reclazz-build:';

/**
 * The text for stdout on success, or undefined when there is none (then see {@link failureText}).
 * The result's facts (DOCTOR fields, paths) are made visible; its words hold nothing to escape.
 */
export function successText(raw: CommandResult, p: Palette, verbose = false): string | undefined {
  // doctor's findings are its answer too: the table, then what keeps classes from being proven.
  if (raw.exitCode !== 0 && raw.reason !== 'doctor-findings') return undefined;
  const result = visibleFacts(raw);
  const words = describeResult(raw);
  // doctor's findings end 75: their hint is what to do next, as any refusal's; a good ending's is a note.
  const label = raw.exitCode === 0 ? 'note:' : 'next:';
  const note = words.hint === undefined ? '' : `${p.yellow(label)} ${words.hint}\n`;
  switch (result.action) {
    case 'doctor':
      return `${doctorTable(result, p, verbose)}\n${words.message}\n${note}`;
    case 'status':
    case 'pause':
    case 'resume':
      return `${reloadText(result, words.message, p)}${note}`;
    case 'scan':
      return `${words.message}\n${note}`;
    case 'events':
      return undefined;
  }
}

/** The text for stderr: the refusal or the end of an event stream, with the next step. */
export function failureText(result: CommandResult, p: Palette): string | undefined {
  if (result.action === 'events' && result.reason === 'interrupted') return undefined;
  if ((result.exitCode === 0 || result.reason === 'doctor-findings') && result.action !== 'events') return undefined;
  const mark = result.exitCode === 0 ? p.dim('•') : p.boldRed('✘');
  const words = describeResult(result);
  const hint = words.hint === undefined || result.exitCode === 0 ? '' : `${p.dim(PREFIX)} ${p.dim(`next: ${words.hint}`)}\n`;
  // The error, then what to do about it: the order the build's report uses.
  return `${p.dim(PREFIX)} ${mark} ${words.message}\n${hint}`;
}

function yesNo(p: Palette, value: boolean): string {
  return value ? p.green('yes') : p.red('no');
}

/** The DOCTOR evidence as a two-column table, then the class output directories here. */
function doctorTable(result: DoctorResult, p: Palette, verbose = false): string {
  const d = result.doctor;
  const e = result.endpoint;
  const rows: Array<[string, string]> = [];
  if (d !== undefined) {
    rows.push(['agent', `${p.bold(d.agentVersion)}${e ? ` (status protocol ${e.protocolVersion})` : ''}`]);
    rows.push(['session', d.sessionId || p.yellow('(none yet: still starting)')]);
    rows.push(['pid', d.pid]);
    rows.push(['Java', `${d.javaVersion} (${d.vmName})`]);
    rows.push(['working dir', d.workingDirectory]);
    rows.push(['watcher', d.watcherState === 'watching' ? p.green(d.watcherState) : p.yellow(d.watcherState)]);
    rows.push(['build hold', d.buildHold === 'none' ? d.buildHold : p.yellow(d.buildHold)]);
    if (result.reload !== null) rows.push(['reloads', reloadsRow(result.reload, p)]);
    const sample = d.watchedDirectories;
    const sampled = result.watchedFrom === 'sample';
    rows.push([
      'watched dirs',
      `${d.watchedDirectoryCount} registered${d.unwatchableDirectoryCount > 0 ? p.yellow(` (${d.unwatchableDirectoryCount} refused)`) : ' (0 refused)'}`,
    ]);
    for (const dir of sample) rows.push(['', sampled ? watchedRow(result, dir, p) : p.dim(dir)]);
    if (d.watchSampleTruncated || sample.length < d.watchedDirectoryCount)
      rows.push(['', p.dim(`… ${d.watchedDirectoryCount - sample.length} more not listed (the agent lists the first 8 in name order)`)]);
    if (!sampled && result.watchedFrom !== 'none') {
      const from = result.watchedFrom === 'options' ? "from the app's command line" : "from DOCTOR's whole list";
      rows.push(['watches', result.watched.length === 0 ? p.yellow(`no class output directory (${from})`) : p.dim(`(${from})`)]);
      for (const fact of result.watched) rows.push(['', watchedRow(result, fact.dir, p)]);
    }
    rows.push([
      'supports',
      `owned builds ${yesNo(p, d.buildOwnershipSupported)} · VERIFY ${yesNo(p, d.verifySupported)} · SCAN ${yesNo(p, d.scanSupported)}`,
    ]);
  }
  if (e !== undefined) rows.push(['port', `${e.port} (${e.portFile === null ? e.source : `from ${e.portFile}`})`]);
  if (d?.detail && verbose) rows.push(['detail', d.detail]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  let out = rows.map(([k, v]) => `${p.dim(k.padEnd(width))}${v}\n`).join('');
  if (result.classDirs.length > 0) {
    out += `\nclass output directories here:\n`;
    for (const c of result.classDirs) {
      const label = c.watched === true ? p.green('watched') : c.watched === false ? p.boldRed('NOT watched') : p.yellow('unknown');
      const pad = ' '.repeat(Math.max(1, 13 - (c.watched === true ? 7 : c.watched === false ? 11 : 7)));
      out += `  ${label}${pad}${c.dir}\n`;
    }
  }
  return out;
}

/** One watched directory of the agent's: as reported, where it is here (--path-map), and whether it is this project's. */
function watchedRow(result: DoctorResult, dir: string, p: Palette): string {
  const fact = result.watched.find((w) => w.dir === dir);
  if (fact === undefined) return dir;
  const local = fact.local === dir ? '' : ` (here ${fact.local})`;
  const label = fact.here === 'missing' ? p.yellow('not here') : fact.ours ? p.green("this project's") : p.yellow("not this project's");
  return `${dir}${local}  ${label}${fact.here === 'empty' ? p.dim(' (no class files)') : ''}`;
}

/** Whether the agent reloads now, from its RELOAD status. */
function reloadsRow(state: ReloadState, p: Palette): string {
  if (!state.paused) return 'automatic';
  return p.yellow(`PAUSED (${state.pendingClasses} class file(s) pending until reclazz-build resume)`);
}

/** The RELOAD_STATE receipt, field by field. */
function reloadText(result: ReloadResult, message: string, p: Palette): string {
  const s = result.state;
  if (s === undefined) return `${message}\n`;
  const lines = [
    message.slice(0, Math.max(0, message.lastIndexOf(';'))) || message,
    `  ${p.dim('paused'.padEnd(16))}${s.paused ? p.yellow('yes') : 'no'}`,
    `  ${p.dim('pending classes'.padEnd(16))}${s.pendingClasses}`,
    `  ${p.dim('pending actions'.padEnd(16))}${s.pendingActions}`,
    `  ${p.dim('build hold'.padEnd(16))}${s.buildHold === 'none' ? 'none' : p.yellow(s.buildHold)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** One agent event as `HH:MM:SS.mmm LEVEL message`, coloured by level, in local time; level and message made visible. */
export function eventLine(event: { level: string; message: string; timestamp?: string | undefined }, p: Palette): string {
  const when = event.timestamp === undefined ? new Date() : new Date(event.timestamp);
  const time = Number.isNaN(when.getTime()) ? '--:--:--.---' : clock(when);
  return `${p.dim(time)} ${levelColour(p, event.level)(visible(event.level).padEnd(17))} ${visible(event.message)}\n`;
}

/** The line `events` starts with on stderr: which agent it follows, and how to stop. */
export function followingText(endpoint: AgentEndpoint, p: Palette): string {
  const agent = endpoint.agentVersion === null ? '(old, no version)' : visible(endpoint.agentVersion);
  return `${p.dim(PREFIX)} following agent ${agent} on 127.0.0.1:${endpoint.port} (${visible(endpoint.source)}); Ctrl-C to stop\n`;
}

/** The line on stderr once stdout takes lines again after `events` dropped `dropped` of them (its reader did not keep up). */
export function droppedText(dropped: number, p: Palette): string {
  return `${p.dim(PREFIX)} ${p.yellow('warning:')} dropped ${dropped} event line(s): stdout's reader did not keep up (the stream was read all along; only the oldest waiting lines were dropped)\n`;
}

function clock(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}
