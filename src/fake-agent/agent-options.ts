/**
 * The agent's own options as the fake's stand-in JVM carries them on its command line, and the
 * one of them the fake acts on besides `watchDirs`: `excludePatterns` (agent
 * config/AgentConfig.java: `key=value` pairs joined by `,`; `watchDirs` and `excludePatterns`
 * split on `;`; a pattern is a glob, `*` any run of characters and `?` one, matched against the
 * whole file name, case-sensitively).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the stand-in says the agent's jar is: a plausible path; nothing reads it. */
export function agentJarPath(version: string | null): string {
  return join(tmpdir(), 'reclazz', `reclazz-agent-${version ?? '1.0.0'}.jar`);
}

/** What the fake's own settings make of the agent's argument string. */
export interface ArgumentFacts {
  /** The watched directories as the agent would be given them (its own paths). */
  watchDirs: readonly string[];
  excludePatterns: readonly string[];
  /** The watcher's start delay, in ms (shown as whole seconds, `startupDelaySec`). */
  watcherStartMs: number;
  /** `autoCompile=true` (shown last). */
  autoCompile?: boolean;
}

/**
 * The agent's argument string for these settings, in the Maven plugin's order: `watchDirs`
 * first, then the others; empty (a bare `-javaagent:<jar>`) when there is nothing to say.
 */
export function agentArguments(facts: ArgumentFacts): string {
  const pairs: string[] = [];
  if (facts.watchDirs.length > 0) pairs.push(`watchDirs=${facts.watchDirs.join(';')}`);
  if (facts.excludePatterns.length > 0) pairs.push(`excludePatterns=${facts.excludePatterns.join(';')}`);
  if (Number.isFinite(facts.watcherStartMs) && facts.watcherStartMs > 0) {
    pairs.push(`startupDelaySec=${Math.ceil(facts.watcherStartMs / 1000)}`);
  }
  if (facts.autoCompile === true) pairs.push('autoCompile=true');
  return pairs.join(',');
}

/** A matcher of file names for `patterns` (agent AgentConfig.globToRegex and isExcluded). */
export function excludedBy(patterns: readonly string[]): (fileName: string) => boolean {
  const compiled = patterns
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== '')
    .map((pattern) => new RegExp(`^${[...pattern].map(globChar).join('')}$`));
  return (fileName) => compiled.some((regex) => regex.test(fileName));
}

function globChar(c: string): string {
  if (c === '*') return '.*';
  if (c === '?') return '.';
  return /[.\\[\](){}+^$|]/.test(c) ? `\\${c}` : c;
}
