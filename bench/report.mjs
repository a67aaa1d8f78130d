/**
 * What the bench prints and keeps: the figures as Markdown tables (the format of docs/performance.md) and
 * how their verdicts compare with the previous full run's bench/results.json.
 */
import fs from 'node:fs';

/** A value in its unit: `1.23x`, `105 ms`, `128 MB`; `-` when there is none. */
export function shown(value, unit) {
  if (value === undefined || value === null) return '-';
  return unit === 'x' ? `${value.toFixed(2)}x` : `${Math.round(value)} ${unit}`;
}

const verdict = (f) => (f.error !== undefined ? 'MISS (error)' : f.pass ? 'pass' : 'MISS');
const side = (c) => (c === undefined ? '-' : `${c.what} ${shown(c.median, c.unit)}`);

function markdown(figures) {
  const head = ['figure', 'measured', 'floor', 'target', 'median', 'min', 'max', ''];
  const rows = figures.map((f) => [
    f.figure,
    side(f.measured),
    side(f.floor),
    f.target,
    shown(f.median, f.unit),
    shown(f.min, f.unit),
    shown(f.max, f.unit),
    verdict(f),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The targets' table, then the first bench's figures kept with their old targets, then any errors. */
export function tables(figures) {
  const parts = [markdown(figures.filter((f) => !f.kept))];
  const kept = figures.filter((f) => f.kept);
  if (kept.length > 0) parts.push(`also measured, with the first bench's targets:\n\n${markdown(kept)}`);
  const errors = figures.filter((f) => f.error !== undefined);
  if (errors.length > 0) parts.push(errors.map((f) => `${f.id}: ${f.error}`).join('\n\n'));
  return parts.join('\n\n');
}

/**
 * Compares the verdicts with those of `file` (an earlier bench/results.json, possibly of the
 * other order). Figures missing on either side, or whose target changed, are left out.
 * @returns a line to print; undefined when `file` is missing, unreadable or shares no figure.
 */
export function compareVerdicts(file, figures, order) {
  let previous;
  try {
    previous = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const before = new Map((previous.figures ?? []).map((f) => [f.id, f]));
  const common = figures.filter((f) => before.get(f.id)?.target === f.target);
  if (common.length === 0) return undefined;
  const differ = common.filter((f) => verdict(f) !== verdict(before.get(f.id)));
  const against = `the previous full run (${previous.order ?? 'forward'} order, ${previous.date})`;
  if (differ.length === 0) return `verdicts in ${order} order: the same as ${against}, ${common.length} figures`;
  const changes = differ.map((f) => `${f.id} ${verdict(before.get(f.id))} -> ${verdict(f)}`).join(', ');
  return `verdicts in ${order} order differ from ${against}: ${changes}`;
}
