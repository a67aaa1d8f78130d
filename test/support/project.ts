/**
 * A throwaway Java-like project for end-to-end fault tests: class files under target/classes,
 * a fake agent watching them, and build commands (`-- sh -c ...`, or `-- node -e ...` when signals
 * matter) that record when they ran, rewrite class files in place like javac, and can sleep and
 * report the signals they got.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from './agents.js';
import { tempDir, writeClass } from './cli.js';

/** A project folder and the files the build command writes. */
export interface Project {
  dir: string;
  classes: string;
  /** Written by the build command when it starts (its content: `<epoch ms> <pid>`). */
  marker: string;
  /** Written by a signal-aware build when it ends: JSON {signals, endedAtMs, grandchildSignals}. */
  ended: string;
  /** A signal-aware build appends each signal it receives here, one per line, as it arrives. */
  signalLog: string;
  /** Where a fake agent writes its port file (`.reclazz/agent.port`). */
  portFile: string;
}

/** A project whose classes Greeter, Outer and Outer$Inner count as loaded by the app. */
export function project(): Project {
  const dir = tempDir();
  const classes = path.join(dir, 'target', 'classes');
  writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
  writeClass(classes, 'com.acme.Outer', 'outer-v1');
  writeClass(classes, 'com.acme.Outer$Inner', 'inner-v1');
  return {
    dir,
    classes,
    marker: path.join(dir, 'build-ran'),
    ended: path.join(dir, 'build-ended.json'),
    signalLog: path.join(dir, 'build-signals.log'),
    portFile: path.join(dir, '.reclazz', 'agent.port'),
  };
}

/**
 * Starts a fake agent watching the project's classes with short capture/reload delays; `registry`
 * collects it for stopping. Its stand-in JVM starts after the project's classes were written.
 */
export async function agentFor(p: Project, registry: FakeAgent[], options: FakeAgentOptions = {}): Promise<FakeAgent> {
  await appStartsLater();
  const agent = await startFakeAgent({ watchDirs: [p.classes], captureDelayMs: 20, reloadMs: 20, heartbeatMs: 0, ...options });
  registry.push(agent);
  return agent;
}

/** Options for {@link buildCommand}. */
export interface BuildOptions {
  /** Class binary name -> new bytes, written in place after the marker. */
  writes?: Record<string, string>;
  /** Exit status (default 0). */
  exit?: number;
  /** Sleep this long before exiting, in ms (default 0): for a build whose length is what is tested. */
  sleepMs?: number;
  /**
   * Run until this file exists (checked every 20 ms), then exit: a build the test ends when it
   * is ready, never a guessed sleep. {@link release} writes it.
   */
  until?: string;
  /**
   * Record SIGINT/SIGTERM and exit 128+N on the first one (default), or ignore them
   * (`'ignore'`: only SIGKILL ends it). A grandchild in the same process group records what
   * it receives too, proving a signal went to the whole group. Results go to `Project.ended`.
   */
  signals?: 'exit' | 'ignore';
}

/** `'text'` for sh, whatever `text` holds. */
function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The build as a `sh -c` script, for builds that need no signal handling: a shell starts in a
 * millisecond where node takes a tenth of a second of CPU, and the suite runs a thousand builds.
 */
function shellBuild(p: Project, options: BuildOptions): string[] {
  const { writes = {}, exit = 0, sleepMs = 0, until } = options;
  const lines = [`printf '%s %s' "$(date +%s%3N)" "$$" > ${shQuote(p.marker)}`];
  for (const [name, bytes] of Object.entries(writes)) {
    const file = path.join(p.classes, ...name.split('.')) + '.class';
    lines.push(`mkdir -p ${shQuote(path.dirname(file))}`, `printf '%s' ${shQuote(bytes)} > ${shQuote(file)}`);
  }
  // A run killed mid-build (SIGKILL) cannot end its build: the build ends itself once the test removed its folder.
  if (until !== undefined) lines.push(`while [ ! -e ${shQuote(until)} ]; do [ -e ${shQuote(p.marker)} ] || exit 1; sleep 0.02; done`);
  else if (sleepMs > 0) lines.push(`sleep ${sleepMs / 1000}`);
  lines.push(`exit ${exit}`);
  return ['--', 'sh', '-c', lines.join('\n')];
}

