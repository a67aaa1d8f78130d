/**
 * The JSON reference (docs/json.md) against the schemas the output is checked with: every
 * `reason`, every `class` status and every field of every event line the code can write is
 * named there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { classStatusSchema, commandResultLineSchemas, eventLineSchemas, runResultLineSchema } from '../../src/report/schema.js';

const DOC = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/json.md'), 'utf8');

/** The text of docs/json.md from the paragraph that starts with `start` to the next blank line. */
function paragraph(start: string): string {
  const at = DOC.indexOf(start);
  expect(at, start).toBeGreaterThanOrEqual(0);
  const end = DOC.indexOf('\n\n', at);
  return DOC.slice(at, end === -1 ? undefined : end);
}

const named = (text: string) => new Set([...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]));

describe('the JSON reference, docs/json.md', () => {
  it('lists every reason of a build or verify, and of a subcommand', () => {
    const text = paragraph('`reason` of a build or `verify`:');
    const [run, command] = text.split('Of a subcommand:') as [string, string];
    expect([...runResultLineSchema.shape.reason.options].filter((r) => !named(run).has(r))).toEqual([]);
    expect([...commandResultLineSchemas.doctor.shape.reason.options].filter((r) => !named(command).has(r))).toEqual([]);
    // And nothing else: a reason named there that the code no longer gives is stale.
    const runReasons = new Set<string>(runResultLineSchema.shape.reason.options);
    const commandReasons = new Set<string>(commandResultLineSchemas.doctor.shape.reason.options);
    expect([...named(run)].filter((r) => !runReasons.has(r) && !['reason', 'verify'].includes(r) && !r.startsWith('.reclazz'))).toEqual([]);
    expect([...named(command)].filter((r) => !commandReasons.has(r) && r !== 'events')).toEqual([]);
  });

  it('lists every class status', () => {
    const text = paragraph('A verdict:');
    expect([...classStatusSchema.options].filter((s) => !named(text).has(s))).toEqual([]);
  });

  it('names every field of every event line in its table row', () => {
    const missing: string[] = [];
    for (const schema of Object.values(eventLineSchemas)) {
      const type = schema.shape.type.value;
      const row = DOC.split('\n').find((line) => line.startsWith(`| \`${type}\` |`));
      if (row === undefined) {
        missing.push(type);
        continue;
      }
      for (const field of Object.keys(schema.shape)) {
        if (field !== 'type' && !new RegExp(`\`[{]?${field}\\b`).test(row)) missing.push(`${type}.${field}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
