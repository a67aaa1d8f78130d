/**
 * A failed build that wrote nothing need not leave the agent holding: Maven's "there is no POM
 * in this directory", Gradle's "Task 'classes' not found", an option the tool does not know.
 * Left held, every reload (the IDE's too) waits until the next good build. This decides when
 * `BUILD ok` may release it instead: it captures nothing, since nothing was written.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentConnection } from '../agent/connection.js';
import type { Session } from './session.js';
import { askHeldCount } from '../agent/requests.js';
import { COARSE_CLOCK_MS } from '../classes/evidence.js';
import { pause } from '../util/wait.js';

/**
 * How long after the hold the agent has dispatched every file event from before it, in ms: its
 * pending set goes out once its oldest event is `max(1000, debounceMs)` old (debounceMs 500 by
 * default; agent-facts.md "Debounce and batching"), polled every 100 ms.
 */
const AGENT_DISPATCH_MS = 1100;

/**
 * Whether nothing below the class output directories `dirs` was added, removed or changed since
 * `sinceMs` (epoch ms): no file or folder there has a ctime that late (adding or removing an
 * entry moves its folder's), and every one of `dirsBefore` is still there. A folder that cannot
 * be read counts as written.
 */
async function wroteNothingSince(dirs: readonly string[], dirsBefore: readonly string[], sinceMs: number): Promise<boolean> {
  const cut = sinceMs - COARSE_CLOCK_MS;
  const pending = [...new Set([...dirs, ...dirsBefore])];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    try {
      if ((await fs.promises.lstat(dir)).ctimeMs >= cut) return false;
      for (const entry of await fs.promises.readdir(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) pending.push(file);
        else if ((await fs.promises.lstat(file)).ctimeMs >= cut) return false;
      }
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * How many class files the agent holds (requests.ts askHeldCount), read once its watcher has
 * dispatched what came before the hold (at `holdAtMs` + {@link AGENT_DISPATCH_MS}).
 * @returns the count; undefined when it is not known (no holding line, no marker, or interrupted).
 */
async function heldClassFiles(
  connection: AgentConnection,
  holdAtMs: number,
  nowMs: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<number | undefined> {
  const wait = holdAtMs + AGENT_DISPATCH_MS - nowMs;
  if (wait > 0 && !(await pause(wait, signal))) return undefined;
  return askHeldCount(connection, timeoutMs, signal);
}

/**
 * Whether a failed build held since `holdAtMs` (epoch ms) wrote nothing below `dirs` (the class
 * output directories after it; `dirsBefore` before it) and the agent holds no class file, read
 * once its watcher dispatched what came before the hold; the folders are looked at again after
 * that (a slow build's last child, or the IDE, may write meanwhile).
 */
export async function nothingToHold(
  session: Session,
  dirs: readonly string[],
  dirsBefore: readonly string[],
  holdAtMs: number,
): Promise<boolean> {
  if (session.signal?.aborted || !(await wroteNothingSince(dirs, dirsBefore, holdAtMs))) return false;
  const now = session.host.clock.date().getTime();
  const held = await heldClassFiles(session.connection, holdAtMs, now, session.timeoutMs, session.signal);
  return held === 0 && (await wroteNothingSince(dirs, dirsBefore, holdAtMs));
}
