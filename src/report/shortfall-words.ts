/**
 * The words of a build whose classes are not all proven live for a reason outside the VERIFY
 * round itself: folders or names the agent never reloads, and the agent's own state (its hold,
 * its compiles, its pause, its watcher, its restart notes).
 */
import type { Shortfall } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';

/** Changed classes the agent never reloads (folders it does not watch, names it excludes), and the agent option that fixes it. */
export function notWatchedWords(shortfall: Extract<Shortfall, { kind: 'not-watched' }>, live: number, total: number): Words {
  const others = total - shortfall.classes;
  const rest = others === 0 ? '' : `; ${live} of the other ${others} class(es) checked are live`;
  const { dirs, watchDirs, excludedBy = [], unseen = [] } = shortfall;
  const where = [
    ...(dirs.length > 0 ? [`lie in ${dirs.join(', ')}, which the agent does not watch`] : []),
    ...(excludedBy.length > 0 ? [`match the agent's excludePatterns ${excludedBy.join(', ')}`] : []),
    ...(unseen.length > 0
      ? [
          `lie in ${unseen.join(', ')}, where the agent attempted nothing once its capture of this build was over (not watched, or excluded)`,
        ]
      : []),
  ].join(' or ');
  const addDirs =
    watchDirs !== undefined
      ? `restart the app with the agent option watchDirs=${watchDirs} (directories separated by ';', so quote it in a shell: -javaagent:reclazz-agent.jar='watchDirs=...'; Maven's prepare-agent: -Dreclazz.watchDirs='...')`
      : `add ${dirs.join(', ')} to the agent option watchDirs= (directories separated by ';', with the ones it watches now) and restart the app`;
  const fixes = [
    ...(dirs.length > 0 ? [addDirs] : []),
    ...(excludedBy.length > 0 ? [`restart the app without ${excludedBy.join(', ')} in the agent option excludePatterns=`] : []),
    ...(unseen.length > 0
      ? [
          `see what the agent watches with reclazz-build doctor; add ${unseen.join(', ')} to its watchDirs= option (or take the class out of its excludePatterns=) and restart the app`,
        ]
      : []),
  ];
  return {
    message: `build ok, but ${shortfall.classes} changed class(es) ${where}: they never reload, not proven live${rest}`,
    hint: `${fixes.join('; ')}, then run again`,
  };
}

/** The shortfalls that come from the agent's own state: its hold, its compiles, its pause, its watcher, its restart notes. */
type AgentShortfall = Extract<Shortfall, { kind: 'hold-kept' | 'auto-compile' | 'paused' | 'watcher-starting' | 'restart-required' }>;

/** The words of a build (or, `files`, a verify of class files) that ended unproven for a reason in the agent's state. */
export function agentShortfallWords(shortfall: AgentShortfall, files = false): Words {
  switch (shortfall.kind) {
    case 'hold-kept':
      return {
        message: `build ok, but the agent could not read ${shortfall.file} when it captured this build: it reloaded nothing of it and STILL HOLDS the build for owner ${shortfall.owner}, and every later ok fails on that path until a class file exists there again or the app restarts: not proven live`,
        hint: 'rebuild that class (or put a class file back at that path), then run again here: the next run recovers the hold with the same owner',
      };
    case 'auto-compile': {
      const known =
        shortfall.from === 'options'
          ? 'its options say autoCompile=true'
          : "every receipt names bytes other than this build's, as an agent with autoCompile=true gives";
      return {
        message: `build ok, but the agent compiles the sources by itself (${known}), outside the build hold: the build's class files are not what it loads, so nothing the build wrote can be proven live`,
        hint: 'run the app without autoCompile=true in the agent options to have reclazz-build prove what the build wrote; with it, the agent reloads its own compiles and no build is needed',
      };
    }
    case 'paused':
      return {
        message: `build ok, but automatic reload is PAUSED agent-wide (by reclazz-build pause, the IDE or another client): ${shortfall.classes} changed class(es) wait as pending and reload only on resume, not proven live`,
        hint: 'reclazz-build resume (then reclazz-build verify, or run the build again, to prove them)',
      };
    case 'watcher-starting':
      return {
        message: `build ok, but the agent's file watcher had not started by the deadline (--verify-timeout): ${shortfall.classes} changed class(es) reload when it starts, not proven live`,
        hint: 'once the app is ready, prove them with reclazz-build verify (or run the build again); --wait-for-agent <ms> makes a build wait for the watcher',
      };
    case 'restart-required':
      return {
        message: `${files ? '' : 'build ok, but '}${shortfall.classes} class(es) need an app restart: the agent cannot apply their change (its words are above: "superclass change not applied; restart required", or its PENDING entry)`,
        hint: 'restart the app to load them: the agent cannot change the superclass of a loaded class (PENDING lists what waits on a restart)',
      };
  }
}
