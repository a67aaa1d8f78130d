/**
 * `reclazz-build mcp`: the real built server process driven over stdio by the MCP SDK's own
 * client, against the fake agent: the tools it lists, a proven build, a failed one with the
 * compiler's errors, a change that needs a restart, a cancelled build, two builds at once for one
 * checkout, a client that closes stdin mid-build; and one run through the MCP inspector's CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { FakeAgent } from '../../src/fake-agent/index.js';
import { runResultLineSchema } from '../../src/report/schema.js';
import { afterThisTest } from '../support/cleanup.js';
import { BIN, cliEnv } from '../support/cli.js';
import { sha } from '../support/evidence.js';
import { agentFor, buildCommand, buildEnded, buildRan, flow, hasStackTrace, project, type Project } from '../support/project.js';
import { Lines, waitFor } from '../support/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The environment of the server: the tests' CLI environment, without unset names. */
function serverEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(cliEnv()).filter((e): e is [string, string] => e[1] !== undefined));
}

interface Server {
  client: Client;
  /** The server's stderr so far (its log: each call's report and its build's output). */
  log: () => string;
  /** Anything the client could not read as JSON-RPC on the server's stdout, and other transport errors. */
  errors: Error[];
  /** The log messages (notifications/message) the server sent. */
  notices: string[];
}

/** Starts `reclazz-build mcp` in a folder of no project (every call names its own cwd) and connects the SDK's client. */
async function startServer(): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: serverEnv(), cwd: '/', stderr: 'pipe' });
  let log = '';
  transport.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const errors: Error[] = [];
  const client = new Client({ name: 'reclazz-build-tests', version: '1.0.0' });
  client.onerror = (error) => errors.push(error);
  const notices: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notices.push(String(n.params.data)));
  await client.connect(transport);
  afterThisTest(() => client.close());
  return { client, log: () => log, errors, notices };
}

/** A fake agent for `p`, stopped when the test ends (after its server: cleanup runs last in, first out). */
async function agentHere(p: Project, options: Parameters<typeof agentFor>[2] = {}): Promise<FakeAgent> {
  const agent = await agentFor(p, [], { portFile: p.portFile, ...options });
  afterThisTest(() => agent.stop());
  return agent;
}

type Result = CallToolResult & { structuredContent: Record<string, unknown> & { classes: Array<{ className: string; status: string }> } };

/** Calls `build` and collects its progress messages. */
async function build(server: Server, args: Record<string, unknown>, signal?: AbortSignal): Promise<{ result: Result; progress: string[] }> {
  const progress: string[] = [];
  const result = (await server.client.callTool({ name: 'build', arguments: args }, undefined, {
    onprogress: (p) => void progress.push(p.message ?? ''),
    timeout: 60_000,
    ...(signal === undefined ? {} : { signal }),
  })) as Result;
  return { result, progress };
}

const text = (result: CallToolResult) => (result.content as Array<{ text: string }>)[0]!.text;

