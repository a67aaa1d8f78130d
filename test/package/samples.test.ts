/**
 * What the documents show against what the tool does, so that they cannot drift: every
 * generated terminal sample is what a real run prints today (recorded again here with
 * scripts/samples.mjs; `npm run docs` rewrites them), every command line in a code block names
 * a command and options that exist, every `npm run` names a script of package.json, and the
 * config example of docs/commands.md is a valid config. That the library examples
 * (docs/library.md) type-check against the declarations the package ships is
 * test/package/pack.test.ts (one compile with the consumer's); the README's shape and the links
 * between the documents are test/package/readme-structure.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documents, readBlocks } from '../../scripts/docs-blocks.mjs';
import { recordSamples } from '../../scripts/samples.mjs';
import { benchBlock } from '../../scripts/bench-block.mjs';
import { cliEnv, runCli, tempDir } from '../support/cli.js';
import { compiledFixture, removeFixtureCopies } from '../support/fixture-cache.js';
import type { FixtureName } from '../support/fixture-compile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCS = documents(ROOT).map((name) => ({ name, text: fs.readFileSync(path.join(ROOT, name), 'utf8') }));
/** Blocks written from other sources than a recorded run (the exit table: test/outcome/exit.test.ts; the bench's last run, below). */
const NOT_RECORDED = new Set(['exit-statuses', 'bench-last-run']);

/** The lines of every fenced code block of `text` whose language is sh, console, yaml or none, with the language. */
function codeLines(text: string): Array<{ lang: string; line: string }> {
  const lines: Array<{ lang: string; line: string }> = [];
  for (const block of text.matchAll(/^```([a-z]*)\n([\s\S]*?)^```$/gm)) {
    const lang = block[1]!;
    if (!['sh', 'console', 'yaml', ''].includes(lang)) continue;
    for (const line of block[2]!.split('\n')) {
      // In console and plain blocks only the typed commands ("$ ...") are commands.
      if (lang === 'sh' || lang === 'yaml') lines.push({ lang, line });
      else if (line.startsWith('$ ')) lines.push({ lang, line: line.slice(2) });
    }
  }
  return lines;
}

