/**
 * What `reclazz-build watch` tells between its cycles' results, as facts: news of the apps in
 * view, and how a cycle ended besides its result. report/watch-lines.ts makes their lines.
 */
import type { Outcome } from './outcome.js';

/**
 * News between cycles, or during one, as it happens. With several apps in view, `source` names the
 * app: its port file (or `--port`).
 */
export type WatchNews =
  /** The agent went away; sources are still watched, and what its app runs is not proven until it is back. */
  | { kind: 'agent-lost'; at: Date; source?: string }
  /** No agent when the watch started (`why`: the refusal that found none); sources are watched. */
  | { kind: 'no-agent-yet'; at: Date; why: Outcome }
  /** The agent is back with the same app session. */
  | { kind: 'agent-back'; at: Date; pid?: number; source?: string }
  /**
   * The agent is back with a new app session (the app restarted): evidence starts from scratch.
   * `restarted`: the app restarted for the last cycle's change (--restart-command, --await-restart),
   * whose end line said what its new JVM was proven to run.
   */
  | { kind: 'new-app-session'; at: Date; pid?: number; source?: string; restarted?: boolean }
  /** Another app's agent found in the checkout: its app is in view from now on. */
  | { kind: 'agent-found'; at: Date; source: string; pid?: number }
  /** A gone agent's port file is gone too (it stopped normally): its app leaves the view. */
  | { kind: 'agent-stopped'; at: Date; source: string }
  /** The watch has started on `folders` (absolute; named relative to `from`, where it runs). */
  | { kind: 'watching'; at: Date; folders: readonly string[]; from: string; debounceMs: number };

/** How a cycle ended, besides its result. */
export interface CycleEnd {
  at: Date;
  /** The cycle before ended with the build held for us (a failed build). */
  heldBefore: boolean;
  /** The cycle is the proof in an app that came back after its agent was gone: its port file when the watch has several apps, else `the app`. */
  returned?: string;
}
