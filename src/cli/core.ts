/**
 * Everything the command line loads only when it has work to do: the build command and the
 * agent subcommands' work. Imported with `import()`, so `--version` and `--help` never run
 * its modules' set-up (execa, zod schemas, ...): in the bundle they wait behind one lazy
 * initialiser (see scripts/bundle.mjs).
 */
export { buildAction } from './build.js';
export { watchAction } from './watch.js';
export { doctorAction, eventsAction, reloadAction, scanAction, verifyAction } from './actions.js';