/** Every invocation of `bin` in a shell line: the words after it, up to a shell operator or a comment. */
function invocations(line: string, bin: string): string[][] {
  const found: string[][] = [];
  const command = line.replace(/(^|\s)#.*$/, ''); // a shell comment is prose
  for (const m of command.matchAll(new RegExp(`(?:^|[\\s;&|(])${bin}((?: +[^\\s;&|#)]+)*)`, 'g'))) {
    found.push(m[1]!.trim().split(/ +/).filter(Boolean));
  }
  return found;
}

/** What a `--help` text lists: its `--long` options, those that take a value, and the commands under "Commands:". */
function helpFacts(help: string): { options: Set<string>; valued: Set<string>; commands: Set<string> } {
  const options = new Set([...help.matchAll(/(?:^|[\s,])(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]!));
  const valued = new Set([...help.matchAll(/(--[a-z][a-z0-9-]*) [<[]/g)].map((m) => m[1]!));
  const section = /\nCommands:\n([\s\S]*?)(?:\n\n|$)/.exec(help)?.[1] ?? '';
  const commands = new Set([...section.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!));
  return { options, valued, commands };
}

/** `words` split into the options in front (with their values) and the rest, from the first other word or `--` on. */
function leadingOptions(words: string[], valued: Set<string>): { options: string[]; rest: string[] } {
  let at = 0;
  const options: string[] = [];
  while (at < words.length && words[at]!.startsWith('-') && words[at] !== '--') {
    const option = words[at]!.split('=')[0]!;
    options.push(option);
    at += valued.has(option) && !words[at]!.includes('=') ? 2 : 1;
  }
  return { options, rest: words.slice(at) };
}

describe('the samples in the documents', () => {
  let recorded: Record<string, string>;
  beforeAll(async () => {
    // The projects compiled once for the whole run (test/support/fixture-cache.ts), moved into place.
    recorded = await recordSamples(async (name, to) => fs.renameSync(await compiledFixture(name as FixtureName), to));
  }, 300_000);
  afterAll(removeFixtureCopies);

  it.each(DOCS)('$name shows what real runs print (npm run docs rewrites the samples)', ({ text }) => {
    for (const { id, body } of readBlocks(text).filter((b) => !NOT_RECORDED.has(b.id))) {
      expect(recorded[id], `no recorded sample "${id}" (scripts/samples.mjs)`).toBeDefined();
      expect(body, `sample "${id}"`).toBe(recorded[id]);
    }
  });

  it('uses every recorded sample somewhere', () => {
    const used = new Set(DOCS.flatMap(({ text }) => readBlocks(text).map((b) => b.id)));
    expect(Object.keys(recorded).filter((id) => !used.has(id))).toEqual([]);
  });
});

describe('the command lines in the documents', () => {
  const cwd = tempDir();
  const help = async (bin: string, args: string[]) =>
    helpFacts(String((await execa(process.execPath, [path.join(ROOT, 'bin', bin), ...args, '--help'], { cwd, env: cliEnv() })).stdout));

  it('name reclazz-build commands and options that exist', async () => {
    const main = await help('reclazz-build.cjs', []);
    const bad: string[] = [];
    let checked = 0;
    for (const { name, text } of DOCS) {
      for (const { line } of codeLines(text)) {
        for (const words of invocations(line, 'reclazz-build')) {
          checked++;
          const { options, rest } = leadingOptions(words, main.valued);
          const [next] = rest;
          // After gradle, mvn or -- the words are the build's; a subcommand has options of its own.
          let allowed = main.options;
          let own: string[] = [];
          if (next !== undefined && next !== '--' && next !== 'gradle' && next !== 'mvn') {
            if (!main.commands.has(next)) bad.push(`${name}: "${line}": ${next} is no reclazz-build command`);
            else {
              const sub = await help('reclazz-build.cjs', [next]);
              allowed = new Set([...main.options, ...sub.options]);
              own = rest
                .slice(1)
                .filter((w) => w.startsWith('--'))
                .map((w) => w.split('=')[0]!);
            }
          }
          const known = (option: string) => (option.startsWith('--') ? allowed.has(option) : ['-h', '-V'].includes(option));
          for (const option of [...options, ...own]) if (!known(option)) bad.push(`${name}: "${line}": ${option}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  it('name reclazz-fake-agent options that exist', async () => {
    const agent = await help('reclazz-fake-agent.js', []);
    const bad = DOCS.flatMap(({ name, text }) =>
      codeLines(text).flatMap(({ line }) =>
        invocations(line, 'reclazz-fake-agent').flatMap((words) =>
          words.filter((w) => w.startsWith('--') && !agent.options.has(/^--[a-z0-9-]+/.exec(w)![0])).map((w) => `${name}: "${line}": ${w}`),
        ),
      ),
    );
    expect(bad).toEqual([]);
  });

  it('run npm scripts that package.json has', () => {
    const scripts = Object.keys((JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: object }).scripts);
    const bad = DOCS.flatMap(({ name, text }) =>
      [...text.matchAll(/\bnpm run ([a-z](?:[\w:-]*\w)?)/g)]
        .map((m) => m[1]!)
        .filter((s) => !scripts.includes(s))
        .map((s) => `${name}: npm run ${s}`),
    );
    expect(bad).toEqual([]);
  });
});

describe("docs/commands.md's config example", () => {
  it('is a valid reclazz.config.json', async () => {
    const commands = DOCS.find((d) => d.name === 'docs/commands.md')!.text;
    const example = /^## Configuration$[\s\S]*?^```json\n([\s\S]*?)^```$/m.exec(commands)?.[1];
    expect(example).toBeDefined();
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, '.git'));
    fs.writeFileSync(path.join(dir, 'reclazz.config.json'), example!);
    // A valid config gets as far as looking for the agent (nothing listens on port 1); an invalid one is exit 2.
    const run = await runCli(['doctor', '--port', '1', '--timeout', '200'], { cwd: dir });
    expect(run.stderr).not.toContain('invalid config');
    expect(run.exitCode, run.stderr).toBe(69);
  });
});

describe('the tables of docs/performance.md', () => {
  it('are the last bench run, bench/results.json (npm run docs rewrites them)', () => {
    const blocks = readBlocks(DOCS.find((d) => d.name === 'docs/performance.md')!.text).filter((b) => b.id === 'bench-last-run');
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.body).toBe(benchBlock(ROOT));
  });
});
