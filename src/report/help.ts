/**
 * The exit-status table (outcome/exit.ts) as `--help` shows it and as the README's section
 * "The last line and the exit status" has it (`npm run docs` writes that table from here).
 */
import { EXIT_TABLE, reasonsOf, type ExitRow } from '../outcome/exit.js';

/** The kinds of command the table has a column for. */
export type ExitColumn = 'build' | 'verify' | 'agent';

function meaning(row: ExitRow, column: ExitColumn): string | undefined {
  const text = row[column];
  return text === 'same' ? row.build : text;
}

/** The `Exit status:` block of `--help` for `column`, wrapped to `width` characters. */
export function exitHelp(column: ExitColumn, width = 92): string {
  const indent = 11;
  const lines = ['Exit status:'];
  for (const row of EXIT_TABLE) {
    const text = meaning(row, column);
    if (text === undefined) continue;
    const words = text.split(' ');
    let line = `  ${row.status.replace(' / ', '/').padEnd(indent - 2)}`;
    for (const word of words) {
      if (line.length + word.length + 1 > width && line.trim() !== row.status.replace(' / ', '/')) {
        lines.push(line.trimEnd());
        line = ' '.repeat(indent);
      }
      line += line.endsWith(' ') ? word : ` ${word}`;
    }
    lines.push(line.trimEnd());
  }
  return lines.join('\n');
}

/**
 * The README's exit-status table, in Markdown.
 * @internal for `npm run docs` and its test
 */
export function exitMarkdown(): string {
  const cell = (text: string | undefined) => (text === undefined ? '' : text.replace(/\|/g, '\\|'));
  const reasons = (row: ExitRow) =>
    reasonsOf(row)
      .map((r) => `\`${r}\``)
      .join(', ');
  const rows = EXIT_TABLE.map(
    (row) => `| ${row.status} | ${cell(row.build)} | ${cell(row.verify)} | ${cell(row.agent)} | ${reasons(row)} |`,
  );
  return [
    '| status | build (`gradle`, `mvn`, `--`) | `verify` | `doctor`, `status`, `pause`, `resume`, `scan`, `events` | `reason` (JSON) |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
