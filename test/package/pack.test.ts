/**
 * The package as a user gets it: `npm pack`, installed into an empty folder from the tarball
 * (dependencies from the npm cache where it has them), then `npx reclazz-build --help`, a run
 * against the shipped fake agent, the library import and its type declarations (with the
 * library examples of docs/library.md, type-checked in the same compile); and installed
 * globally (`npm install -g`, into a temp prefix), run from a Java project that it leaves free
 * of Node files (README "Install").
 *
 * Packs the dist/ that `npm test` has just built (`--ignore-scripts`: a `prepare` here would
 * rebuild dist/ under the other test files' feet).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, tempDir, writeClass } from '../support/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const env = cliEnv({ npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
let consumer: string;
let packDir: string;
let tarball: string;
let agent: ResultPromise | undefined;
let globalAgent: ResultPromise | undefined;

const run = (file: string, args: string[], cwd: string, timeout = 120_000) =>
  execa(file, args, { cwd, env, extendEnv: false, reject: false, stdin: 'ignore', timeout });

beforeAll(async () => {
  packDir = tempDir('reclazz-pack-');
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], ROOT);
  expect(packed.exitCode, String(packed.stderr)).toBe(0);
  const [{ filename }] = JSON.parse(String(packed.stdout)) as Array<{ filename: string }>;
  tarball = path.join(packDir, filename!);
  consumer = tempDir('reclazz-consumer-');
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], consumer, 240_000);
  expect(installed.exitCode, String(installed.stderr)).toBe(0);
}, 300_000);

afterAll(async () => {
  for (const running of [agent, globalAgent]) {
    running?.kill('SIGTERM');
    await running?.catch(() => undefined);
  }
  // The install is tens of megabytes: do not leave it in the temp folder.
  for (const dir of [consumer, packDir]) if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball, installed into an empty folder', () => {
  it('ships bin, dist and the declarations, and nothing of src or test', () => {
    const pkg = path.join(consumer, 'node_modules', 'reclazz-build');
    for (const file of [
      'bin/reclazz-build.cjs',
      'bin/reclazz-fake-agent.js',
      'dist/cli.cjs',
      'dist/launch.cjs',
      'dist/mcp.cjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/fake-agent/index.d.ts',
      'docs/coding-agents.md',
      'docs/commands.md',
      'docs/editors.md',
      'docs/evidence.md',
      'docs/fake-agent.md',
      'docs/json.md',
      'docs/library.md',
      'docs/performance.md',
      'docs/project-shapes.md',
      'docs/state.md',
      'docs/troubleshooting.md',
      'docs/windows.md',
      'README.md',
    ]) {
      expect(fs.existsSync(path.join(pkg, file)), file).toBe(true);
    }
    expect(fs.existsSync(path.join(pkg, 'src'))).toBe(false);
    expect(fs.existsSync(path.join(pkg, 'test'))).toBe(false);
  });

  it('npx reclazz-build --help and --version work', async () => {
    const help = await run('npx', ['reclazz-build', '--help'], consumer);
    expect(help.exitCode).toBe(0);
    expect(String(help.stdout)).toContain('Usage: reclazz-build');
    expect(String(help.stdout)).toContain('Exit status:');
    const version = await run('npx', ['reclazz-build', '--version'], consumer);
    expect(String(version.stdout).trim()).toBe(
      (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  it('serves reclazz-build mcp from its own bundle: the MCP SDK is not among the installed packages', async () => {
    expect(fs.existsSync(path.join(consumer, 'node_modules', '@modelcontextprotocol'))).toBe(false);
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    // Its stdin ends after the three messages: the server answers them, then exits 0.
    const served = await execa(path.join(consumer, 'node_modules', '.bin', 'reclazz-build'), ['mcp'], {
      cwd: consumer,
      env,
      extendEnv: false,
      reject: false,
      input: messages.map((m) => JSON.stringify(m)).join('\n') + '\n',
      timeout: 30_000,
    });
    expect(served.exitCode, String(served.stderr)).toBe(0);
    const answers = String(served.stdout)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: { tools?: Array<{ name: string }> } });
    expect(
      answers
        .find((a) => a.id === 2)!
        .result.tools!.map((t) => t.name)
        .sort(),
    ).toEqual(['build', 'doctor', 'status', 'verify']);
  });

  it('runs a build, doctor and verify against the shipped fake agent', async () => {
    const classes = path.join(consumer, 'target', 'classes');
    writeClass(classes, 'com.acme.Greeter', 'v1');
    // The installed bin itself (what npx runs): one process that SIGTERM stops.
    agent = execa(path.join(consumer, 'node_modules', '.bin', 'reclazz-fake-agent'), ['--watch', 'target/classes'], {
      cwd: consumer,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      agent!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('fake agent listening')) resolve();
      });
      void agent!.then((r) => reject(new Error(`the fake agent ended: ${String(r.stderr)}`)));
    });
    const file = path.join(classes, 'com', 'acme', 'Greeter.class');
    const build = await run(
      'npx',
      ['reclazz-build', '--', 'node', '-e', `require('fs').writeFileSync(${JSON.stringify(file)}, 'v2')`],
      consumer,
    );
    expect(build.exitCode, String(build.stderr)).toBe(0);
    expect(String(build.stderr)).toContain('✔ proven live');
    const doctor = await run('npx', ['reclazz-build', 'doctor'], consumer);
    expect(doctor.exitCode).toBe(0);
    expect(String(doctor.stdout)).toMatch(/watched\s+.*target\/classes/);
    const verify = await run('npx', ['reclazz-build', 'verify', 'target/classes'], consumer);
    expect(verify.exitCode).toBe(0);

    // The library: import { runSafeBuild } from 'reclazz-build'.
    fs.writeFileSync(
      path.join(consumer, 'lib.mjs'),
      `import { runSafeBuild } from 'reclazz-build';
       const result = await runSafeBuild({ tool: 'command', args: ['node', '-e', ${JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(file)}, 'v3')`)}] },
         { onEvent: (e) => e.type === 'changes' && console.log('changed', e.changed) });
       console.log(result.reason, result.exitCode, result.verdicts.map((v) => v.status).join());`,
    );
    const lib = await run('node', ['lib.mjs'], consumer);
    expect(String(lib.stdout).trim().split('\n'), String(lib.stderr)).toEqual(['changed 1', 'ok 0 applied']);
  }, 120_000);

  it('type-checks a consumer and the library examples of docs/library.md against the shipped declarations', async () => {
    // The examples, with what they take from their surroundings: an editor's API, a source watcher.
    const library = fs.readFileSync(path.join(ROOT, 'docs', 'library.md'), 'utf8');
    const examples = [...library.matchAll(/^```(?:js|ts)\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(3);
    fs.writeFileSync(
      path.join(consumer, 'surroundings.d.ts'),
      `declare const workspaceFolder: string;
       declare const statusBar: { text: string };
       declare function showWarning(message: string): void;
       declare function log(value: unknown): void;
       declare function sourceChanges(): AsyncIterable<string>;`,
    );
    const exampleFiles = examples.map((code, i) => {
      fs.writeFileSync(path.join(consumer, `example${i}.ts`), code);
      return `example${i}.ts`;
    });
    fs.writeFileSync(
      path.join(consumer, 'consumer.ts'),
      `import { runSafeBuild, runDoctor, jsonLineSchema, type RunResult, type RunEvent, type SafeBuildOptions } from 'reclazz-build';
       import { startFakeAgent } from 'reclazz-build/fake-agent';
       const options: SafeBuildOptions = { tool: 'gradle', args: ['classes'], verifyTimeoutMs: 60000 };
       const seen: RunEvent['type'][] = [];
       const result: RunResult = await runSafeBuild(options, { onEvent: (e) => seen.push(e.type) });
       const exit: number = result.exitCode;
       const doctor = await runDoctor({ cwd: process.cwd(), env: process.env, timeoutMs: 5000, classDirs: [] });
       const ok: boolean = jsonLineSchema.safeParse({}).success;
       void startFakeAgent; void exit; void doctor.doctor?.sessionId; void ok;
       // @ts-expect-error: tool is gradle, mvn or command
       const bad: SafeBuildOptions = { tool: 'ant', args: [] };
       void bad;`,
    );
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const checked = await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--typeRoots',
        path.join(ROOT, 'node_modules', '@types'),
        'consumer.ts',
        'surroundings.d.ts',
        ...exampleFiles,
      ],
      consumer,
    );
    expect(String(checked.stdout) + String(checked.stderr)).toBe('');
    expect(checked.exitCode).toBe(0);
  }, 180_000);
});

/** Resolves once a started fake agent printed its ready line; rejects if it ends first. */
function ready(started: ResultPromise): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let out = '';
    started.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('fake agent listening')) resolve();
    });
    void started.then((r) => reject(new Error(`the fake agent ended: ${String(r.stderr)}`)));
  });
}

