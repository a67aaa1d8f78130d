#!/usr/bin/env node
// npm run demo: the main job on a real Maven build of the bundled example (fixtures/maven-app),
// against the fake agent (the same one the tests use). Four runs: an edit proven live, a
// compile error that keeps the hold, the fix that recovers it, and a change the JVM cannot
// redefine (a new superclass), proven live after the app restarts. Maven gets Debian's offline
// repository from here when the machine has it (scripts/offline-maven.mjs), not from the example.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAgent } from '../dist/fake-agent/index.js';
import { offlineMavenEnv } from './offline-maven.mjs';
import { shellLine } from './shell-words.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'reclazz-build.cjs');
const say = (text) => process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);
const env = offlineMavenEnv(process.env);

if (spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status !== 0) {
  console.error(
    'The demo builds a real Maven project: install a JDK and Maven (on Debian, as root: `bash .ci/install-build-tools.sh maven`), then run `npm run demo` again.',
  );
  process.exit(1);
}

const started = performance.now();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reclazz-demo-'));
const app = path.join(work, 'maven-app');
fs.cpSync(path.join(root, 'fixtures', 'maven-app'), app, { recursive: true, filter: (src) => !/[\\/](target|\.reclazz)$/.test(src) });
const greeter = path.join(app, 'src', 'main', 'java', 'com', 'acme', 'Greeter.java');
const setReturn = (expression) =>
  fs.writeFileSync(greeter, fs.readFileSync(greeter, 'utf8').replace(/return\s+[^;]*;/, `return ${expression};`));
const setGreeting = (text) => setReturn(JSON.stringify(text));

say(`copied the example to ${app}; compiling it once (the classes the "running app" loaded)`);
if (env.MAVEN_OPTS !== process.env.MAVEN_OPTS) console.log(`(Maven runs with MAVEN_OPTS=${env.MAVEN_OPTS}: Debian's offline repository)`);
execFileSync('mvn', ['-q', 'compile'], { cwd: app, env, stdio: 'inherit' });
// The app starts after its classes are written: only classes older than its JVM count as loaded unchanged.
await new Promise((resolve) => setTimeout(resolve, 50));

const agent = await startFakeAgent({
  portFile: path.join(app, '.reclazz', 'agent.port'),
  watchDirs: [path.join(app, 'target', 'classes')],
  heartbeatMs: 2000,
});
say(`fake agent listening on 127.0.0.1:${agent.port}, port file ${path.join(app, '.reclazz', 'agent.port')}`);

// The agent lives in this process, so the CLI runs asynchronously (a sync spawn would freeze the agent).
async function reclazzBuild(title, options = []) {
  // Quoted as a shell reads it, so that the line runs when pasted.
  say(`${title}\n$ ${shellLine(['reclazz-build', ...options, 'mvn', '-q', 'compile'])}`);
  const from = agent.received.length;
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, ...options, 'mvn', '-q', 'compile'], {
    cwd: app,
    stdio: 'inherit',
    env: { ...env, RECLAZZ_SAFE_BUILD_ACTIVE: '' },
  });
  const status = await new Promise((resolve) => child.on('close', (code) => resolve(code)));
  const ms = Math.round(performance.now() - t0);
  console.log(`\n(exit status ${status}, ${ms} ms) the agent received:`);
  for (const { line } of agent.received.slice(from)) console.log(`  ${line}`);
  return status;
}

setGreeting('Hello, edited while the app runs');
const first = await reclazzBuild('1. edit Greeter.java, rebuild: the change is held, released and proven live');
setReturn('42 /* not a String: a compile error */');
const second = await reclazzBuild('2. a compile error: BUILD failed, no VERIFY, the agent keeps holding the output');
console.log(`  hold now: ${JSON.stringify(agent.hold())}`);
setGreeting('Hello, fixed');
const third = await reclazzBuild('3. fix it and run again: the saved owner token recovers the hold');

// The "app" restarts on SIGHUP, as the fake agent's own command does: a new agent session.
process.on('SIGHUP', () => void agent.restartJvm());
fs.writeFileSync(path.join(path.dirname(greeter), 'Base.java'), 'package com.acme;\n\npublic class Base {}\n');
fs.writeFileSync(greeter, fs.readFileSync(greeter, 'utf8').replace('public class Greeter {', 'public class Greeter extends Base {'));
const fourth = await reclazzBuild(
  '4. a new superclass, which the JVM cannot redefine: the app restarts and the change is proven live in it',
  ['--restart-command', `kill -HUP ${process.pid}`],
);

await agent.stop();
fs.rmSync(work, { recursive: true, force: true });
const total = ((performance.now() - started) / 1000).toFixed(1);
say(`demo done in ${total} s: exit statuses ${first}, ${second}, ${third}, ${fourth} (expected 0, 1, 0, 0)`);
const passed = first === 0 && second !== 0 && third === 0 && fourth === 0;
if (passed) {
  console.log(
    'next: your own app. Install reclazz-build (README.md#install), start the app with the reclazz agent ' +
      '(README.md#connect-your-app), then build through it while the app runs: reclazz-build mvn compile, ' +
      'reclazz-build gradle classes, or reclazz-build -- <your build command>.',
  );
}
process.exit(passed ? 0 : 1);