describe('reclazz-build mcp, through the SDK client', () => {
  it('lists build, verify, doctor and status, each with a description, an input schema and an output schema', async () => {
    const server = await startServer();
    const { tools } = await server.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['build', 'doctor', 'status', 'verify']);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(80);
      expect(tool.inputSchema.required).toContain('cwd');
      expect(tool.outputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    }
    const build = tools.find((t) => t.name === 'build')!;
    expect(build.description).toContain('provenLive: true');
    expect(Object.keys((build.inputSchema.properties as { options: { properties: object } }).options.properties)).toEqual(
      expect.arrayContaining(['portFile', 'classesDirs', 'verifyTimeoutMs', 'restartCommand']),
    );
    expect(server.errors).toEqual([]);
  });

  it("a proven build: provenLive, the phases as progress, the build's own output kept off stdout, under 2 KB", async () => {
    const p = project();
    await agentHere(p);
    const server = await startServer();
    const command = buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } });
    // The build writes to its stdout: that must reach the log, never the protocol.
    command[3] = `echo compiling on stdout; ${command[3]}`;
    const { result, progress } = await build(server, { cwd: p.dir, command });
    expect(result.isError, text(result)).toBe(false);
    expect(runResultLineSchema.parse(result.structuredContent)).toMatchObject({ reason: 'ok', exitCode: 0, provenLive: true });
    expect(result.structuredContent.classes).toEqual([expect.objectContaining({ className: 'com.acme.Greeter', status: 'applied' })]);
    expect(text(result)).toMatch(/^✔ proven live: /);
    expect(progress).toEqual(
      expect.arrayContaining([expect.stringMatching(/^building: sh -c/), 'build ok', 'BUILD ok acknowledged', 'verifying 1 of 1']),
    );
    const bytes = Buffer.byteLength(JSON.stringify(result));
    console.log(`mcp: a proven build of one changed class answers in ${bytes} bytes`);
    expect(bytes).toBeLessThanOrEqual(2048);
    expect(server.log()).toContain('compiling on stdout');

    // verify and doctor on the same project, with a path relative to cwd.
    const verify = await server.client.callTool({ name: 'verify', arguments: { cwd: p.dir, paths: ['target/classes'] } });
    expect(verify.isError, text(verify as CallToolResult)).toBe(false);
    expect(verify.structuredContent).toMatchObject({ action: 'verify', provenLive: true });
    const doctor = await server.client.callTool({ name: 'doctor', arguments: { cwd: p.dir } });
    expect(doctor.structuredContent).toMatchObject({ action: 'doctor', exitCode: 0, classDirs: [{ dir: p.classes, watched: true }] });
    expect(server.errors).toEqual([]);
  });

  it("a failed build: isError, reason build-failed, and the compiler's errors in build.output and the text", async () => {
    const p = project();
    const agent = await agentHere(p);
    const server = await startServer();
    const error = 'src/main/java/com/acme/Greeter.java:[5,9] error: ";" expected';
    const { result } = await build(server, {
      cwd: p.dir,
      command: ['--', 'sh', '-c', `echo "[INFO] compiling"; echo '${error}' >&2; exit 1`],
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ reason: 'build-failed', exitCode: 1, provenLive: false });
    expect((result.structuredContent.build as { output: string[] }).output).toEqual(['[INFO] compiling', error]);
    expect(text(result)).toContain(error);
    expect(agent.received.some((r) => r.line.startsWith('BUILD started'))).toBe(true);
  });

  it("a change that needs a restart: isError, restart-required on its own line; option paths resolve against the call's cwd", async () => {
    const p = project();
    const change = { from: 'com.acme.Base', to: 'com.acme.Other' };
    // A port file where discovery does not look: only options.portFile, read against cwd (the server runs in /), finds it.
    await agentHere(p, {
      portFile: path.join(p.dir, 'custom', 'agent.port'),
      restartRequired: (_name, hash) => (hash === sha('greeter-v2') ? change : undefined),
    });
    const server = await startServer();
    const { result } = await build(server, {
      cwd: p.dir,
      command: buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v2' } }),
      options: { portFile: 'custom/agent.port', verifyTimeoutMs: 5000 },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ reason: 'verify-incomplete', exitCode: 75, provenLive: false });
    expect(text(result).split('\n')).toContainEqual(expect.stringMatching(/^restart-required com\.acme\.Greeter: .*superclass change/));

    // An option the configuration file refuses is refused the same way, before anything runs.
    const bad = await server.client.callTool({
      name: 'build',
      arguments: { cwd: p.dir, command: ['mvn'], options: { verifyTimeoutMs: -1 } },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad as CallToolResult)).toMatch(/verifyTimeoutMs/);
    // A command that is not a build (a subcommand such as watch would never end) is refused, naming the forms.
    const notBuild = await server.client.callTool({ name: 'build', arguments: { cwd: p.dir, command: ['watch', 'mvn', 'compile'] } });
    expect(notBuild.isError).toBe(true);
    expect(text(notBuild as CallToolResult)).toMatch(/^command must start with "mvn", "gradle", or "--"/);
    const relative = await server.client.callTool({ name: 'status', arguments: { cwd: 'shop' } });
    expect(text(relative as CallToolResult)).toBe('cwd must be the absolute path of an existing folder, not "shop"');
  });

  it('a cancelled build stops as Ctrl-C does: BUILD failed, the build ends, the result says interrupted; the server keeps serving', async () => {
    const p = project();
    const agent = await agentHere(p);
    const server = await startServer();
    const stop = new AbortController();
    const call = build(
      server,
      { cwd: p.dir, command: buildCommand(p, { signals: 'exit', until: path.join(p.dir, 'never') }) },
      stop.signal,
    );
    await waitFor(() => buildRan(p), 'the build to start');
    stop.abort();
    await expect(call).rejects.toThrow(/abort/i);
    await waitFor(() => server.notices.length > 0, 'the notice of the cancelled build');
    expect(server.notices[0]).toMatch(/^build cancelled: ✘ not proven live: interrupted/);
    expect(buildEnded(p)?.signals).toEqual(['SIGINT']);
    expect(flow(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
    expect(hasStackTrace(server.log())).toBe(false);
    // As after Ctrl-C in a terminal: the agent keeps the failed build's hold for the checkout's owner; the next build recovers it.
    const status = await server.client.callTool({ name: 'status', arguments: { cwd: p.dir } });
    expect(status.structuredContent).toMatchObject({ action: 'status', state: { buildHold: 'named' } });
    const next = await build(server, { cwd: p.dir, command: buildCommand(p) });
    expect(next.result.structuredContent).toMatchObject({ exitCode: 0 });
  });

  it('two builds at once for one checkout run one after the other, as from two terminals', async () => {
    const p = project();
    const agent = await agentHere(p);
    const server = await startServer();
    const greeter = path.join(p.classes, 'com', 'acme', 'Greeter.class');
    const command = [
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(greeter)}, 'g' + process.pid); setTimeout(() => {}, 300)`,
    ];
    const [a, b] = await Promise.all([build(server, { cwd: p.dir, command }), build(server, { cwd: p.dir, command })]);
    for (const run of [a, b]) expect(run.result.structuredContent, text(run.result)).toMatchObject({ exitCode: 0, provenLive: true });
    expect([...a.progress, ...b.progress]).toContainEqual(expect.stringMatching(/^waiting for another reclazz-build run in this checkout/));
    expect(agent.received.filter((r) => r.line.startsWith('BUILD ')).map((r) => r.line.split(' ')[1])).toEqual([
      'started',
      'ok',
      'started',
      'ok',
    ]);
  });
});

describe('reclazz-build mcp, its process', () => {
  it('when the client closes stdin mid-build, the build is stopped as by Ctrl-C and the server exits 0; stdout held only JSON-RPC', async () => {
    const p = project();
    const agent = await agentHere(p);
    const server = spawn(process.execPath, [BIN, 'mcp'], { cwd: '/', env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    afterThisTest(() => void server.kill('SIGKILL'));
    const out = new Lines(server.stdout);
    const send = (message: object) => server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await out.line(/"id":1/);
    send({ method: 'notifications/initialized' });
    const command = buildCommand(p, { signals: 'exit', until: path.join(p.dir, 'never') });
    send({ id: 2, method: 'tools/call', params: { name: 'build', arguments: { cwd: p.dir, command } } });
    await waitFor(() => buildRan(p), 'the build to start');
    server.stdin.end();
    const code = await new Promise<number | null>((resolve) => server.once('exit', (exitCode) => resolve(exitCode)));
    expect(code).toBe(0);
    expect(buildEnded(p)?.signals).toEqual(['SIGINT']);
    expect(flow(agent)).toEqual(['DOCTOR', 'BUILD started', 'BUILD failed']);
    const answers = out.all.map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; result?: { structuredContent?: object } });
    for (const answer of answers) expect(answer.jsonrpc).toBe('2.0');
    // Answered before the server exited: the run says it was interrupted.
    expect(answers.find((a) => a.id === 2)?.result?.structuredContent).toMatchObject({ reason: 'interrupted', exitCode: 130 });
  });

  it('through the MCP inspector CLI (a client from the npm registry): a proven build', async () => {
    const p = project();
    await agentHere(p);
    const command = buildCommand(p, { writes: { 'com.acme.Greeter': 'greeter-v3' } });
    // Its CLI reads its own package.json by a path relative to the working folder: run it from its own build folder.
    const run = await execa(
      'mcp-inspector-cli',
      [
        '--cli',
        process.execPath,
        BIN,
        'mcp',
        '--method',
        'tools/call',
        '--tool-name',
        'build',
        '--tool-arg',
        `cwd=${p.dir}`,
        '--tool-arg',
        `command=${JSON.stringify(command)}`,
      ],
      {
        cwd: path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build'),
        env: serverEnv(),
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as Result;
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ provenLive: true, exitCode: 0 });
  });
});
