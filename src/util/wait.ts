/** Waiting that a signal can cut short. */
import { setTimeout as sleep } from 'node:timers/promises';

/** Sleeps `ms` ms; resolves false (at once) when `signal` aborts or has aborted, else true. Never rejects. */
export async function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
