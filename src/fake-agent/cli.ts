/**
 * `reclazz-fake-agent` (bin/reclazz-fake-agent.js imports this): start the fake agent from
 * command-line arguments, print `fake agent listening on 127.0.0.1:<port> (port file <path>)`,
 * run until SIGINT/SIGTERM, then delete the port file and exit 0; SIGHUP restarts the app's JVM
 * (restartJvm: a new session, a new port in the port file). Usage: `--help`.
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
  // SIGHUP: the app restarts (a restart command for tests: kill -HUP <pid>), as its JVM would.
  process.on('SIGHUP', () => {
    agent.restartJvm().then(
      () => process.stdout.write(`fake agent restarted: listening on 127.0.0.1:${agent.port}, session ${agent.sessionId}\n`),
      (error: unknown) => process.stderr.write(`reclazz-fake-agent: restart failed: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
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
