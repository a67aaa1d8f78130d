/**
 * docs/editors.md's "Watch mode in an editor" against the code: the patterns it gives for an
 * editor's background problem matcher, in its list and in its VS Code task, are the ones watch
 * mode's lines are made to match (src/report/watch-lines.ts), and the task's Maven pattern reads the
 * compiler error line of the recorded watch sample (docs/commands.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CYCLE_BEGINS_PATTERN, CYCLE_ENDS_PATTERN } from '../../src/report/watch-lines.js';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');
const EDITORS = fs.readFileSync(path.join(DOCS, 'editors.md'), 'utf8');
const COMMANDS = fs.readFileSync(path.join(DOCS, 'commands.md'), 'utf8');

/** The text of docs/editors.md's section `heading` (a `##` heading), up to the next heading of that level or above. */
function section(heading: string): string {
  const at = EDITORS.indexOf(`\n## ${heading}\n`);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const end = EDITORS.slice(at + 1).search(/\n#{1,2} /);
  return EDITORS.slice(at, end < 0 ? undefined : at + 1 + end);
}

interface Task {
  command: string;
  isBackground: boolean;
  problemMatcher: { pattern: { regexp: string }; background: { activeOnStart: boolean; beginsPattern: string; endsPattern: string } };
}

describe('docs/editors.md: watch mode in an editor', () => {
  const text = section('Watch mode in an editor');

  it('lists the begins and ends patterns of watch mode', () => {
    expect(/^- begins: `(.*)`$/m.exec(text)?.[1]).toBe(CYCLE_BEGINS_PATTERN);
    expect(/^- ends: `(.*)`$/m.exec(text)?.[1]).toBe(CYCLE_ENDS_PATTERN);
  });

  it("has a VS Code task with those patterns, whose Maven pattern reads the sample's compiler error", () => {
    const block = /```json\n([\s\S]*?)^```$/m.exec(text)?.[1];
    expect(block, 'the tasks.json block').toBeDefined();
    const task = (JSON.parse(block!) as { tasks: Task[] }).tasks[0]!;
    expect(task.isBackground).toBe(true);
    expect(task.command).toMatch(/^reclazz-build watch /);
    expect(task.problemMatcher.background).toEqual({
      activeOnStart: false,
      beginsPattern: CYCLE_BEGINS_PATTERN,
      endsPattern: CYCLE_ENDS_PATTERN,
    });
    const sample = /<!-- generated: watch -->\n([\s\S]*?)<!-- \/generated -->/.exec(COMMANDS)?.[1] ?? '';
    const error = sample.split('\n').find((line) => /^\[ERROR\] \/.*\.java:\[/.test(line));
    expect(error, 'a compiler error line in the watch sample').toBeDefined();
    const match = new RegExp(task.problemMatcher.pattern.regexp).exec(error!);
    expect(match?.slice(1, 4)).toEqual(['/home/me/shop/src/main/java/com/acme/Greeter.java', '6', '16']);
  });
});
