/**
 * Edits for the end-to-end tests on the maven-app and gradle-app fixtures: the greeting of
 * Greeter.java, and a compile error put in and taken out. Each test edits its own compiled copy
 * (fixture-cache.ts), never the checked-in fixture.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The two single-module fixtures the main job is tested on. */
export type AppFixture = 'maven-app' | 'gradle-app';

/**
 * Where each fixture's build writes its class files, relative to the project
 * directory (`mvn compile` → target/classes, `gradle classes` → build/classes/java/main).
 */
export const CLASS_OUTPUT_DIR: Readonly<Record<AppFixture, string>> = {
  'maven-app': 'target/classes',
  'gradle-app': path.join('build', 'classes', 'java', 'main'),
};

/** Path of Greeter.java, relative to a fixture's project directory. */
const GREETER_SOURCE: string = path.join('src', 'main', 'java', 'com', 'acme', 'Greeter.java');

/** Marker on the line that {@link introduceCompileError} adds. */
const COMPILE_ERROR_MARKER = '// reclazz-test: deliberate compile error';

/** `return "..."` in Greeter.greet(); the semicolon is not part of the match. */
const GREETING_LITERAL = /(return\s+)"(?:[^"\\\r\n]|\\.)*"/;

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
