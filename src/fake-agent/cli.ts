/**
 * `reclazz-fake-agent` (bin/reclazz-fake-agent.js imports this): start the fake agent from
 * command-line arguments, print `fake agent listening on 127.0.0.1:<port> (port file <path>)`,
 * run until SIGINT/SIGTERM, then delete the port file and exit 0. Usage: `--help`.
 */
import { CommanderError } from 'commander';
import { runFakeAgentCli } from './cli-run.js';

try {
  const agent = await runFakeAgentCli(process.argv.slice(2));
  const shutdown = (): void => {
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help / --version, or a usage error commander already printed.
    process.exit(error.exitCode);
  }
  process.stderr.write(`reclazz-fake-agent: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
