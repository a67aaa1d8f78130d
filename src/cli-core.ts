/**
 * Everything the command line loads only when it has work to do: the build command and the
 * agent subcommands' work, re-exported here so that the bundle holds them in one chunk, read
 * and compiled in one go (see scripts/bundle.mjs and `cli-prefetch.ts`).
 */
export { runBuildCommand } from './cli-build.js';
export { doctorCommand, eventsCommand, reloadCommand, scanCommand, verifyCommand } from './commands/actions.js';
