/**
 * The project shapes users have, each built by its real tool and run through the real binary
 * against the fake agent: a Maven reactor whose app runs from one module, a Gradle
 * multi-project build, Kotlin's class names, and an SAP Commerce tree built with ant from
 * `hybris/bin/platform`. A missing tool fails these tests (fixture-cache.ts says how to install it).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { appStartsLater } from '../support/agents.js';
import { runCli } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import { changedClasses, classHashes, editSource, waitPastAntGranularity } from '../fixtures/fixture-build.js';

// Real Maven, Gradle, kotlinc and ant runs on a shared 2-core machine: generous bounds.
const REAL_BUILD_TIMEOUT_MS = 240_000;
const CLI_TIMEOUT_MS = 200_000;

const agents: FakeAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});
afterAll(removeFixtureCopies);

/** A fake agent started after the app's classes were written (they count as loaded). */
async function agentFor(options: FakeAgentOptions): Promise<FakeAgent> {
  await appStartsLater();
  const agent = await startFakeAgent({ captureDelayMs: 50, reloadMs: 30, heartbeatMs: 1000, ...options });
  agents.push(agent);
  return agent;
}

/** `<binary name> <sha256>` of every VERIFY the agent received, sorted. */
function verified(agent: FakeAgent): string[] {
  return agent.received
    .filter((r) => r.line.startsWith('VERIFY '))
    .map((r) => r.line.split(' ').slice(2).join(' '))
    .filter((v, i, all) => all.indexOf(v) === i)
    .sort();
}

/** Every class file below `roots` by path: its binary name, SHA-256 and stamp (inode and ctime). */
function classFiles(roots: string[]): Map<string, { entry: string; stamp: string }> {
  const files = new Map<string, { entry: string; stamp: string }>();
  for (const root of roots) {
    for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.class')) continue;
      const file = path.join(entry.parentPath, entry.name);
      const name = path.relative(root, file).slice(0, -'.class'.length).split(path.sep).join('.');
      const stat = fs.statSync(file);
      files.set(file, { entry: classEntry(root, name), stamp: `${stat.ino}:${stat.ctimeMs}` });
    }
  }
  return files;
}

/**
 * `<binary name> <sha256>` of every class file below `roots` the build wrote (its stamp moved
 * since `before`, its bytes changed or not), sorted: the changed ones are verified, the ones
 * rewritten with the bytes known live asked once (classes/evidence.ts). `package-info` never reloads.
 */
function written(before: ReturnType<typeof classFiles>, roots: string[]): string[] {
  return [...classFiles(roots)]
    .filter(([file, now]) => before.get(file)?.stamp !== now.stamp && !file.endsWith('package-info.class'))
    .map(([, now]) => now.entry)
    .sort();
}

/** Of {@link written}, those whose bytes changed: a class file rewritten with its bytes where the app neither loads nor watches classes is not the app's, nothing to ask. */
function changed(before: ReturnType<typeof classFiles>, roots: string[]): string[] {
  const entries = new Set([...before.values()].map((b) => b.entry));
  return written(before, roots).filter((entry) => !entries.has(entry));
}

/** `<binary name> <sha256>` of the class file `root`/`name` (binary name with dots and `$`). */
function classEntry(root: string, name: string): string {
  const file = path.join(root, ...name.split('.')) + '.class';
  return `${name} ${createHash('sha256').update(fs.readFileSync(file)).digest('hex')}`;
}

