/**
 * `reclazz-build mcp` on the command line. The server (src/mcp/) is bundled on its own into
 * dist/mcp.cjs, beside the CLI's bundle, and required only when this subcommand runs: a build's
 * start-up neither reads nor compiles the MCP SDK.
 */
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import type { CommandHost } from './commands.js';

/** What dist/mcp.cjs exports (src/mcp/main.ts). */
interface McpBundle {
  serveMcp(start: { version: string; node: string; cli: string; signal: AbortSignal }): Promise<number>;
}

/** Registers `mcp` on `program`. */
export function addMcp(program: Command, host: CommandHost, version: string): void {
  program
    .command('mcp')
    .description('serve build, verify, doctor and status to a coding agent: an MCP server on stdin/stdout (docs/coding-agents.md)')
    .addHelpText(
      'after',
      `
A coding agent (Claude Code, Cursor, VS Code) starts it itself; stdout carries only the protocol,
its log goes to stderr. Each call runs reclazz-build with --json in the call's cwd. The set-up of
each client, the tools and what they return: docs/coding-agents.md.

Examples:
  $ claude mcp add reclazz-build -- reclazz-build mcp`,
    )
    .action(() =>
      host.run((signal) => {
        // Relative to the CLI's bundle (dist/cli.cjs), which stands in for import.meta.url there.
        const { serveMcp } = createRequire(import.meta.url)('./mcp.cjs') as McpBundle;
        return serveMcp({ version, node: process.execPath, cli: process.argv[1]!, signal });
      }),
    );
}
