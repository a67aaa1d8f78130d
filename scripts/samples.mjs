/**
 * The terminal samples of the documents, recorded from real runs: a copy of the bundled Maven
 * example (fixtures/maven-app), compiled with the real Maven, the shipped fake agent started as
 * the Quick start says, and the built CLI run in it as a user would. `npm run docs` writes them
 * into the documents (scripts/docs.mjs); test/package/samples.test.ts records them again and
 * fails while a document shows something else.
 *
 * What differs from run to run is replaced by fixed stand-ins ({@link normalise}): the
 * project's folder, the port, the pid, the Java the fake agent reports (the machine's), UUIDs,
 * durations (also `durationMs` in JSON), clock times, and the agent's uptime and latencies in
 * its HEALTH lines. To add a sample, add a
 * step to {@link recordSamples} and put `<!-- generated: <id> -->` / `<!-- /generated -->`
 * where it goes (CONTRIBUTING.md, "Samples in the documents").
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { offlineMavenEnv } from './offline-maven.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'bin', 'reclazz-build.cjs');
const FAKE_AGENT = path.join(ROOT, 'bin', 'reclazz-fake-agent.js');

/** The folder the samples show for the project. */
const SHOWN_DIR = '/home/me/shop';
const SHOWN_PORT = '36129';
const SHOWN_PID = '5241';
/** The Java the fake agent reports (`java -version` here): the JDK and VM the samples show. */
const SHOWN_JAVA = '17.0.15';
const SHOWN_VM = 'OpenJDK 64-Bit Server VM';
/** The port a stale port file names (nothing listens there). */
const SHOWN_STALE_PORT = '41235';
/** Stand-ins for the UUIDs of a recording (session ids, owner tokens), in order of first appearance. */
const SHOWN_UUIDS = [
  'd96116ea-83bc-44b4-934b-e940be0fadf0',
  '0d5e7a41-3c2b-4f0e-9a61-8b7c2d4e5f10',
  '5be0c6a2-91d3-4e7f-8a45-2f6b9c1d0e37',
];
const SHOWN_TIMES = ['15:38:11.609', '15:38:11.702', '15:38:11.855', '15:38:11.907', '15:38:12.020', '15:38:12.131'];
/** Stand-ins for the clock of watch mode's lines (`HH:MM:SS`), in order of first appearance. */
const SHOWN_CLOCKS = ['12:04:12', '12:04:29', '12:04:31', '12:05:01', '12:05:02', '12:05:38', '12:05:40', '12:05:52', '12:05:53'];

/**
 * The environment of every recorded run: plain output, no reclazz settings, no code cache left
 * behind, and Maven on Debian's offline repository where there is one.
 */
function sampleEnv() {
  const env = offlineMavenEnv({ ...process.env, NO_COLOR: '1', CI: 'true', RECLAZZ_CODE_CACHE: '0' });
  for (const name of ['FORCE_COLOR', 'RECLAZZ_PORT', 'RECLAZZ_PORT_FILE', 'RECLAZZ_SAFE_BUILD_ACTIVE', 'RECLAZZ_CODE_CACHE_DIR'])
    delete env[name];
  return env;
}

/**
 * `text` with what differs between recordings replaced by the fixed stand-ins.
 * @param {string} text what a run printed
 * @param {{ dirs: string[], port: number, stalePort: number, pid: string, java: { version: string, vmName: string }, uuids: string[], times: string[], clocks: string[] }} facts
 *   of this recording; `uuids`, `times` and `clocks` grow as new ones appear
 * @returns {string}
 */
