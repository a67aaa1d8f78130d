/** The cycle scheduler under fake timers: debounce, coalescing, no overlap, stop. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCycleScheduler, type CycleEnd, type CycleScheduler } from '../../src/watch/scheduler.js';

/**
 * A runCycle whose cycles end when the test says so, or, like a real cycle, when their signal is
 * aborted (unless `settleOnAbort` is false).
 */
function controlledCycles(settleOnAbort = true) {
  const calls: { changed: readonly string[]; signal: AbortSignal; finish: (value: string) => void; fail: (error: unknown) => void }[] = [];
  let running = 0;
  let maxRunning = 0;
  const runCycle = (changed: readonly string[], signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      const done = () => (running -= 1);
      if (settleOnAbort) signal.addEventListener('abort', () => (done(), resolve('aborted')), { once: true });
      calls.push({
        changed,
        signal,
        finish: (value) => (done(), resolve(value)),
        fail: (error) => (done(), reject(error)),
      });
    });
  return { calls, runCycle, maxRunning: () => maxRunning };
}

let scheduler: CycleScheduler | undefined;
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(async () => {
  const stopping = scheduler?.stop();
  scheduler = undefined;
  await vi.runAllTimersAsync();
  await stopping;
  vi.useRealTimers();
});

function make(options: { debounceMs?: number; settleOnAbort?: boolean } = {}) {
  const cycles = controlledCycles(options.settleOnAbort);
  const starts: number[] = [];
  const ends: CycleEnd<string>[] = [];
  scheduler = createCycleScheduler({
    runCycle: cycles.runCycle,
    debounceMs: options.debounceMs,
    onCycleStart: (start) => starts.push(start.cycle),
    onCycleEnd: (end) => ends.push(end),
  });
  return { s: scheduler, ...cycles, starts, ends };
}

describe('createCycleScheduler', () => {
  it('runs one cycle for a burst of edits, after the quiet period (300 ms by default), with the paths sorted and unique', async () => {
    const { s, calls } = make();
    s.notify('/p/B.java');
    await vi.advanceTimersByTimeAsync(100);
    s.notify(['/p/A.java', '/p/B.java']);
    await vi.advanceTimersByTimeAsync(299);
    expect(calls).toHaveLength(0);
    expect(s.state).toBe('waiting');
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.changed).toEqual(['/p/A.java', '/p/B.java']);
    expect(s.state).toBe('running');
    calls[0]!.finish('ok');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
    expect(s.state).toBe('idle');
  });

  it('runs exactly one extra cycle for edits during a cycle, never two at once, a quiet period after the last edit', async () => {
    const { s, calls, maxRunning, ends } = make({ debounceMs: 200 });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(200);
    expect(calls).toHaveLength(1);
    for (const name of ['B', 'C', 'B', 'D']) {
      s.notify(`/p/${name}.java`);
      await vi.advanceTimersByTimeAsync(500);
    }
    expect(calls).toHaveLength(1); // still running
    calls[0]!.finish('first');
    await vi.advanceTimersByTimeAsync(0);
    // The last edit was 500 ms ago, more than the quiet period: the next cycle starts at once.
    expect(calls).toHaveLength(2);
    expect(calls[1]!.changed).toEqual(['/p/B.java', '/p/C.java', '/p/D.java']);
    calls[1]!.finish('second');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(2);
    expect(maxRunning()).toBe(1);
    expect(ends.map((e) => [e.cycle, e.outcome])).toEqual([
      [1, { ok: true, value: 'first' }],
      [2, { ok: true, value: 'second' }],
    ]);
  });

  it('waits out the quiet period after a cycle when the last edit during it was recent', async () => {
    const { s, calls } = make({ debounceMs: 300 });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(300);
    await vi.advanceTimersByTimeAsync(1000);
    s.notify('/p/B.java');
    await vi.advanceTimersByTimeAsync(100);
    calls[0]!.finish('ok');
    await vi.advanceTimersByTimeAsync(199);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
  });

  it('runs 3 cycles for 3 edits spaced beyond the quiet period', async () => {
    const { s, calls, starts } = make({ debounceMs: 300 });
    for (const name of ['A', 'B', 'C']) {
      s.notify(`/p/${name}.java`);
      await vi.advanceTimersByTimeAsync(400);
      calls.at(-1)!.finish(name);
      await vi.advanceTimersByTimeAsync(400);
    }
    expect(calls.map((c) => c.changed)).toEqual([['/p/A.java'], ['/p/B.java'], ['/p/C.java']]);
    expect(starts).toEqual([1, 2, 3]);
    expect(s.cycles).toBe(3);
  });

  it('stop during a cycle aborts its signal with the reason and resolves only once the cycle has settled', async () => {
    const { s, calls, ends } = make({ debounceMs: 0, settleOnAbort: false });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(0);
    s.notify('/p/B.java'); // pending: dropped by stop
    let stopped = false;
    const stopping = s.stop('SIGINT').then(() => (stopped = true));
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(calls[0]!.signal.reason).toBe('SIGINT');
    await vi.advanceTimersByTimeAsync(1000);
    expect(stopped).toBe(false);
    calls[0]!.finish('interrupted');
    await stopping;
    expect(ends).toEqual([
      { cycle: 1, changed: ['/p/A.java'], durationMs: expect.any(Number), aborted: true, outcome: { ok: true, value: 'interrupted' } },
    ]);
    expect(s.state).toBe('stopped');
    s.notify('/p/C.java');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
    expect(s.stop()).toBe(s.stop());
  });

  it('stop between cycles is immediate and drops pending changes', async () => {
    const { s, calls } = make({ debounceMs: 300 });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(100);
    let stopped = false;
    const stopping = s.stop().then(() => (stopped = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(stopped).toBe(true);
    await stopping;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports a cycle that threw as its outcome, and goes on', async () => {
    const { s, calls, ends } = make({ debounceMs: 10 });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(10);
    const boom = new Error('boom');
    calls[0]!.fail(boom);
    await vi.advanceTimersByTimeAsync(0);
    expect(ends[0]!.outcome).toEqual({ ok: false, error: boom });
    s.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(2);
  });

  it('passes what a callback throws to onError, and still runs the cycle', async () => {
    const errors: unknown[] = [];
    const cycles = controlledCycles();
    scheduler = createCycleScheduler({
      runCycle: cycles.runCycle,
      debounceMs: 0,
      onCycleStart: () => {
        throw new Error('renderer broke');
      },
      onError: (error) => errors.push(error),
    });
    scheduler.notify('/p/A.java');
    await vi.advanceTimersByTimeAsync(0);
    expect(cycles.calls).toHaveLength(1);
    expect(errors).toEqual([new Error('renderer broke')]);
  });

  it('ignores an empty notify', async () => {
    const { s } = make();
    s.notify([]);
    expect(s.state).toBe('idle');
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 31])('rejects a debounce of %s ms, naming the range', (debounceMs) => {
    expect(() => createCycleScheduler({ runCycle: async () => 0, debounceMs })).toThrow(/whole number of ms from 0 to 2147483647/);
  });
});
