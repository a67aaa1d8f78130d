#!/usr/bin/env node
// The CLI runs from one bundled file, compiled with V8's code cache (see src/cli/launch.ts).
// `--version` alone needs none of it: answered here, as commander answers it (`-V, --version`).
const words = process.argv.slice(2);
if (words.length === 1 && (words[0] === '--version' || words[0] === '-V')) process.stdout.write(`${require('../package.json').version}\n`);
else require('../dist/launch.cjs').launch(require.resolve('../dist/cli.cjs'), words);
