/**
 * Watch mode on the real binary: a project with Java-like sources and a build command that
 * "compiles" each `src/main/java/**.java` into its class file (the source's bytes), fails like
 * javac on a source holding `ERROR`, and logs when it starts and ends; and the watch started with
 * `--json`, its stdout parsed line by line and its stderr kept as lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { CYCLE_BEGINS_PATTERN, CYCLE_ENDS_PATTERN } from '../../src/report/watch-lines.js';
import { startCli } from './cli.js';
import { project, type Project } from './project.js';
import { waitFor } from './wait.js';

/** A project for watch mode: {@link Project} plus its sources and build log. */
/** A cycle's start line, as an editor's `beginsPattern` matches it. */
export const CYCLE_BEGINS = new RegExp(CYCLE_BEGINS_PATTERN, 'u');
/** A cycle's end line, as an editor's `endsPattern` matches it. */
export const CYCLE_ENDS = new RegExp(CYCLE_ENDS_PATTERN, 'u');

export interface WatchProject extends Project {
  sources: string;
  /** The build command's log: `start <epoch ms>` and `end <epoch ms> <exit>` lines. */
  buildLog: string;
  /** The build command (after `--`). */
  build: string[];
}

/**
 * The fake compiler, run as `sh <script> <project>` (a shell, not node: a watch test runs it a
 * hundred times); it sleeps `<project>/build-sleep-ms` ms when that file exists, and while
 * `<project>/build-held` exists it waits until `<project>/build-go` does ({@link holdBuilds}).
 * Like javac it writes a class file in place, and only when its bytes change.
 */
const COMPILER = `dir=$1
log() { printf '%s\\n' "$1" >> "$dir/builds.log"; }
log "start $(date +%s%3N)"
if [ -e "$dir/build-held" ]; then
  while [ ! -e "$dir/build-go" ]; do sleep 0.02; done
fi
if [ -f "$dir/build-sleep-ms" ]; then
  ms=$(cat "$dir/build-sleep-ms")
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
fi
src="$dir/src/main/java"
status=0
sources=$(find "$src" -name '*.java')
while IFS= read -r file; do
  [ -n "$file" ] || continue
  if grep -q ERROR "$file"; then
    printf '%s:1: error: not a statement\\n' "$file" >&2
    status=1
    continue
  fi
  rel=\${file#"$src"/}
  out="$dir/target/classes/\${rel%.java}.class"
  mkdir -p "\${out%/*}"
  cmp -s "$file" "$out" || cat "$file" > "$out"
done <<EOF
$sources
EOF
log "end $(date +%s%3N) $status"
exit $status
`;

/** A {@link project} whose Greeter has a source, and the fake compiler for it. */
export function watchProject(): WatchProject {
  const p = project();
  const sources = path.join(p.dir, 'src', 'main', 'java');
  fs.mkdirSync(path.join(sources, 'com', 'acme'), { recursive: true });
  fs.writeFileSync(path.join(sources, 'com', 'acme', 'Greeter.java'), 'greeter-v1');
  const script = path.join(p.dir, 'compile.sh');
  fs.writeFileSync(script, COMPILER);
  return { ...p, sources, buildLog: path.join(p.dir, 'builds.log'), build: ['--', 'sh', script, p.dir] };
}

/**
 * Holds the builds that start from now on until the returned release is called (then the held
 * ones go on and later ones do not wait): a build the test knows is still running.
 */
export function holdBuilds(p: WatchProject): () => void {
  fs.writeFileSync(path.join(p.dir, 'build-held'), '');
  return () => {
    fs.rmSync(path.join(p.dir, 'build-held'));
    fs.writeFileSync(path.join(p.dir, 'build-go'), '');
  };
}

/** Writes `text` as the source of `className` (com.acme.Greeter -> src/main/java/com/acme/Greeter.java). */
export function editSource(p: WatchProject, className: string, text: string): void {
  const file = path.join(p.sources, ...className.split('.')) + '.java';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** The build command's log as [start, end] pairs in epoch ms (end undefined while it runs). */
export function builds(p: WatchProject): { start: number; end?: number }[] {
  if (!fs.existsSync(p.buildLog)) return [];
  const out: { start: number; end?: number }[] = [];
  for (const line of fs.readFileSync(p.buildLog, 'utf8').split('\n').filter(Boolean)) {
    const [word, ms] = line.split(' ');
    if (word === 'start') out.push({ start: Number(ms) });
    else out[out.length - 1]!.end = Number(ms);
  }
  return out;
}

/** A `cycle` line of `--json`. */
interface JsonCycle {
  type: 'cycle';
  cycle: number;
  changed: number;
  line: string;
  result: {
    reason: string;
    exitCode: number;
    provenLive: boolean;
    hold: string;
    agent: { sessionId: string } | null;
    classes: { className: string; status: string }[];
  };
}

/** A running watch. */
export interface RunningWatch {
  cli: ReturnType<typeof startCli>;
  /** Every JSON object it wrote to stdout so far. */
  json: Record<string, unknown>[];
  /** Every line it wrote to stderr so far. */
  stderr: string[];
  cycles(): JsonCycle[];
  /** Waits until `n` cycles have ended. */
  cyclesEnded(n: number, timeoutMs?: number): Promise<JsonCycle[]>;
  /** Waits until the watch has started watching (its `watching` news). */
  watching(timeoutMs?: number): Promise<void>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ exitCode: number }>;
}

/** Starts `reclazz-build watch --json <args> <build>` in the project. */
export function startWatch(p: WatchProject, args: string[] = []): RunningWatch {
  const cli = startCli(['watch', '--json', '--debounce', '100', ...args, ...p.build], { cwd: p.dir, timeoutMs: 600_000 });
  const json: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  readline.createInterface({ input: cli.stdout! }).on('line', (line) => json.push(JSON.parse(line) as Record<string, unknown>));
  readline.createInterface({ input: cli.stderr! }).on('line', (line) => stderr.push(line));
  const cycles = () => json.filter((j) => j.type === 'cycle') as unknown as JsonCycle[];
  const dump = () => `\n${stderr.join('\n')}`;
  return {
    cli,
    json,
    stderr,
    cycles,
    async cyclesEnded(n, timeoutMs = 30_000) {
      await waitFor(
        () => cycles().length >= n || cli.exitCode !== null,
        () => `${n} cycles${dump()}`,
        { timeoutMs },
      );
      if (cycles().length < n) throw new Error(`the watch ended after ${cycles().length} cycles${dump()}`);
      return cycles();
    },
    async watching(timeoutMs = 30_000) {
      await waitFor(
        () => json.some((j) => j.type === 'news' && j.news === 'watching'),
        () => `the watch to start${dump()}`,
        { timeoutMs },
      );
    },
    async stop(signal = 'SIGINT') {
      cli.kill(signal);
      const result = await cli;
      return { exitCode: result.exitCode ?? -1 };
    },
  };
}
