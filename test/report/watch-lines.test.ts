/** The cycle lines and the problem matcher patterns that key on them. */
import { describe, expect, it } from 'vitest';
import {
  clock,
  CYCLE_BEGINS_PATTERN,
  CYCLE_ENDS_PATTERN,
  cycleEndLine,
  cycleStartLine,
  newsLine,
  type EndLine,
} from '../../src/report/watch-lines.js';
import type { WatchNews } from '../../src/outcome/watch.js';
import { CYCLE_BEGINS, CYCLE_ENDS } from '../support/watch.js';

const at = new Date(2025, 0, 15, 12, 4, 29); // local time, whatever the zone
const times = { totalMs: 1900, buildMs: 1700, verifyMs: 40 };

describe('cycle lines', () => {
  it('formats the local clock as HH:MM:SS', () => {
    expect(clock(new Date(2025, 0, 1, 7, 5, 9))).toBe('07:05:09');
    expect(clock(new Date(2025, 0, 1, 23, 59, 59))).toBe('23:59:59');
  });

  it('starts a cycle with the count of changed sources', () => {
    expect(cycleStartLine({ at, changed: 2 })).toBe('12:04:29 ▶ building (2 sources changed)');
    expect(cycleStartLine({ at, changed: 1 })).toBe('12:04:29 ▶ building (1 source changed)');
    expect(cycleStartLine({ at, changed: 0 })).toBe('12:04:29 ▶ building');
  });

  it('ends a proven cycle with the classes live and the times', () => {
    expect(cycleEndLine({ kind: 'live', at, classes: 2, ...times })).toBe('12:04:29 ✔ 2 classes live in 1.9 s (build 1.7 s, verify 40 ms)');
    expect(cycleEndLine({ kind: 'live', at, classes: 1, ...times })).toBe('12:04:29 ✔ 1 class live in 1.9 s (build 1.7 s, verify 40 ms)');
    expect(cycleEndLine({ kind: 'live', at, classes: 3, holdRecovered: true, totalMs: 2049, buildMs: 1800, verifyMs: 45 })).toBe(
      '12:04:29 ✔ 3 classes live in 2.0 s (build 1.8 s, verify 45 ms; hold recovered)',
    );
    expect(cycleEndLine({ kind: 'live', at, classes: 0, totalMs: 812, buildMs: 799.6, verifyMs: 0 })).toBe(
      '12:04:29 ✔ no class changed in 812 ms (build 800 ms)',
    );
  });

  it('ends an unproven cycle with the words "not proven" and its exit status', () => {
    expect(
      cycleEndLine({ kind: 'not-proven', at, live: 2, notProven: 1, exitCode: 75, totalMs: 3100, buildMs: 1700, verifyMs: 1400 }),
    ).toBe('12:04:29 ⚠ 2 classes live, 1 not proven in 3.1 s (build 1.7 s, verify 1.4 s; exit 75)');
  });

  it('ends a failed build saying whether the agent keeps holding', () => {
    expect(cycleEndLine({ kind: 'build-failed', at, exitCode: 1, holding: true })).toBe(
      '12:04:29 ✖ build failed (exit 1): the agent keeps holding; fix and save',
    );
    expect(cycleEndLine({ kind: 'build-failed', at, exitCode: 2, holding: false })).toBe('12:04:29 ✖ build failed (exit 2): fix and save');
    expect(cycleEndLine({ kind: 'build-failed', at, signal: 'SIGKILL', holding: true })).toContain('(signal SIGKILL)');
  });

  it('ends an interrupted or otherwise failed cycle on one line, whatever the summary holds', () => {
    expect(cycleEndLine({ kind: 'interrupted', at, signal: 'SIGINT', exitCode: 130 })).toBe('12:04:29 ✖ interrupted by SIGINT (exit 130)');
    expect(cycleEndLine({ kind: 'failed', at, summary: 'the agent went away during the build\nsee above\u001b[31m', exitCode: 70 })).toBe(
      '12:04:29 ✖ the agent went away during the build\\x0asee above\\x1b[31m (exit 70)',
    );
  });

  it('says what happened to the agent between cycles', () => {
    expect(newsLine({ kind: 'agent-lost', at })).toBe('12:04:29 • agent lost: still watching sources; reconnecting when it is back');
    expect(newsLine({ kind: 'agent-back', at, pid: 4242 })).toBe('12:04:29 • agent reconnected (pid 4242)');
    expect(newsLine({ kind: 'new-app-session', at, pid: 4343 })).toBe(
      '12:04:29 • new app session (pid 4343): classes are proven again from scratch',
    );
    expect(newsLine({ kind: 'new-app-session', at, pid: 4343, restarted: true })).toBe(
      "12:04:29 • new app session (pid 4343): the app restarted for the last build's change (its line above says what was proven there); watching its new JVM",
    );
    const modules = ['a', 'b', 'c', 'd', 'e', 'f'].map((m) => `/p/${m}/src/main/java`);
    expect(newsLine({ kind: 'watching', at, folders: modules, from: '/p', debounceMs: 300 })).toBe(
      '12:04:29 • watching 6 folders: a/src/main/java, b/src/main/java, c/src/main/java, d/src/main/java and 2 more (debounce 300 ms); save a source to build',
    );
    expect(newsLine({ kind: 'watching', at, folders: ['/p/src/main/java'], from: '/p', debounceMs: 300 })).toBe(
      '12:04:29 • watching 1 folder: src/main/java (debounce 300 ms); save a source to build',
    );
  });

  it('names the app among several, and says when one is found, stopped, or proven in a new JVM', () => {
    const source = '/p/svc-b/.reclazz/agent.port';
    expect(newsLine({ kind: 'agent-lost', at, source })).toBe(
      `12:04:29 • agent lost (${source}): still watching sources; reconnecting when it is back`,
    );
    expect(newsLine({ kind: 'new-app-session', at, pid: 7, source })).toBe(
      `12:04:29 • new app session (${source}, pid 7): classes are proven again from scratch`,
    );
    expect(newsLine({ kind: 'agent-found', at, pid: 7, source })).toBe(
      `12:04:29 • agent found (${source}, pid 7): its app is in view too; every build holds its agent`,
    );
    expect(newsLine({ kind: 'agent-stopped', at, source })).toBe(
      `12:04:29 • agent stopped (${source}): its port file is gone, so its app leaves the view until an agent writes it again`,
    );
    expect(cycleEndLine({ kind: 'live', at, classes: 1, totalMs: 80, verifyMs: 40, returned: source })).toBe(
      `12:04:29 ✔ 1 class live in 80 ms (verify 40 ms; in the new JVM of ${source})`,
    );
    expect(
      cycleEndLine({ kind: 'not-proven', at, live: 0, notProven: 1, exitCode: 75, totalMs: 80, verifyMs: 0, returned: 'the app' }),
    ).toBe('12:04:29 ⚠ 0 classes live, 1 not proven in 80 ms (exit 75; in the new JVM of the app)');
  });
});

