/**
 * Starts loading the CLI's core (`cli-core.ts`) as the first thing `cli.ts` does, before
 * commander is set up: reading the core's chunk from disk then overlaps with building and
 * parsing the command line. Not for `--version` and `--help`, which never need the core.
 */

type Core = typeof import('./cli-core.js');

const words = process.argv.slice(2);
const own = words.includes('--') ? words.slice(0, words.indexOf('--')) : words;
const started: Promise<Core> | undefined = own.some((w) => w === '-V' || w === '--version' || w === '-h' || w === '--help') ? undefined : import('./cli-core.js');
// Marks a failed load as handled here; whoever needs the core awaits `loadCore()` and sees the error.
started?.catch(() => undefined);

/** The CLI's core: the load started at start-up, or a new one. */
export function loadCore(): Promise<Core> {
  return started ?? import('./cli-core.js');
}