/** The build command for the CLI: `-- sh -c <script>`, or `-- node -e <script>` when it records signals. */
export function buildCommand(p: Project, options: BuildOptions = {}): string[] {
  if (options.signals === undefined) return shellBuild(p, options);
  const { writes = {}, exit = 0, sleepMs = 0, signals, until } = options;
  const grandchild = `process.on('SIGINT',()=>{console.log('SIGINT');process.exit(0)});process.on('SIGTERM',()=>{console.log('SIGTERM');process.exit(0)});setTimeout(()=>{},60000);console.log('ready')`;
  const script = `
    const fs = require('fs'), path = require('path'), cp = require('child_process');
    const got = [];
    let grand = '';
    const finish = (code) => {
      const write = () => { fs.writeFileSync(${JSON.stringify(p.ended)}, JSON.stringify({ signals: got, endedAtMs: Date.now(), grandchildSignals: grand.split('\\n').filter((l) => l.startsWith('SIG')) })); process.exit(code); };
      gc.once('exit', write); setTimeout(write, 1000);
    };
    const gc = cp.spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: ['ignore', 'pipe', 'inherit'] });
    gc.stdout.on('data', (d) => { grand += d; });
    for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { got.push(s); fs.appendFileSync(${JSON.stringify(p.signalLog)}, s + String.fromCharCode(10)); ${signals === 'exit' ? "finish(s === 'SIGINT' ? 130 : 143);" : ''} });
    const start = () => {
      fs.writeFileSync(${JSON.stringify(p.marker)}, Date.now() + ' ' + process.pid);
      for (const [name, bytes] of Object.entries(${JSON.stringify(writes)})) {
        const file = path.join(${JSON.stringify(p.classes)}, ...name.split('.')) + '.class';
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, bytes);
      }
      const end = () => { gc.kill(); process.exit(${exit}); };
      ${
        until === undefined
          ? `setTimeout(end, ${sleepMs});`
          : `const poll = () => (fs.existsSync(${JSON.stringify(until)}) ? end() : fs.existsSync(${JSON.stringify(p.marker)}) ? setTimeout(poll, 20) : process.exit(1)); poll();`
      }
    };
    gc.stdout.once('data', start);`;
  return ['--', process.execPath, '-e', script];
}

/** Writes the file a build waits for (`until`), so that it goes on and exits. */
export function release(file: string): void {
  fs.writeFileSync(file, '');
}

/** What a signal-aware build recorded (see {@link BuildOptions.signals}), or undefined if it never ended by itself. */
export function buildEnded(p: Project): { signals: string[]; endedAtMs: number; grandchildSignals: string[] } | undefined {
  return fs.existsSync(p.ended) ? JSON.parse(fs.readFileSync(p.ended, 'utf8')) : undefined;
}

/** When the build command started, in epoch ms (from its marker). */
export function buildStartedAtMs(p: Project): number {
  return Number(fs.readFileSync(p.marker, 'utf8').split(' ')[0]);
}

/** The pid of the build command that ran (from its marker). */
export function buildPid(p: Project): number {
  return Number(fs.readFileSync(p.marker, 'utf8').split(' ')[1]);
}

/** True when process `pid` has ended (gone, or a zombie nobody reaped yet). */
export function processGone(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true;
  }
}

/** The signals a signal-aware build has received so far, in order. */
export function buildSignals(p: Project): string[] {
  return fs.existsSync(p.signalLog) ? fs.readFileSync(p.signalLog, 'utf8').split('\n').filter(Boolean) : [];
}

/** True when the build command started. */
export function buildRan(p: Project): boolean {
  return fs.existsSync(p.marker);
}

/**
 * The agent's received lines (from index `from` on) reduced to verbs: `BUILD started`, `DOCTOR`,
 * `VERIFY`. `RELOAD status` is left out: a build reads it before every build and while VERIFY
 * waits, and it changes nothing.
 */
function verbs(agent: FakeAgent, from = 0): string[] {
  return agent.received
    .slice(from)
    .filter((r) => !r.line.startsWith('RELOAD status '))
    .map((r) => (r.line.startsWith('BUILD ') ? r.line.split(' ').slice(0, 2).join(' ') : r.line.split(' ')[0]!));
}

/** Like {@link verbs}, with runs of VERIFY collapsed to one `VERIFY...`. */
export function flow(agent: FakeAgent, from = 0): string[] {
  const out: string[] = [];
  for (const verb of verbs(agent, from))
    if (!(verb === 'VERIFY' && out[out.length - 1] === 'VERIFY...')) out.push(verb === 'VERIFY' ? 'VERIFY...' : verb);
  return out;
}

/** `request=` token of a received BUILD line. */
export function requestToken(line: string): string | undefined {
  return /request=([A-Za-z0-9_-]+)/.exec(line)?.[1];
}

/** An INFO event line as the agent formats it. */
export function info(message: string): string {
  return JSON.stringify({ level: 'INFO', message, timestamp: new Date().toISOString() });
}

/** True when `stderr` holds a JavaScript stack trace (or the CLI's internal-error line). */
export function hasStackTrace(stderr: string): boolean {
  return (
    /^\s+at .+(\(|:\d+)/m.test(stderr) ||
    /internal error/.test(stderr) ||
    /\b(TypeError|ReferenceError|RangeError|SyntaxError)\b/.test(stderr)
  );
}
