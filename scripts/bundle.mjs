/**
 * Bundles the CLI into dist/cli.js and its chunks in dist/cli-chunks/, after `tsc` has emitted
 * the library (dist/index.js and its .d.ts files, which stay as tsc wrote them).
 *
 * Why: Node's ESM loader resolves, reads and links every module file on its own; the CLI's
 * module graph (about 120 files across commander, execa, zod, proper-lockfile and their
 * dependencies) cost 100+ ms of a 300 ms run before any work. Bundled, the code arrives
 * pre-resolved in one file. Dependencies' licence comments are kept.
 *
 * Code splitting: what `cli.ts` loads with `import()` (the build command and the core, the
 * subcommands' work) lands in chunks, so `--version` and `--help` compile commander and the
 * option definitions only, not the whole CLI (V8 compiles every byte of a module it loads).
 */
import fs from 'node:fs';
import { build } from 'esbuild';

const CHUNKS = 'dist/cli-chunks';
// Chunk names carry a content hash: drop the previous build's.
fs.rmSync(CHUNKS, { recursive: true, force: true });

await build({
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: 'cli-chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  // Bundled CommonJS dependencies (commander, proper-lockfile, write-file-atomic) call
  // require() for Node's built-in modules and read __filename, which an ES module lacks.
  banner: {
    js: [
      "import { createRequire as __reclazzRequire } from 'node:module';",
      "import { fileURLToPath as __reclazzPath } from 'node:url';",
      'const require = __reclazzRequire(import.meta.url), __filename = __reclazzPath(import.meta.url);',
    ].join(' '),
  },
  logLevel: 'warning',
});