describe('a Maven reactor: the app runs from app/, a class in lib changes', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  const MVN = ['-q', '-o', 'compile'];
  const GREETING = 'lib/src/main/java/com/acme/lib/Greeting.java';

  async function reactor(watch: (dir: string) => string[]) {
    const dir = await compiledFixture('maven-reactor');
    const agent = await agentFor({ portFile: path.join(dir, 'app', '.reclazz', 'agent.port'), watchDirs: watch(dir) });
    await editSource(dir, GREETING, '"Hello from lib"', '"Hello from lib, edited"');
    return { dir, agent, lib: path.join(dir, 'lib', 'target', 'classes'), app: path.join(dir, 'app', 'target', 'classes') };
  }

  it('watching only app/target/classes: the lib class is named not watched at once, with the watchDirs= that fixes it; exit 75', async () => {
    const { dir, agent, lib, app } = await reactor((d) => [path.join(d, 'app', 'target', 'classes')]);
    const before = classFiles([app, lib]);
    const started = performance.now();
    const run = await runCli(['--verify-timeout', '120000', 'mvn', ...MVN], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    const elapsedMs = performance.now() - started;
    expect(run.exitCode).toBe(75);
    expect(run.stderr).toMatch(/not-watched\s+com\.acme\.lib\.Greeting\s+the agent does not watch .*lib\/target\/classes/);
    expect(run.stderr).toContain(`lie in ${lib}, which the agent does not watch: they never reload, not proven live`);
    expect(run.stderr).toContain(`next: restart the app with the agent option watchDirs=${app};${lib} (directories separated by ';'`);
    // Not polled to the deadline: asked once, briefly (3 s), and the run ended long before the 120 s deadline.
    expect(verified(agent)).toContain(classEntry(lib, 'com.acme.lib.Greeting'));
    // lib is not on the app's class path either: of it, only what changed is the app's concern.
    expect(verified(agent)).toEqual([...written(before, [app]), ...changed(before, [lib])].sort());
    expect(elapsedMs).toBeLessThan(60_000);
  });

  it('watching both: exit 0; the changed lib class is verified, and every class file Maven wrote again asked once', async () => {
    const { dir, agent, lib, app } = await reactor((d) => [
      path.join(d, 'app', 'target', 'classes'),
      path.join(d, 'lib', 'target', 'classes'),
    ]);
    const before = classFiles([app, lib]);
    const hashesBefore = classHashes(dir);
    const run = await runCli(['mvn', ...MVN], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toContain('proven live');
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/applied\s+com\.acme\.lib\.Greeting/);
    // What Maven did, by the bytes: this edit changed that one class file and no other.
    expect(changedClasses(hashesBefore, classHashes(dir))).toEqual(['lib/target/classes/com/acme/lib/Greeting.class']);
    expect(verified(agent)).toEqual(written(before, [app, lib]));
  });
});

describe('a Gradle multi-project build: port file in web/.reclazz, run from the root', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it('finds the classes of core and web and verifies the changed ones (and asks once about any written again)', async () => {
    const GRADLE = ['--offline', '-q', 'classes'];
    const dir = await compiledFixture('gradle-multi');
    const core = path.join(dir, 'core', 'build', 'classes', 'java', 'main');
    const web = path.join(dir, 'web', 'build', 'classes', 'java', 'main');
    const agent = await agentFor({ portFile: path.join(dir, 'web', '.reclazz', 'agent.port'), watchDirs: [web, core] });
    await editSource(dir, 'core/src/main/java/com/acme/core/Greeting.java', '"Hello from core"', '"Hello from core, edited"');
    await editSource(dir, 'web/src/main/java/com/acme/web/Main.java', '" #"', '" no. "');
    const before = classFiles([core, web]);
    const run = await runCli(['--verbose', 'gradle', ...GRADLE], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toContain(`class output directories: ${core}, ${web}`);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(verified(agent)).toEqual(
      expect.arrayContaining([classEntry(core, 'com.acme.core.Greeting'), classEntry(web, 'com.acme.web.Main')]),
    );
    expect(verified(agent)).toEqual(written(before, [core, web]));
  });
});

