/**
 * The bench's watch-mode figures (registered in figures.mjs): the latency from a save to its
 * classes proven live, and the cost of detection from the class watch's hints in a big tree.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stats } from './measure.mjs';
import { measureWatchDetection } from './watch-detection.mjs';
import { classBytes } from './tree.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'reclazz-build.cjs');
const NODE = process.execPath;
const HUGE = 200_000;
/** The watch's default quiet period, in ms: the latency target is this plus 150 ms. */
const DEBOUNCE_MS = 300;
/** Classes changed per round of the detection figure. */
const CHANGED = 10;

export const WATCH_FIGURES = [
  {
    id: 'watch-latency',
    unit: 'ms',
    limit: DEBOUNCE_MS + 150,
    name: `watch mode: save -> proven live, agent applies at once, minus the build command's own time (debounce ${DEBOUNCE_MS} ms)`,
  },
  {
    id: 'watch-detect-200k',
    unit: 'ms',
    limit: 50,
    name: `watch mode: detection of ${CHANGED} changed classes in a 200,000-class tree, from the class watch's hints`,
  },
];

const median = (values) => stats(values).median;
const column = (what, values, unit = 'ms') => ({ what, median: median(values), unit });

/** A dist module of the build. */
const dist = (file) => import(pathToFileURL(path.join(ROOT, 'dist', file)).href);

/**
 * `reclazz-build watch --json <args>` in `cwd`, its stdout read as JSON lines.
 * @returns {{ next: (type: string) => Promise<{ line: object, atMs: number }>, stop: () => Promise<number> }}
 */
function startWatch(cwd, args) {
  const env = Object.fromEntries(Object.entries({ ...process.env, CI: 'true', NO_COLOR: '1' }).filter(([k]) => !k.startsWith('RECLAZZ_')));
  const child = spawn(NODE, [BIN, 'watch', '--json', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const queue = [];
  const waiting = [];
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  readline.createInterface({ input: child.stdout }).on('line', (text) => {
    queue.push({ line: JSON.parse(text), atMs: performance.now() });
    for (const w of waiting.splice(0)) w();
  });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 128)));
  return {
    async next(type) {
      const deadline = performance.now() + 30_000;
      for (;;) {
        const at = queue.findIndex((q) => q.line.type === type);
        if (at !== -1) return queue.splice(0, at + 1).at(-1);
        if (child.exitCode !== null || performance.now() > deadline)
          throw new Error(`no ${type} line from the watch (exit ${child.exitCode})\n${stderr.slice(-2000)}`);
        await new Promise((resolve) => {
          waiting.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    async stop() {
      child.kill('SIGINT');
      return exited;
    },
  };
}

export const WATCH_JOBS = [
  {
    figures: ['watch-latency'],
    async run(ctx) {
      const dir = ctx.project('watch');
      const source = path.join(dir, 'src', 'main', 'java', 'bench', 'App.java');
      fs.mkdirSync(path.dirname(source), { recursive: true });
      fs.writeFileSync(source, 'app-v1');
      const classes = path.join(dir, 'target', 'classes');
      await ctx.startAgents([[dir, { watchDirs: [classes] }]]);
      const watch = startWatch(dir, ['--debounce', String(DEBOUNCE_MS), '--', 'cp', source, path.join(classes, 'bench', 'App.class')]);
      const totals = [];
      const builds = [];
      try {
        await watch.next('news');
        // Round 0 is the warm-up: the first cycle also reads the tree without a record.
        for (let round = 0; round <= ctx.runs; round += 1) {
          const savedAt = performance.now();
          fs.writeFileSync(source, `app-v${round + 2}`);
          const { line, atMs } = await watch.next('cycle');
          if (line.result.exitCode !== 0 || !line.result.provenLive)
            throw new Error(`cycle ${line.cycle} was not proven live: ${line.line}`);
          if (round === 0) continue;
          totals.push(atMs - savedAt);
          builds.push(line.result.build.durationMs);
        }
      } finally {
        await watch.stop();
      }
      ctx.record(
        'watch-latency',
        totals.map((total, i) => total - builds[i]),
        { measured: column('save -> proven live', totals), floor: column('the build command', builds) },
      );
    },
  },
  {
    figures: ['watch-detect-200k'],
    tree: HUGE,
    async run(ctx) {
      const tree = await ctx.tree(HUGE);
      const { watchClassDirs } = await dist('watch/classwatch.js');
      const { detectChanges } = await dist('classes/snapshot.js');
      const { detectInFolders } = await dist('classes/hinted.js');
      const { emptyIndex } = await dist('classes/columns.js');
      const { EVIDENCE } = await dist('classes/evidence.js');
      const live = { kind: 'live', evidence: EVIDENCE.proven };
      // The record a watch has after its first full pass: every class file live.
      let base = (await detectChanges(emptyIndex('bench'), [tree.classes], { judge: () => live })).index;
      const picked = Array.from({ length: CHANGED }, (_, i) =>
        path.join(tree.classes, tree.files[Math.floor((i * tree.files.length) / CHANGED)].path),
      );
      const original = picked.map((file) => fs.readFileSync(file));
      let found = 0;
      try {
        const measured = await measureWatchDetection({
          watchClassDirs,
          classDirs: [tree.classes],
          rounds: ctx.runs + 1,
          change: (round) =>
            picked.forEach((file, i) => fs.writeFileSync(file, Buffer.concat([classBytes(original[i].length), Buffer.from(`r${round}`)]))),
          // What a cycle does with the hints (session/check.ts): the scan of those folders against the record.
          detect: async (folders) => {
            const detection = await detectInFolders(base, [tree.classes], folders, {
              judge: (file) => (file.sameBytes ? live : { kind: 'verify', by: 'build', liveUnknown: false }),
            });
            found = detection.changes.changed.length;
            if (found !== CHANGED) throw new Error(`detection found ${found} changed classes, ${CHANGED} were changed`);
            base = detection.index;
          },
        });
        const rounds = measured.rounds.slice(1);
        ctx.record(
          'watch-detect-200k',
          rounds.map((r) => r.detectMs),
          {
            details: {
              watchReadyMs: measured.readyMs,
              watchReadyRssMB: measured.readyRss / 1e6,
              eventsMs: median(rounds.map((r) => r.eventsMs)),
              folders: median(rounds.map((r) => r.folders)),
            },
          },
        );
      } finally {
        picked.forEach((file, i) => fs.writeFileSync(file, original[i]));
      }
    },
  },
];
