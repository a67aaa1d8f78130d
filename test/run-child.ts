/**
 * A child process for run.test.ts: runs the library's `runSafeBuild` in this process on the
 * project `dir` (an agent runs there), and while the build runs writes to `file` the code cache
 * of a small script, which carries a hash of V8's flags as they are at that moment.
 */
import fs from 'node:fs';
import vm from 'node:vm';
import { describeResult, runSafeBuild } from '../src/index.js';

const [dir, file] = process.argv.slice(2);
const source = 'function add(a, b) { return a + b; } add(1, 2);';

void (async () => {
  const result = await runSafeBuild(
    { tool: 'command', args: ['true'], cwd: dir!, sharesTerminal: false },
    {
      onEvent: (event) => {
        if (event.type === 'build-start') fs.writeFileSync(file!, new vm.Script(source).createCachedData());
      },
    },
  );
  console.log(JSON.stringify({ exitCode: result.exitCode, message: describeResult(result).message }));
})();
