/**
 * Fake agents for end-to-end tests of a project folder: one call per test, all stopped after
 * each test.
 */
import path from 'node:path';
import { afterEach } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';

/**
 * How long after its classes are written an app starts, in ms: a class file counts as there
 * before the app's JVM started only when its ctime is earlier than the JVM's start time by
 * more than the start time's error (about 11 ms on Linux), so tests leave a real gap.
 */
const APP_START_GAP_MS = 50;

/** Waits {@link APP_START_GAP_MS}: call after writing the classes the app starts with, before starting its agent. */
export function appStartsLater(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, APP_START_GAP_MS));
}

/** A project folder and the class output directory the agent watches. */
export interface AgentProject {
  dir: string;
  classes: string;
}

/**
 * Registers an afterEach that stops every agent started, and returns the starter: a fake agent
 * watching `p.classes`, with its port file at `<p.dir>/.reclazz/agent.port`, fast capture and
 * reload (20 ms), then `defaults`, then the call's own `options`. Write the classes the app
 * starts with first: its stand-in JVM starts with it ({@link appStartsLater}).
 */
export function useFakeAgents(defaults: FakeAgentOptions = {}): (p: AgentProject, options?: FakeAgentOptions) => Promise<FakeAgent> {
  const agents: FakeAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });
  return async (p, options = {}) => {
    await appStartsLater();
    const agent = await startFakeAgent({
      portFile: path.join(p.dir, '.reclazz', 'agent.port'),
      watchDirs: [p.classes],
      captureDelayMs: 20,
      reloadMs: 20,
      ...defaults,
      ...options,
    });
    agents.push(agent);
    return agent;
  };
}
