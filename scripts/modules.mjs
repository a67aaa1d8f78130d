/**
 * `npm run modules`: how many modules each kind of command line run evaluates, the project's own
 * (src/) and its dependencies', from the module graph of the CLI bundle (scripts/bundle.mjs).
 *
 * A bundle evaluates, at start, every module its entry imports statically, and a module behind an
 * `import()` (cli/main.ts: the build, the watch; cli/commands.ts: the subcommands' work;
 * tool/proc.ts: the process reader of this machine's platform) when that import runs. So a build
 * evaluates the entry's static graph, cli/build.ts's and this platform's process reader's, not what
 * only a restart loads (session/group.ts: session/restart.ts). A watch also evaluates its detection
 * from hints (session/detect.ts: classes/hinted.ts) and, once one of its apps goes away, what
 * session/group.ts loads then (session/away.ts). The MCP server is a bundle of its own
 * (dist/mcp.cjs), outside this graph.
 *
 *   node scripts/modules.mjs [--list build|watch|subcommand|help]
 */
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { CLI_BUNDLE } from './bundle.mjs';

/** The process reader tool/proc.ts loads on this platform (none elsewhere). */
const PROC = { linux: 'src/tool/proc-linux.ts', darwin: 'src/tool/proc-darwin.ts', win32: 'src/tool/proc-windows.ts' }[process.platform];

/** Each run and the modules behind `import()` that it takes. */
const RUNS = {
  help: [],
  build: ['src/cli/build.ts', PROC],
  watch: ['src/cli/watch.ts', PROC, 'src/session/away.ts', 'src/classes/hinted.ts'],
  subcommand: ['src/cli/actions.ts', PROC],
};

const { values } = parseArgs({ options: { list: { type: 'string' } } });
const { metafile } = await build({ ...CLI_BUNDLE, minify: false, write: false, metafile: true, logLevel: 'error' });
const { inputs } = metafile;
const entry = CLI_BUNDLE.entryPoints[0];

/** The modules evaluated from `entry` when the `import()`s of `taken` run (and no other). */
function evaluated(taken) {
  const seen = new Set();
  const next = [entry];
  while (next.length > 0) {
    const file = next.pop();
    if (seen.has(file) || inputs[file] === undefined) continue;
    seen.add(file);
    for (const edge of inputs[file].imports) {
      if (edge.external || (edge.kind === 'dynamic-import' && !taken.includes(edge.path))) continue;
      next.push(edge.path);
    }
  }
  return [...seen].filter((file) => !file.startsWith('builtin:'));
}

const own = (files) => files.filter((file) => file.startsWith('src/'));
const all = Object.keys(inputs).filter((file) => !file.startsWith('builtin:'));
if (values.list !== undefined) {
  if (RUNS[values.list] === undefined) throw new Error(`--list: one of ${Object.keys(RUNS).join(', ')}`);
  process.stdout.write(`${own(evaluated(RUNS[values.list])).sort().join('\n')}\n`);
} else {
  process.stdout.write(
    `modules evaluated, of ${own(all).length} of the project's and ${all.length - own(all).length} of its dependencies in the CLI bundle:\n`,
  );
  for (const [run, taken] of Object.entries(RUNS)) {
    const files = evaluated(taken);
    process.stdout.write(
      `  ${run.padEnd(10)} ${String(own(files).length).padStart(3)} of the project's, ${files.length - own(files).length} of dependencies\n`,
    );
  }
}