describe("Kotlin's class output directories and names", { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  it("build/classes/kotlin/main counts like Java's; the lambda Foo$bar$1 and the file facade FooKt are verified by those names (the edit changed only them)", async () => {
    const dir = await compiledFixture('kotlin-classes');
    const kotlin = path.join(dir, 'build', 'classes', 'kotlin', 'main');
    const java = path.join(dir, 'build', 'classes', 'java', 'main');
    const agent = await agentFor({ portFile: path.join(dir, '.reclazz', 'agent.port'), watchDirs: [kotlin, java] });
    await editSource(dir, 'src/main/kotlin/com/acme/Foo.kt', '"Hello from a lambda"', '"Hello from an edited lambda"');
    await editSource(dir, 'src/main/kotlin/com/acme/Foo.kt', '"Hello, $name"', '"Hi, $name"');
    const before = classFiles([kotlin, java].filter((d) => fs.existsSync(d)));
    const hashesBefore = classHashes(dir);
    const run = await runCli(['--', 'sh', 'build.sh'], { cwd: dir, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toMatch(/applied\s+com\.acme\.Foo\$bar\$1/);
    expect(run.stderr).toMatch(/applied\s+com\.acme\.FooKt/);
    expect(run.exitCode).toBe(0);
    // What kotlinc did, by the bytes: an edited lambda and top-level function change only Foo$bar$1 and FooKt.
    const KOTLIN = 'build/classes/kotlin/main/com/acme';
    expect(changedClasses(hashesBefore, classHashes(dir))).toEqual([`${KOTLIN}/Foo$bar$1.class`, `${KOTLIN}/FooKt.class`]);
    expect(verified(agent)).toEqual(
      written(
        before,
        [kotlin, java].filter((d) => fs.existsSync(d)),
      ),
    );
  });
});

describe('SAP Commerce: built with ant from hybris/bin/platform', { timeout: REAL_BUILD_TIMEOUT_MS }, () => {
  const ANT = ['--', 'sh', '-c', '. ./setantenv.sh && ant build'];
  const STORE_WEB = 'hybris/bin/custom/acmestorefront/web/src/com/acme/storefront/web/CheckoutController.java';
  const CORE_SRC = 'hybris/bin/custom/acmecore/src/com/acme/core/service/ReviewService.java';

  /** A compiled copy, its class output directories, and the platform folder users build from. */
  async function sapTree() {
    const dir = await compiledFixture('sap-commerce');
    const hybris = path.join(dir, 'hybris');
    const platform = path.join(hybris, 'bin', 'platform');
    const custom = path.join(hybris, 'bin', 'custom');
    const classDirs = [
      path.join(custom, 'acmecore', 'classes'),
      path.join(custom, 'acmecore', 'web', 'webroot', 'WEB-INF', 'classes'),
      path.join(custom, 'acmestorefront', 'classes'),
      path.join(custom, 'acmestorefront', 'web', 'webroot', 'WEB-INF', 'classes'),
      path.join(platform, 'bootstrap', 'modelclasses'),
    ];
    return { dir, hybris, platform, classDirs };
  }

  it('<hybris>/.reclazz/agent.port and every class output directory are found by themselves; the changed classes are verified', async () => {
    const { hybris, platform, classDirs } = await sapTree();
    const agent = await agentFor({ portFile: path.join(hybris, '.reclazz', 'agent.port'), appDir: platform, watchDirs: classDirs });
    await waitPastAntGranularity(path.dirname(hybris));
    await editSource(path.dirname(hybris), STORE_WEB, '"Checkout: "', '"Checkout, edited: "');
    await editSource(path.dirname(hybris), CORE_SRC, '"/5)"', '" of 5)"');
    const before = classFiles(classDirs.filter((d) => fs.existsSync(d)));
    const run = await runCli(['--verbose', ...ANT], { cwd: platform, timeoutMs: CLI_TIMEOUT_MS });
    expect(run.stderr).toContain(`from ${path.join(hybris, '.reclazz', 'agent.port')}`);
    expect(run.stderr).toContain(`class output directories: ${[...classDirs].sort().join(', ')}`);
    expect(run.exitCode).toBe(0);
    expect(verified(agent)).toEqual(
      expect.arrayContaining([
        classEntry(classDirs[3]!, 'com.acme.storefront.web.CheckoutController'),
        classEntry(classDirs[0]!, 'com.acme.core.service.ReviewService'),
      ]),
    );
    expect(verified(agent)).toEqual(
      written(
        before,
        classDirs.filter((d) => fs.existsSync(d)),
      ),
    );
  });

  it("the IDE's <project>/.idea/reclazz/agent.port is found from bin/platform too, and doctor sees every class output directory watched", async () => {
    const { dir, platform, classDirs } = await sapTree();
    await agentFor({ portFile: path.join(dir, '.idea', 'reclazz', 'agent.port'), appDir: platform, watchDirs: classDirs });
    const run = await runCli(['doctor'], { cwd: platform });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(`from ${path.join(dir, '.idea', 'reclazz', 'agent.port')}`);
    for (const classes of classDirs) expect(run.stdout).toMatch(new RegExp(`watched\\s+${classes.replace(/[$.]/g, '\\$&')}\\n`));
    expect(run.stdout).toContain('DOCTOR observed; 5 of 5 class output directories here watched');
  });
});