function normalise(text, facts) {
  // Debian's Maven writes colour resets even into a pipe.
  // eslint-disable-next-line no-control-regex -- ESC starts a colour code
  let out = text.replace(/\x1b\[[0-9;]*m/g, '');
  for (const dir of facts.dirs) out = out.split(dir).join(SHOWN_DIR);
  out = out.replace(new RegExp(`\\b${facts.port}\\b`, 'g'), SHOWN_PORT).replace(new RegExp(`\\b${facts.pid}\\b`, 'g'), SHOWN_PID);
  if (facts.stalePort !== 0) out = out.replace(new RegExp(`\\b${facts.stalePort}\\b`, 'g'), SHOWN_STALE_PORT);
  if (!['', 'unknown'].includes(facts.java.version))
    out = out.replace(new RegExp(`(?<![\\w.])${escapeRe(facts.java.version)}(?![\\w.])`, 'g'), SHOWN_JAVA);
  if (!['', 'unknown'].includes(facts.java.vmName)) out = out.split(facts.java.vmName).join(SHOWN_VM);
  out = out.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, (uuid) => standIn(facts.uuids, uuid, SHOWN_UUIDS));
  out = out.replace(/\b\d\d:\d\d:\d\d\.\d{3}\b/g, (time) => standIn(facts.times, time, SHOWN_TIMES));
  out = out.replace(/\b\d\d:\d\d:\d\d\b(?!\.\d)/g, (clock) => standIn(facts.clocks, clock, SHOWN_CLOCKS));
  out = out
    .replace(/\b\d+\.\d s\b/g, '2.1 s')
    .replace(/"(durationMs|elapsedMs)":\d+/g, '"$1":12')
    .replace(/\(\d+ms\)/g, '(50ms)')
    .replace(/restart command done in \d+ ms/g, 'restart command done in 40 ms')
    .replace(/reloaded in \d+ms/g, 'reloaded in 50ms')
    // The agent's HEALTH lines: its uptime, reload latencies and the time since the last change.
    .replace(/, up \d+ \w+\./g, ', up 9 seconds.')
    .replace(
      /Save to reloaded: \d+ms median, \d+ms at the 95th, \d+ms worst/g,
      'Save to reloaded: 50ms median, 50ms at the 95th, 50ms worst',
    )
    .replace(/Last change \d+ \w+ ago\./g, 'Last change 0 seconds ago.');
  // A watch cycle's times, each below a second in ms, else in s.
  const took = '(?:\\d+ ms|\\d+\\.\\d s)';
  return out.replace(new RegExp(` in ${took} \\(build ${took}(, verify ${took})?`, 'g'), (_, verify) =>
    verify === undefined ? ' in 2.1 s (build 1.9 s' : ' in 2.1 s (build 1.9 s, verify 40 ms',
  );
}

/** `text` as a regular expression that matches it literally. */
const escapeRe = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The stand-in for `value`: the one of its first appearance in `seen`. */
function standIn(seen, value, shown) {
  if (!seen.includes(value)) seen.push(value);
  const at = seen.indexOf(value);
  if (at >= shown.length) throw new Error(`scripts/samples.mjs: more than ${shown.length} distinct values like ${value}: add stand-ins`);
  return shown[at];
}

/** A console block: the command as typed, then what it printed. */
const consoleBlock = (command, output) => ['```console', `$ ${command}`, output.replace(/\n+$/, ''), '```'].join('\n');

/** Resolves once `stream` has written text matching `pattern` (rejects after `ms`). */
function waitFor(stream, pattern, what, ms = 20_000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`scripts/samples.mjs: no ${what} after ${ms} ms; got: ${seen}`)), ms);
    stream.on('data', (chunk) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
  });
}

/** A loopback port nothing listens on (just released by the system). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * Copies fixtures/`name` to `to`, without build output or state a local run left there, and
 * compiles it with Maven: the classes its app starts with.
 * @param {string} name a Maven fixture
 * @param {string} to the folder to make
 * @param {Record<string, string | undefined>} env Maven's environment
 */
async function compileFixture(name, to, env) {
  fs.cpSync(path.join(ROOT, 'fixtures', name), to, { recursive: true, filter: (src) => !/[\\/](target|\.reclazz)$/.test(src) });
  execFileSync('mvn', ['-q', 'compile'], { cwd: to, env, stdio: 'ignore' });
}

/**
 * Rewrites what Greeter.greet() returns: a real edit for the next compile.
 * @param {string} app the project folder
 * @param {string} text the new greeting
 * @param {string} expression the Java expression returned (a number: a compile error)
 */
function editGreeting(app, text, expression = JSON.stringify(text)) {
  const file = path.join(app, 'src', 'main', 'java', 'com', 'acme', 'Greeter.java');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/return\s+[^;]*;/, `return ${expression};`));
}

/**
 * Records every sample. Needs the built CLI (`npm run build`) and Maven on PATH; takes about
 * 50 s (ten Maven compiles). Leaves nothing behind: the work folder and the agents are gone
 * when it returns or throws.
 * @param {(name: string, to: string, env: Record<string, string | undefined>) => Promise<void>} [compiled]
 *   makes `to` a compiled copy of fixtures/`name` (default: copy and compile it here; the tests
 *   hand over the copies they compiled once for the whole run)
 * @returns {Promise<Record<string, string>>} sample id -> its Markdown block
 */
