/**
 * Bundles the CLI into one CommonJS file, dist/cli.cjs, and its start-up code into
 * dist/launch.cjs, after `tsc` has emitted the library (dist/index.js and its .d.ts files, which
 * stay as tsc wrote them).
 *
 * Why one file: Node's ESM loader resolves, reads and links every module file on its own; the
 * CLI's module graph (about 120 files across commander, execa, zod, proper-lockfile and their
 * dependencies) cost 100+ ms of a 300 ms run before any work. Why CommonJS: bin/reclazz-build.cjs
 * compiles it with V8's code cache (src/cli/launch.ts), which Node 20 offers for scripts, not for ES
 * modules. What `cli/main.ts` loads with `import()` (cli/build.ts, cli/watch.ts, cli/actions.ts: the
 * build, the watch and the subcommands' work) stays behind one lazy initialiser each, so
 * `--help` runs none of their set-up and a build does not set up the watch (chokidar). The MCP
 * server (`reclazz-build mcp`) is a bundle of its own, dist/mcp.cjs, required by path.
 * Dependencies' licence comments are kept.
 */
import fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Each `import fs from 'node:fs'` (or `import * as`) of a built-in module becomes, in a CommonJS
 * bundle, one interop copy of the module's every property per importing file: 73 copies, about
 * 3 ms of each start-up. This plugin gives each built-in one shared ES module in the bundle that
 * requires it once and exports its default and its names (as Node's own ES module face of a
 * built-in does: named exports are taken when it loads, the default is the live module object).
 * `require()` calls of CommonJS dependencies stay plain `require`.
 */
const IMPORTED_GETTERS = { util: ['aborted'] };
const sharedBuiltins = {
  name: 'shared-builtins',
  setup(build) {
    const builtins = new Set(builtinModules);
    const require = createRequire(import.meta.url);
    build.onResolve({ filter: /^[a-z_/:]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (args.kind !== 'import-statement' || !builtins.has(name)) return undefined;
      return { path: name, namespace: 'builtin' };
    });
    build.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const module = require(`node:${args.path}`);
      // Data properties, and the getters named in IMPORTED_GETTERS: reading a getter may load more
      // (crypto.subtle) or warn. Importing another getter fails the build ("No matching export").
      const names = Object.keys(module).filter(
        (key) =>
          /^[A-Za-z_$][\w$]*$/.test(key) &&
          key !== 'default' &&
          ('value' in Object.getOwnPropertyDescriptor(module, key) || IMPORTED_GETTERS[args.path]?.includes(key)),
      );
      return {
        contents: [
          `const m = require(${JSON.stringify(`node:${args.path}`)});`,
          'export default m;',
          ...names.map((key) => `export const ${key} = m.${key};`),
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

/** The CLI bundle's options: `npm run modules` (scripts/modules.mjs) counts the modules of its graph. */
export const CLI_BUNDLE = {
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  plugins: [sharedBuiltins],
  // proper-lockfile's only use of graceful-fs is mkdir, stat, utimes, rmdir and realpath, none of
  // which it retries; loading it costs 2-3 ms and patches fs.close for the whole process.
  alias: { 'graceful-fs': 'node:fs' },
  // cli/main.ts reads its version through createRequire(import.meta.url), which a CommonJS file lacks.
  define: { 'import.meta.url': '__reclazzUrl' },
  banner: { js: "const __reclazzUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
};

// Run as a script (`npm run build`), not when imported for its options.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bundle();

async function bundle() {
  // Output of an earlier layout (an ES module entry with chunks).
  fs.rmSync('dist/cli-chunks', { recursive: true, force: true });

  await build(CLI_BUNDLE);

  // `reclazz-build mcp`'s server and the MCP SDK, on their own: cli/commands.ts `addMcp` requires this file only when
  // that subcommand runs, so a build's start-up neither reads nor compiles it.
  await build({
    entryPoints: ['src/mcp/main.ts'],
    outfile: 'dist/mcp.cjs',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    plugins: [sharedBuiltins],
    define: { 'import.meta.url': '__reclazzUrl' },
    banner: { js: "const __reclazzUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });

  // The start-up code of bin/reclazz-build.cjs: small, and loaded before the bundle above.
  await build({
    entryPoints: ['src/cli/launch.ts'],
    outfile: 'dist/launch.cjs',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
}
