/**
 * The restart options of a build and of `watch` (session/restart.ts): what restarts the app when
 * a change needs it, and how long to wait for the app to come back.
 */
import type { Command } from 'commander';
import { integer } from './option-values.js';

/** Adds --restart-command, --await-restart and --restart-timeout to `command`. */
export function addRestartOptions(command: Command): Command {
  return command
    .option(
      '--restart-command <cmd>',
      'when classes need an app restart (and only then): run this shell command to restart the app, wait for it, and prove the change live there',
    )
    .option('--await-restart', 'when classes need an app restart: wait for you to restart the app, then prove the change live there')
    .option(
      '--restart-timeout <ms>',
      'how long to wait for the app to come back after a restart (default 120000)',
      integer('--restart-timeout', 1),
    );
}
