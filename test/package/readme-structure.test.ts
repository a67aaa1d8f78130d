/**
 * The README's shape, so that it stays the page a Java developer reads top down (CONTRIBUTING.md,
 * "The documents"): at most 400 lines, its Contents in the order of its sections, "Connect your
 * app" before the commands, no benchmark tables (they live in docs/performance.md); and every
 * link between the documents reaches a file and a heading that exist. That its samples are what
 * real runs print is test/package/samples.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documents, readBlocks } from '../../scripts/docs-blocks.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-');

/** `text` without its fenced code blocks: a `# comment` in a shell block is no heading. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```$/gm, '');

/** The headings of `text` outside code blocks, in order, with their level and anchor. */
function headings(text: string): Array<{ level: number; title: string; anchor: string }> {
  return [...prose(text).matchAll(/^(#{1,6}) (.+)$/gm)].map((m) => ({ level: m[1]!.length, title: m[2]!, anchor: anchor(m[2]!) }));
}

/** The README's text from its heading `## title` to the next `##` heading. */
function section(title: string): string {
  const at = README.indexOf(`\n## ${title}\n`);
  expect(at, `the README has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = README.indexOf('\n## ', at + 1);
  return README.slice(at, end < 0 ? undefined : end);
}

describe('the README', () => {
  it('is at most 400 lines', () => {
    expect(README.split('\n').length - (README.endsWith('\n') ? 1 : 0)).toBeLessThanOrEqual(400);
  });

  it('lists its sections in Contents in the order the body has them, every top-level one included', () => {
    const linked = [...section('Contents').matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    const body = headings(README.slice(README.indexOf('\n## Contents\n') + 1)).filter((h) => h.title !== 'Contents');
    const order = body.map((h) => h.anchor);
    const positions = linked.map((a) => order.indexOf(a));
    expect(
      linked.filter((_a, i) => positions[i] === -1),
      'Contents links to no heading',
    ).toEqual([]);
    expect(positions, 'Contents in body order').toEqual([...positions].sort((a, b) => a - b));
    const topLevel = body.filter((h) => h.level === 2).map((h) => h.anchor);
    expect(
      topLevel.filter((a) => !linked.includes(a)),
      'top-level sections missing from Contents',
    ).toEqual([]);
  });

  it('says how to connect a real app before the commands, with a copy-paste block for each way to attach the agent', () => {
    const titles = headings(README)
      .filter((h) => h.level === 2)
      .map((h) => h.title);
    expect(titles.indexOf('Connect your app')).toBeGreaterThanOrEqual(0);
    expect(titles.indexOf('Connect your app')).toBeLessThan(titles.indexOf('Commands'));
    const connect = section('Connect your app');
    const blocks = [...connect.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
    for (const way of ['-javaagent:', '<artifactId>reclazz-maven-plugin</artifactId>', 'id("com.onurkat.reclazz")']) {
      expect(
        blocks.some((b) => b.includes(way)),
        way,
      ).toBe(true);
    }
    // The goal named before spring-boot:run: set in spring-boot:run's forked lifecycle, its property never reaches the run.
    expect(connect).toContain('mvn reclazz:prepare-agent spring-boot:run');
    expect(connect).not.toMatch(/then `mvn spring-boot:run`/);
    expect(connect).toContain('com.onurkat.reclazz:reclazz-agent');
    expect(connect).toMatch(/test JVMs/);
    expect(connect).toContain('portFile=');
    expect(connect).toContain('](docs/connect.md');
  });

  it('has no benchmark tables: they are in docs/performance.md', () => {
    expect(readBlocks(README).map((b) => b.id)).not.toContain('bench-last-run');
    const tableHeads = prose(README)
      .split('\n')
      .filter((line) => /^\|.*\|$/.test(line) && /\b(median|floor|target)\b/.test(line));
    expect(tableHeads).toEqual([]);
  });
});

describe('docs/connect.md', () => {
  const CONNECT = fs.readFileSync(path.join(ROOT, 'docs', 'connect.md'), 'utf8');
  const blocks = [...CONNECT.matchAll(/^ *```([a-z]*)\n([\s\S]*?)^ *```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));

  it("gives the tests' prepare-agent execution its own argLine and port file, the agentArgs a map", () => {
    const execution = blocks.find((b) => b.lang === 'xml' && b.body.includes('<goal>prepare-agent</goal>'));
    expect(execution, 'a prepare-agent execution in full').toBeDefined();
    // The plugin-level propertyName would otherwise be inherited: a second -javaagent in the app's property.
    expect(execution!.body).toContain('<propertyName>argLine</propertyName>');
    expect(execution!.body).toMatch(/<agentArgs>\s*<portFile>[^<]+<\/portFile>\s*<\/agentArgs>/);
  });

  it("keeps Gradle's test tasks off the app's agent options, and gives them a -javaagent of their own", () => {
    const kotlin = blocks.filter((b) => b.lang === 'kotlin').map((b) => b.body);
    expect(kotlin.some((b) => b.includes('applyToTest.set(false)'))).toBe(true);
    expect(kotlin.some((b) => /withType<Test>\(\)[\s\S]*-javaagent:[^"]*=portFile=/.test(b))).toBe(true);
    expect(
      kotlin.some((b) => /arguments\.(put|set)\("portFile"/.test(b)),
      "a portFile in the plugin's arguments moves the app's port file too",
    ).toBe(false);
  });

  it('builds the agent with the command and names the jar the agent build makes', () => {
    const sh = blocks.filter((b) => b.lang === 'sh').map((b) => b.body);
    expect(sh.some((b) => b.includes('./gradlew :agent:shadowJar') && b.includes('agent/build/libs/agent-<version>.jar'))).toBe(true);
    expect(
      sh.some(
        (b) => /mvn install:install-file -Dfile=agent\/build\/libs\/agent-\$V\.jar/.test(b) && b.includes('-DartifactId=reclazz-agent'),
      ),
    ).toBe(true);
  });
});

describe('the links between the documents', () => {
  it('name files that exist and headings they have', () => {
    const bad: string[] = [];
    for (const name of documents(ROOT)) {
      // Code (a regular expression like `[✔⚠✖](?:…)`) is not a link.
      const text = prose(fs.readFileSync(path.join(ROOT, name), 'utf8')).replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // a web address
        const [file, hash] = target!.split('#') as [string, string | undefined];
        const resolved = file === '' ? name : path.normalize(path.join(path.dirname(name), file));
        if (!fs.existsSync(path.join(ROOT, resolved))) {
          bad.push(`${name}: ${target} (no file)`);
          continue;
        }
        if (hash === undefined) continue;
        const anchors = headings(fs.readFileSync(path.join(ROOT, resolved), 'utf8')).map((h) => h.anchor);
        if (!anchors.includes(hash)) bad.push(`${name}: ${target} (no such heading)`);
      }
    }
    expect(bad).toEqual([]);
  });
});
