/**
 * report/words.ts: every outcome has a message, and every refusal (a non-zero exit that is not
 * an interrupt or the build's own failure) says what to do next.
 */
import { describe, expect, it } from 'vitest';
import { exitStatus, REASON_EXIT } from '../../src/outcome/exit.js';
import type { Reason } from '../../src/outcome/outcome.js';
import { errorFact } from '../../src/outcome/events.js';
import { errorText, warningWords } from '../../src/report/step-words.js';
import { describeOutcome } from '../../src/report/words.js';
import { SAMPLE_OUTCOMES } from '../support/outcomes.js';

describe('the words of every outcome', () => {
  it('the samples cover every reason', () => {
    const covered = new Set(SAMPLE_OUTCOMES.map(([, o]) => o.reason));
    expect((Object.keys(REASON_EXIT) as Reason[]).filter((r) => !covered.has(r))).toEqual([]);
  });

  it.each(SAMPLE_OUTCOMES)('%s: a one-sentence message, and a next: hint for a refusal', (_label, outcome) => {
    const words = describeOutcome(outcome);
    expect(words.message.trim()).not.toBe('');
    expect(words.message).not.toMatch(/undefined|\[object/);
    const refusal = exitStatus(outcome) !== 0 && outcome.reason !== 'interrupted' && outcome.reason !== 'build-failed';
    if (refusal) expect(words.hint?.trim() ?? '', `${outcome.reason} needs a next: hint`).not.toBe('');
  });

  it('a DOCTOR without a reply where it answered before: not answering, the JVM stopped or hung, never starting', () => {
    const words = (answered: { pid: string; stopped: boolean }) =>
      describeOutcome({
        reason: 'agent-not-ready',
        port: 4711,
        why: { kind: 'doctor-timeout', agent: '1.4.0', timeoutMs: 5000, answered },
      });
    const base = 'the agent on port 4711 does not answer: no reply to DOCTOR within 5000 ms, where it answered before';
    expect(words({ pid: '4242', stopped: true })).toEqual({
      message: `${base}; its JVM (pid 4242) is stopped`,
      hint: 'continue it (kill -CONT 4242, fg in its terminal, or resume it in its debugger), then build again',
    });
    expect(words({ pid: '4242', stopped: false })).toEqual({
      message: `${base}: is its JVM (pid 4242) stopped or hung?`,
      hint: 'check the app (a thread dump: jstack 4242); once it answers, build again, or raise --timeout',
    });
    expect(words({ pid: '', stopped: false })).toEqual({
      message: `${base}: is its JVM stopped or hung?`,
      hint: 'check the app; once it answers, build again, or raise --timeout',
    });
  });

  it('the advice for a missing agent is in the hint, not the message', () => {
    const words = describeOutcome({ reason: 'no-agent', cwd: '/p', depth: 4, offerNoAgent: false });
    expect(words.message).not.toMatch(/--port/);
    expect(words.hint).toMatch(/--port <n> or --port-file <path>$/);
  });

  it("the agent's receipt capacity comes from the outcome, not a literal", () => {
    const words = describeOutcome({
      reason: 'verify-incomplete',
      applied: 100,
      total: 300,
      shortfall: { kind: 'capacity', capacity: 100 },
    });
    expect(words.message).toContain('(300 > 100)');
    expect(words.hint).toContain('the last 100 reloaded classes');
  });
});

describe('facts from a peer or the file system in the words', () => {
  it('are made visible before they are put into a sentence; the sentence keeps its own line breaks', () => {
    const words = describeOutcome({
      reason: 'ambiguous-agent',
      cwd: '/p\x1b[2J',
      portFiles: ['/p/a\n✔ fake/.reclazz/agent.port', '/p/b/.reclazz/agent.port'],
    });
    expect(words.message).toBe(
      'found 2 agent port files below /p\\x1b[2J:\n  /p/a\\x0a✔ fake/.reclazz/agent.port\n  /p/b/.reclazz/agent.port',
    );
    const state = describeOutcome({ reason: 'state-error', problem: 'cannot write /p/\u202eevil', dir: '/p', file: 'x\u009b' });
    expect(state.message).toContain('/p/\\u202eevil');
    expect(state.hint).toContain('x\\u009b');
  });

  it('in warnings too, and an internal error keeps its stack frames on their lines', () => {
    expect(warningWords({ kind: 'unreadable', files: ['/c/A\r.class'] })).toContain('/c/A\\x0d.class');
    expect(warningWords({ kind: 'unwatched', dir: '/c\x07', watched: ['/w\n'] })).toBe(
      'the agent does not watch /c\\x07: changes there will not reload (it watches /w\\x0a)',
    );
    const error = new Error('bad name com.acme.X\nreclazz-build: ✔ proven live');
    const text = warningWords({ kind: 'internal-error', error: errorFact(error) });
    expect(text.split('\n')[0]).toBe('internal error: Error: bad name com.acme.X\\x0areclazz-build: ✔ proven live');
    expect(text.split('\n')[1]).toMatch(/^ {4}at /);
    expect(errorText('just text\x1b')).toBe('just text\\x1b');
  });

  it('a changed class file VERIFY cannot take is named in the verdict, never "no class changed"', () => {
    const none = describeOutcome({ reason: 'ok', proof: { kind: 'nothing-to-prove', skipped: 2 } });
    expect(none.message).toBe(
      'build ok and acknowledged; 2 changed class file(s) not verified: no name VERIFY accepts (listed above as skipped), and no other class that was loaded before changed bytes: nothing to prove',
    );
    const some = describeOutcome({ reason: 'ok', proof: { kind: 'proven', applied: 3, skipped: 1 } });
    expect(some.message).toBe(
      'all 3 verifiable changed class(es) proven live (VERIFY applied, SHA-256 matched); 1 changed class file(s) not verified: no name VERIFY accepts (listed above as skipped)',
    );
    expect(describeOutcome({ reason: 'ok', proof: { kind: 'proven', applied: 3 } }).message).toBe(
      'all 3 changed class(es) proven live (VERIFY applied, SHA-256 matched)',
    );
  });
});

describe('a failed file watch', () => {
  it('names the fix for running out of watches or files, and nothing for other errors', () => {
    const words = (code: string) => warningWords({ kind: 'watch-failed', problem: `${code}: failed`, code });
    expect(words('ENOSPC')).toMatch(/fs\.inotify\.max_user_watches/);
    expect(words('EMFILE')).toMatch(/ulimit -n/);
    expect(words('ELOOP')).toBe('the file watch reported ELOOP: failed; changes are still found by a full pass at least every minute');
  });
});