/** Every kind of line, with a few variations each. */
function allLines() {
  const starts = [0, 1, 2, 250].map((changed) => cycleStartLine({ at, changed }));
  const ends: EndLine[] = [
    { kind: 'live', at, classes: 0, ...times },
    { kind: 'live', at, classes: 1, ...times },
    { kind: 'live', at, classes: 40, holdRecovered: true, ...times },
    { kind: 'not-proven', at, live: 0, notProven: 3, exitCode: 75, ...times },
    { kind: 'not-proven', at, live: 1, notProven: 1, exitCode: 75, holdRecovered: true, ...times },
    { kind: 'build-failed', at, exitCode: 1, holding: true },
    { kind: 'build-failed', at, signal: 'SIGTERM', holding: false },
    { kind: 'interrupted', at, signal: 'SIGTERM', exitCode: 143 },
    { kind: 'failed', at, summary: 'the BUILD failed receipt never came', exitCode: 70 },
    { kind: 'live', at, classes: 1, totalMs: 80, verifyMs: 40, returned: '/p/svc-b/.reclazz/agent.port' },
    { kind: 'not-proven', at, live: 0, notProven: 2, exitCode: 75, totalMs: 80, verifyMs: 0, returned: 'the app' },
  ];
  const news: WatchNews[] = [
    { kind: 'agent-lost', at },
    { kind: 'agent-back', at },
    { kind: 'new-app-session', at, pid: 1 },
    { kind: 'new-app-session', at, pid: 1, restarted: true },
    { kind: 'agent-found', at, source: '/p/.reclazz/agent.port' },
    { kind: 'agent-stopped', at, source: '/p/.reclazz/agent.port' },
    { kind: 'watching', at, folders: ['/p/src'], from: '/p', debounceMs: 0 },
  ];
  return { starts, ends: ends.map(cycleEndLine), news: news.map(newsLine) };
}

/** Colour as a terminal renderer might add it: a dim clock and a coloured mark. */
const coloured = (line: string) => line.replace(/^(\S+) (\S)/, '\u001b[2m$1\u001b[22m \u001b[1m\u001b[32m$2\u001b[39m\u001b[22m');

/** Lines a build tool or the CLI may print in the same terminal. */
const others = [
  '[INFO] BUILD SUCCESS',
  '[ERROR] /p/src/main/java/A.java:[3,5] cannot find symbol',
  'BUILD SUCCESSFUL in 2s',
  '12:04:29 building',
  '12:04:29 ✔',
  '  12:04:29 ▶ building (2 sources changed)',
  'at 12:04:29 ✔ 2 classes live',
  '2025-01-15 12:04:29 ▶ started',
  '12:04 ▶ building',
  '',
];

describe('problem matcher patterns', () => {
  for (const flags of ['u', '']) {
    it(`match every start line and every end line, and nothing else (flags "${flags}")`, () => {
      const begins = new RegExp(CYCLE_BEGINS_PATTERN, flags);
      const ends = new RegExp(CYCLE_ENDS_PATTERN, flags);
      const lines = allLines();
      for (const line of [...lines.starts, ...lines.starts.map(coloured)]) {
        expect(begins.test(line), line).toBe(true);
        expect(ends.test(line), line).toBe(false);
      }
      for (const line of [...lines.ends, ...lines.ends.map(coloured)]) {
        expect(ends.test(line), line).toBe(true);
        expect(begins.test(line), line).toBe(false);
      }
      for (const line of [...lines.news, ...lines.news.map(coloured), ...others]) {
        expect(begins.test(line), line).toBe(false);
        expect(ends.test(line), line).toBe(false);
      }
    });
  }

  it('are exported as RegExps too', () => {
    expect(CYCLE_BEGINS.source).toBe(new RegExp(CYCLE_BEGINS_PATTERN, 'u').source);
    expect(CYCLE_ENDS.test(allLines().ends[0]!)).toBe(true);
  });
});
