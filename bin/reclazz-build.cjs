#!/usr/bin/env node
// The CLI runs from one bundled file, compiled with V8's code cache (see src/cli/launch.ts).
require('../dist/launch.cjs').launch(require.resolve('../dist/cli.cjs'), process.argv.slice(2));
