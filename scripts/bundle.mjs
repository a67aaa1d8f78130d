/**
 * Bundles the CLI into one CommonJS file, dist/cli.cjs, and its start-up code into
 * dist/launch.cjs, after `tsc` has emitted the library (dist/index.js and its .d.ts files, which
 * stay as tsc wrote them).
 *
 * Why one file: Node's ESM loader resolves, reads and links every module file on its own; the
 * CLI's module graph (about 120 files across commander, execa, zod, proper-lockfile and their
 * dependencies) cost 100+ ms of a 300 ms run before any work. Why CommonJS: bin/reclazz-build.cjs
 * compiles it with V8's code cache (src/cli/launch.ts), which Node 20 offers for scripts, not for ES
 * modules. What `cli/main.ts` loads with `import()` (cli/core.ts: the build and the subcommands'
 * work) stays behind a lazy initialiser, so `--version` and `--help` do not run its set-up.
 * Dependencies' licence comments are kept.
 */
import fs from 'node:fs';
import { build } from 'esbuild';

// Output of an earlier layout (an ES module entry with chunks).
fs.rmSync('dist/cli-chunks', { recursive: true, force: true });

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/cli.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  // cli/main.ts reads its version through createRequire(import.meta.url), which a CommonJS file lacks.
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
