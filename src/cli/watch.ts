/**
 * `reclazz-build watch` behind the command line (`main.ts` loads it only to watch): reads the
 * config, resolves the settings, renders the watch (the cycle lines and news on stderr; with
 * --json, one JSON object per line on stdout: the events, a `cycle-start` and a `cycle` object
 * per cycle, `news`, and one final `result`) and runs the core (`watch/loop.ts`).
 */
import { LIVE_VERDICTS, type ToolKind } from '../outcome/facts.js';
import type { RunResult } from '../outcome/result.js';
import { HumanReporter } from '../report/human.js';
import { eventToJson, jsonLine, resultToJson, wordsOf } from '../report/json.js';
import { describeResult } from '../report/words.js';
import { verdictWords } from '../report/verdict-words.js';
import { paletteFor, visible } from '../report/palette.js';
import { cycleEndLine, cycleStartLine, endLineOf, newsLine } from '../report/watch-lines.js';
import type { WatchHooks, WatchOptions } from '../watch/cycles.js';
import { runWatch, type WatchResult } from '../watch/loop.js';
import { type CliOptions, type Interrupts, readBuildOptions } from './build.js';
import { processHost } from './host.js';
import { writeStdout } from './stdout.js';
import { collectGarbage, withSmallYoungGeneration } from './memory.js';

/** The watch command's own switch, besides the build's options (`--watch` and `--debounce` are options.ts's). */
export interface WatchFlags extends CliOptions {
  exitOnAgentLoss?: boolean;
}

/** Lists at most this many classes that were not proven live under a cycle's end line. */
const MAX_LISTED = 10;

/**
 * Watches from the command line until Ctrl-C or SIGTERM (or another end, see watch/loop.ts).
 * @returns the exit status (an invalid config is reported here and gives 2).
 */
export async function watchAction(tool: ToolKind, args: string[], opts: WatchFlags, interrupts: Interrupts): Promise<number> {
  const read = readBuildOptions(tool, args, opts);
  if (typeof read === 'number') return read;
  const { config } = read;
  const debounceMs = opts.debounce ?? config.debounceMs;
  const options: WatchOptions = {
    ...read.options,
    watch: [...(config.watch ?? []), ...(opts.watch ?? [])],
    exitOnAgentLoss: opts.exitOnAgentLoss === true,
    ...(debounceMs === undefined ? {} : { debounceMs }),
  };
  const output = watchOutput(opts);
  const signals = interrupts(() => output.owner);
  // Each cycle's young generation kept small, as a build's (memory.ts).
  const result = await withSmallYoungGeneration(() => runWatch(options, { ...output.hooks, signal: signals.signal }, processHost()));
  signals.dispose();
  output.result(result);
  return result.exitCode;
}

/** The renderers of one watch. */
function watchOutput(opts: WatchFlags): { hooks: WatchHooks; result: (result: WatchResult) => void; owner: string | undefined } {
  const err = (text: string) => process.stderr.write(text);
  const json = (value: unknown) => opts.json && writeStdout(`${jsonLine(value)}\n`);
  const human = new HumanReporter({
    write: err,
    live: false,
    // The cycle lines say what each cycle did; the routine steps come with --verbose.
    quiet: opts.verbose !== true,
    verbose: opts.verbose === true,
    paint: paletteFor(process.stderr, process.env),
  });
  const output = {
    owner: undefined as string | undefined,
    lastLine: undefined as string | undefined,
    hooks: {
      onEvent: (event) => {
        if (event.type === 'hold') output.owner = event.owner;
        if (opts.json) writeStdout(`${eventToJson(event)}\n`);
        human.event(event);
      },
      onNews: (news) => {
        const line = newsLine(news);
        json({ type: 'news', news: news.kind, line });
        if (opts.quiet !== true || news.kind === 'agent-lost') err(`${line}\n`);
      },
      onCycleStart: ({ cycle, changed, at }) => {
        json({ type: 'cycle-start', cycle, changed: changed.length });
        err(`${cycleStartLine({ at, changed: changed.length })}\n`);
      },
      onCycleEnd: ({ cycle, changed, result, end }) => {
        const line = cycleEndLine(endLineOf(result, end));
        json({ type: 'cycle', cycle, changed: changed.length, line, result: resultToJson(result) });
        if (!result.provenLive) err(details(result));
        err(`${line}\n`);
        output.lastLine = line;
        // Between cycles: else the watch's heap grows (memory.ts).
        collectGarbage();
      },
    } satisfies WatchHooks,
    result: (result: WatchResult) => {
      json({
        type: 'result',
        action: 'watch',
        reason: result.reason,
        exitCode: result.exitCode,
        ...wordsOf(result),
        cycles: result.cycles,
        hold: result.hold,
        owner: result.owner ?? null,
        last: result.last === undefined ? null : resultToJson(result.last),
        durationMs: result.durationMs,
      });
      const words = describeResult(result);
      err(`reclazz-build: ${visible(words.message)}\n${words.hint === undefined ? '' : `next: ${visible(words.hint)}\n`}`);
      // The last line: how the last cycle ended (not itself a cycle line: it does not start with the clock).
      err(`reclazz-build: ${output.lastLine === undefined ? 'no cycle ran' : `last cycle: ${output.lastLine}`}\n`);
    },
  };
  return output;
}

/** What a cycle that is not all proven live says before its end line: the classes not proven, the outcome's words. */
function details(result: RunResult): string {
  const notLive = result.verdicts.filter((v) => !LIVE_VERDICTS.has(v.status));
  const listed = notLive.slice(0, MAX_LISTED).map((v) => {
    const detail = verdictWords(v);
    return `  ${v.status} ${visible(v.className)}${detail ? `: ${visible(detail)}` : ''}\n`;
  });
  const more = notLive.length > MAX_LISTED ? [`  ... and ${notLive.length - MAX_LISTED} more\n`] : [];
  // A failed build's words are its end line's; an interrupt's are the watch's last words (it ends the watch).
  const { message, hint } = describeResult(result);
  const words =
    result.reason === 'build-failed' || result.reason === 'interrupted'
      ? []
      : [`  ${visible(message)}\n`, ...(hint ? [`  next: ${visible(hint)}\n`] : [])];
  return [...listed, ...more, ...words].join('');
}