describe('the packed tarball, installed globally', () => {
  it('runs its bins (and PATH) in a Java project and adds no Node file to it, only .reclazz/', async () => {
    const prefix = path.join(packDir, 'global');
    const installed = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
      packDir,
      240_000,
    );
    expect(installed.exitCode, String(installed.stderr)).toBe(0);
    const project = tempDir('reclazz-java-project-');
    fs.writeFileSync(path.join(project, 'pom.xml'), '<project/>\n');
    const file = writeClass(path.join(project, 'target', 'classes'), 'com.acme.Greeter', 'v1');
    const onPath = {
      cwd: project,
      env: { ...env, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${env.PATH ?? ''}` },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    } as const;
    globalAgent = execa(path.join(prefix, 'bin', 'reclazz-fake-agent'), ['--watch', 'target/classes'], onPath);
    await ready(globalAgent);
    const build = await execa(
      path.join(prefix, 'bin', 'reclazz-build'),
      ['--', 'node', '-e', `require('fs').writeFileSync(${JSON.stringify(file)}, 'v2')`],
      {
        ...onPath,
        timeout: 60_000,
      },
    );
    expect(build.exitCode, String(build.stderr)).toBe(0);
    expect(String(build.stderr)).toContain('✔ proven live');
    globalAgent.kill('SIGTERM');
    await globalAgent;
    expect(fs.readdirSync(project).sort()).toEqual(['.reclazz', 'pom.xml', 'target']);
  }, 300_000);
});