export async function recordSamples(compiled = compileFixture) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-docs-'));
  const app = path.join(work, 'shop');
  const env = sampleEnv();
  /** @type {import('execa').ResultPromise | undefined} */
  let agent;
  try {
    await compiled('maven-app', app, env);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the app starts after its classes are written

    const elsewhere = path.join(work, 'other');
    fs.mkdirSync(path.join(elsewhere, '.git'), { recursive: true });
    const facts = {
      dirs: [fs.realpathSync(app), app, fs.realpathSync(elsewhere), elsewhere],
      port: 0,
      stalePort: 0,
      pid: '',
      java: { version: '', vmName: '' },
      uuids: [],
      times: [],
      clocks: [],
    };
    const samples = {};
    const cli = async (args, shown = `reclazz-build ${args.join(' ')}`, cwd = app) => {
      const run = await execa(process.execPath, [CLI, ...args], {
        cwd,
        env,
        extendEnv: false,
        reject: false,
        all: true,
        stdin: 'ignore',
      });
      return { exitCode: run.exitCode, block: consoleBlock(shown, normalise(String(run.all), facts)) };
    };

    agent = execa(process.execPath, [FAKE_AGENT, '--watch', 'target/classes'], {
      cwd: app,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    const ready = await waitFor(agent.stdout, /fake agent listening.*\n/, "fake agent's ready line");
    const doctor = JSON.parse((await execa(process.execPath, [CLI, 'doctor', '--json'], { cwd: app, env, extendEnv: false })).stdout);
    const vmName = String(doctor.doctor.vmName).replace(/ \(reclazz fake agent\)$/, '');
    Object.assign(facts, { port: doctor.endpoint.port, pid: doctor.doctor.pid, java: { version: doctor.doctor.javaVersion, vmName } });
    samples['fake-agent'] = consoleBlock('reclazz-fake-agent --watch target/classes', normalise(ready, facts));

    samples.doctor = (await cli(['doctor'])).block;
    editGreeting(app, 'Hello, edited while the app runs');
    const build = await cli(['mvn', '-q', 'compile']);
    if (build.exitCode !== 0) throw new Error(`scripts/samples.mjs: the build sample exited ${build.exitCode}:\n${build.block}`);
    samples.build = build.block;
    samples.verify = (await cli(['verify', 'target/classes/com/acme/Greeter.class'])).block;
    samples.pause = (await cli(['pause'])).block;
    samples.resume = (await cli(['resume'])).block;
    samples['status-json'] = (await cli(['status', '--json'])).block;
    samples.events = await recordEvents(app, env, facts);
    samples.watch = await recordWatch(app, env, facts);

    fs.writeFileSync(path.join(app, 'reclazz.config.json'), JSON.stringify({ timeoutMs: '5s' }));
    samples['config-error'] = (await cli(['doctor'])).block;
    fs.rmSync(path.join(app, 'reclazz.config.json'));

    // Troubleshooting, in a folder of its own (shown as the same project): no port file, then a stale one.
    samples['no-agent'] = (await cli(['mvn', '-q', 'compile'], undefined, elsewhere)).block;
    facts.stalePort = await freePort();
    fs.mkdirSync(path.join(elsewhere, '.reclazz'));
    fs.writeFileSync(path.join(elsewhere, '.reclazz', 'agent.port'), String(facts.stalePort));
    samples['stale-port'] = (await cli(['mvn', '-q', 'compile'], undefined, elsewhere)).block;

    Object.assign(samples, await recordSeveralApps(work, env, facts, cli, compiled));
    samples['not-watched'] = await recordNotWatched(work, env, facts, cli, compiled);
    samples.restart = await recordRestart(app, agent, cli);
    return samples;
  } finally {
    agent?.kill('SIGTERM');
    await agent?.catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * A superclass change (restart required), restarted and proven live: the fake agent restarts its
 * app on SIGHUP, as `systemctl restart` would restart a real one. Last: the app's agent session changes.
 */
async function recordRestart(app, agent, cli) {
  fs.writeFileSync(path.join(app, 'restart-app.sh'), `#!/bin/sh\nkill -HUP ${agent.pid}\n`, { mode: 0o755 });
  editSource(
    path.join(app, 'src', 'main', 'java', 'com', 'acme', 'Greeter.java'),
    'public class Greeter {',
    'public class Greeter extends Outer {',
  );
  const run = await cli(['--quiet', '--restart-command', './restart-app.sh', 'mvn', '-q', 'compile']);
  if (run.exitCode !== 0) throw new Error(`scripts/samples.mjs: the restart sample exited ${run.exitCode}:\n${run.block}`);
  return run.block;
}

/** Replaces the first `from` in `file` (a real edit for the next compile). */
function editSource(file, from, to) {
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`scripts/samples.mjs: no ${from} in ${file}`);
  fs.writeFileSync(file, text.replace(from, to));
}

/**
 * Several apps in one checkout: a copy of fixtures/two-services (shown as the same project)
 * compiled with Maven, a fake agent per service watching its own classes and the shared
 * module's (its port file in the service's `.reclazz/`), then a subcommand that finds both
 * (refused) and a build after an edit to a shared class and a service class. The build runs
 * with `--quiet`: without it the two agents' lines after the build interleave as their
 * receipts arrive, which no recording can repeat. The agents are stopped before it returns.
 * @returns {Promise<Record<string, string>>} the samples `ambiguous-agent` and `several-apps`
 */
async function recordSeveralApps(work, env, facts, cli, compiled) {
  const checkout = path.join(work, 'checkout');
  await compiled('two-services', checkout, env);
  fs.mkdirSync(path.join(checkout, '.git'));
  await new Promise((resolve) => setTimeout(resolve, 50)); // the apps start after their classes are written
  facts.dirs.push(fs.realpathSync(checkout), checkout);
  /** @type {import('execa').ResultPromise[]} */
  const agents = [];
  try {
    for (const service of ['svc-a', 'svc-b']) {
      const agent = execa(process.execPath, [FAKE_AGENT, '--watch', 'target/classes', '../shared/target/classes'], {
        cwd: path.join(checkout, service),
        env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });
      agents.push(agent);
      await waitFor(agent.stdout, /fake agent listening.*\n/, `${service}'s fake agent's ready line`);
    }
    const samples = { 'ambiguous-agent': (await cli(['doctor'], undefined, checkout)).block };
    editSource(path.join(checkout, 'shared', 'src', 'main', 'java', 'com', 'acme', 'shared', 'Money.java'), '"EUR"', '"CHF"');
    editSource(
      path.join(checkout, 'svc-a', 'src', 'main', 'java', 'com', 'acme', 'a', 'OrderService.java'),
      '"orders in "',
      '"orders, now in "',
    );
    const build = await cli(['--quiet', 'mvn', '-q', 'compile'], undefined, checkout);
    if (build.exitCode !== 0) throw new Error(`scripts/samples.mjs: the several-apps sample exited ${build.exitCode}:\n${build.block}`);
    samples['several-apps'] = build.block;
    return samples;
  } finally {
    for (const agent of agents) agent.kill('SIGTERM');
    await Promise.all(agents.map((agent) => agent.catch(() => undefined)));
  }
}

/**
 * `reclazz-build watch mvn -q compile` over three saves, each after the cycle before ended: an
 * edit proven live, one that does not compile (the agent keeps holding), and the fix (the hold
 * recovered); then Ctrl-C (SIGINT) between cycles. Each save comes more than a second after the
 * line before it, so that Maven sees the source newer than its class and the clocks differ.
 */
async function recordWatch(app, env, facts) {
  const watch = execa(process.execPath, [CLI, 'watch', 'mvn', '-q', 'compile'], {
    cwd: app,
    env,
    extendEnv: false,
    reject: false,
    all: true,
    stdin: 'ignore',
  });
  const pause = () => new Promise((resolve) => setTimeout(resolve, 1100));
  const save = async (edit) => {
    await pause();
    const ended = waitFor(watch.stderr, /\d\d:\d\d:\d\d [✔⚠✖] .*\n/, "a watch cycle's end line", 120_000);
    edit();
    await ended;
  };
  await waitFor(watch.stderr, /• watching .*\n/, "the watch's first line");
  await save(() => editGreeting(app, 'Hello, saved while watching'));
  await save(() => editGreeting(app, '', '42'));
  await save(() => editGreeting(app, 'Hello, fixed'));
  await pause();
  watch.kill('SIGINT');
  return consoleBlock('reclazz-build watch mvn -q compile', normalise(String((await watch).all), facts));
}

/**
 * A Maven reactor whose app's agent watches only the app module (as the attach plugin's
 * `prepare-agent` does): a copy of fixtures/maven-reactor (shown as the same project), the fake
 * agent in `app/` watching `app/target/classes`, and a build from the root after an edit in
 * `lib`. With `--quiet`: the warning, the class and the verdict. The agent is stopped before it
 * returns.
 * @returns {Promise<string>} the sample `not-watched`
 */
async function recordNotWatched(work, env, facts, cli, compiled) {
  const reactor = path.join(work, 'reactor');
  await compiled('maven-reactor', reactor, env);
  fs.mkdirSync(path.join(reactor, '.git'));
  await new Promise((resolve) => setTimeout(resolve, 50)); // the app starts after its classes are written
  facts.dirs.push(fs.realpathSync(reactor), reactor);
  // The app's JVM loads lib's classes too (spring-boot:run in the reactor), though its agent watches only its own.
  const classPath = ['app', 'lib'].flatMap((module) => ['--class-path', path.join(reactor, module, 'target', 'classes')]);
  const agent = execa(process.execPath, [FAKE_AGENT, '--watch', 'target/classes', ...classPath], {
    cwd: path.join(reactor, 'app'),
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  try {
    await waitFor(agent.stdout, /fake agent listening.*\n/, "the app's fake agent's ready line");
    editSource(
      path.join(reactor, 'lib', 'src', 'main', 'java', 'com', 'acme', 'lib', 'Greeting.java'),
      '"Hello from lib"',
      '"Hello, edited in lib"',
    );
    const build = await cli(['--quiet', 'mvn', '-q', 'compile'], undefined, reactor);
    if (build.exitCode !== 75)
      throw new Error(`scripts/samples.mjs: the not-watched sample exited ${build.exitCode}, not 75:\n${build.block}`);
    return build.block;
  } finally {
    agent.kill('SIGTERM');
    await agent.catch(() => undefined);
  }
}

/** `reclazz-build events` while a build reloads a class, ended with Ctrl-C (SIGINT) after the RELOAD line and the HEALTH lines the build asked for. */
async function recordEvents(app, env, facts) {
  const follower = execa(process.execPath, [CLI, 'events'], { cwd: app, env, extendEnv: false, reject: false, all: true, stdin: 'ignore' });
  await waitFor(follower.stderr, /following agent/, 'events follower');
  // Both waits span a whole Maven build, which takes far longer than 20 s on a loaded machine.
  const reloaded = waitFor(follower.stdout, /RELOAD .*\n/, 'RELOAD event', 120_000);
  // The build asks HEALTH for the agent's count (Maven wrote every class file again): its lines reach every client.
  const health = waitFor(follower.stdout, /waiting on a restart\.\n/, "HEALTH's last line", 120_000);
  editGreeting(app, 'Hello again');
  await execa(process.execPath, [CLI, '--quiet', 'mvn', '-q', 'compile'], { cwd: app, env, extendEnv: false, stdin: 'ignore' });
  await reloaded;
  await health;
  follower.kill('SIGINT');
  return consoleBlock('reclazz-build events', normalise(oneHealthTime(String((await follower).all)), facts));
}

/** A line of the agent's HEALTH answer (its SessionReport), after the event's time and level. */
const HEALTH_LINE =
  /^INFO +(Reclazz .*, up |\d+ reloads?: |Nothing has reloaded|Save to reloaded: |None of them was timed|\d+ director(y|ies) watched|No file has changed|Last change |Nothing is waiting|\d+ things? waiting)/;

/** `text` with the lines of one HEALTH answer at the time of its first: the agent writes them one by one, a millisecond or so apart. */
function oneHealthTime(text) {
  let first;
  return text
    .split('\n')
    .map((line) => {
      const time = /^(\d\d:\d\d:\d\d\.\d{3}) (.*)$/.exec(line);
      if (time === null || !HEALTH_LINE.test(time[2])) {
        first = undefined;
        return line;
      }
      first ??= time[1];
      return `${first} ${time[2]}`;
    })
    .join('\n');
}
