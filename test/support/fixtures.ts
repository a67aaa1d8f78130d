/**
 * Helpers for end-to-end tests that run real Maven / Gradle builds on the
 * projects under `fixtures/`.
 *
 * Every test works on its own copy of a fixture (see {@link copyFixture}), so
 * tests can edit sources and build in parallel without touching the checked-in
 * fixture or each other.
 *
 * There is deliberately no "skip when the build tool is missing" helper: in CI
 * a test skipped because a tool is missing has not passed. {@link copyFixture}
 * throws instead, which makes such a test fail with a clear message.
 * `.ci/install-build-tools.sh` installs the tools.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Names of the fixture projects under `fixtures/`. */
export type FixtureName = 'maven-app' | 'gradle-app';

/** Build tools that the fixtures need on PATH. */
type BuildToolName = 'mvn' | 'gradle';

/** Absolute path of the repository's `fixtures/` directory. */
const FIXTURES_DIR: string = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** The build tool each fixture is built with. */
const FIXTURE_TOOL: Readonly<Record<FixtureName, BuildToolName>> = {
  'maven-app': 'mvn',
  'gradle-app': 'gradle',
};

/**
 * Where each fixture's build writes its class files, relative to the project
 * directory (`mvn compile` → target/classes, `gradle classes` → build/classes/java/main).
 */
export const CLASS_OUTPUT_DIR: Readonly<Record<FixtureName, string>> = {
  'maven-app': 'target/classes',
  'gradle-app': path.join('build', 'classes', 'java', 'main'),
};

/** Path of Greeter.java, relative to a fixture's project directory. */
const GREETER_SOURCE: string = path.join('src', 'main', 'java', 'com', 'acme', 'Greeter.java');

/** Build output and tool state that a fresh copy must not inherit (top level only). */
const EXCLUDED_TOP_LEVEL = new Set(['target', 'build', '.gradle', '.reclazz']);

/** Marker on the line that {@link introduceCompileError} adds. */
const COMPILE_ERROR_MARKER = '// reclazz-test: deliberate compile error';

/** `return "..."` in Greeter.greet(); the semicolon is not part of the match. */
const GREETING_LITERAL = /(return\s+)"(?:[^"\\\r\n]|\\.)*"/;

const copies = new Set<string>();
const availability = new Map<BuildToolName, boolean>();

/**
 * Copies `fixtures/<name>` into a fresh temporary directory, leaving out any
 * `target/`, `build/`, `.gradle/` and `.reclazz/` at the fixture's top level,
 * and returns the absolute (real) path of the copied project directory
 * (`<tmp>/reclazz-<name>-XXXXXX/<name>`).
 *
 * @throws Error if the fixture's build tool (`mvn` or `gradle`) is not
 *   available: e2e tests must fail, not skip, when a tool is missing.
 */
export async function copyFixture(name: FixtureName): Promise<string> {
  const tool = FIXTURE_TOOL[name];
  if (tool === undefined) {
    throw new Error(`unknown fixture '${String(name)}' (expected one of: ${Object.keys(FIXTURE_TOOL).join(', ')})`);
  }
  if (!toolAvailable(tool)) {
    throw new Error(
      `fixture '${name}' needs '${tool}', which is not installed or does not run ('${tool} -v' failed). ` +
        `Install the Java build tools with 'bash .ci/install-build-tools.sh'; ` +
        `this test fails rather than skips without them.`,
    );
  }
  const source = path.join(FIXTURES_DIR, name);
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), `reclazz-${name}-`)));
  copies.add(root);
  const projectDir = path.join(root, name);
  await cp(source, projectDir, {
    recursive: true,
    filter: (src) => !EXCLUDED_TOP_LEVEL.has(path.relative(source, src)),
  });
  return projectDir;
}

/**
 * Removes every temporary directory that {@link copyFixture} created in this
 * process (for an `afterAll` hook). Safe to call more than once.
 */
export async function removeFixtureCopies(): Promise<void> {
  const roots = [...copies];
  copies.clear();
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
}

/**
 * Replaces the string literal returned by `Greeter.greet()` in the project's
 * Greeter.java with `newText` (escaped as a Java string literal), so that the
 * next build changes Greeter.class and nothing else.
 *
 * @returns the Java source text of the literal that was replaced, quotes included.
 * @throws Error if Greeter.java has no `return "..."` to rewrite.
 */
export async function editGreeting(projectDir: string, newText: string): Promise<string> {
  const file = path.join(projectDir, GREETER_SOURCE);
  const source = await readFile(file, 'utf8');
  const match = GREETING_LITERAL.exec(source);
  if (match === null) {
    throw new Error(`no 'return "..."' literal found in ${file}`);
  }
  const previous = match[0].slice(match[1]!.length);
  const updated = source.replace(GREETING_LITERAL, (_whole, ret: string) => `${ret}${javaStringLiteral(newText)}`);
  await writeFile(file, updated, 'utf8');
  return previous;
}

/**
 * Adds a line with a type error to Greeter.java so that the next build fails
 * to compile. Calling it again while the error is present changes nothing.
 * Undo with {@link fixCompileError}.
 *
 * Note what a failed build leaves behind. maven-compiler-plugin 3.10.1, on
 * seeing a changed source, deletes every class it built before and recompiles
 * the module; javac then writes some classes before it stops on the error,
 * which ones depending on source order (seen: only package-info.class; all but
 * Greeter.class; none for a syntax error). So do not rely on the contents of
 * target/classes after a failed Maven build. A failed Gradle 4.4 incremental
 * build deletes Greeter.class and leaves the other classes as they were.
 */
export async function introduceCompileError(projectDir: string): Promise<void> {
  const file = path.join(projectDir, GREETER_SOURCE);
  const source = await readFile(file, 'utf8');
  if (source.includes(COMPILE_ERROR_MARKER)) {
    return;
  }
  const classEnd = source.lastIndexOf('}');
  if (classEnd < 0) {
    throw new Error(`no closing brace found in ${file}`);
  }
  const broken =
    source.slice(0, classEnd) + `    int reclazzCompileError = "not an int"; ${COMPILE_ERROR_MARKER}\n` + source.slice(classEnd);
  await writeFile(file, broken, 'utf8');
}

/**
 * Removes the error that {@link introduceCompileError} added, restoring
 * Greeter.java to what it was before (greeting edits are kept). Does nothing
 * when no such error is present.
 */
export async function fixCompileError(projectDir: string): Promise<void> {
  const file = path.join(projectDir, GREETER_SOURCE);
  const source = await readFile(file, 'utf8');
  if (!source.includes(COMPILE_ERROR_MARKER)) {
    return;
  }
  const fixed = source
    .split('\n')
    .filter((line) => !line.includes(COMPILE_ERROR_MARKER))
    .join('\n');
  await writeFile(file, fixed, 'utf8');
}

/**
 * Whether `mvn` or `gradle` is on PATH and runs (`<tool> -v` exits 0).
 * The answer is cached for the life of the process; the first gradle check
 * takes about a second (JVM start-up).
 */
function toolAvailable(name: BuildToolName): boolean {
  const cached = availability.get(name);
  if (cached !== undefined) {
    return cached;
  }
  const result = spawnSync(name, ['-v'], {
    stdio: 'ignore',
    timeout: 60_000,
    shell: process.platform === 'win32',
  });
  const available = result.error === undefined && result.status === 0;
  availability.set(name, available);
  return available;
}

/** `text` as a Java string literal, quotes included. */
function javaStringLiteral(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
