/**
 * docs/evidence.md "The kinds of evidence" against the rule's own data (src/classes/evidence.ts
 * PRECONDITIONS): the same kinds, with the same preconditions, in the same order. A kind or a
 * precondition added, removed or moved in one and not the other fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PRECONDITIONS } from '../../src/classes/evidence.js';

const DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/evidence.md');

/** The section's kinds (`- **\`kind\`**`) and, below each, its preconditions (`  - \`name\`:`), in order. */
function documentedKinds(): Record<string, string[]> {
  const text = fs.readFileSync(DOC, 'utf8');
  const start = text.indexOf('\n## The kinds of evidence\n');
  expect(start, 'docs/evidence.md has a section "The kinds of evidence"').toBeGreaterThanOrEqual(0);
  const rest = text.slice(start + 1);
  const end = rest.search(/\n#{2,3} /);
  const kinds: Record<string, string[]> = {};
  let current: string[] | undefined;
  for (const line of rest.slice(0, end).split('\n')) {
    const kind = /^- \*\*`([a-z-]+)`\*\*: \S/.exec(line);
    if (kind) kinds[kind[1]!] = current = [];
    const precondition = /^ {2}- `([a-z-]+)`: \S/.exec(line);
    if (precondition) {
      expect(current, `precondition ${precondition[1]} comes under a kind`).toBeDefined();
      current!.push(precondition[1]!);
    }
  }
  return kinds;
}

describe('docs/evidence.md says the rule the code decides by', () => {
  it('lists every kind of evidence with its preconditions, in the order the rule checks them', () => {
    const documented = documentedKinds();
    expect(Object.keys(documented)).toEqual(Object.keys(PRECONDITIONS));
    for (const [kind, preconditions] of Object.entries(PRECONDITIONS)) {
      expect(documented[kind], `the preconditions of ${kind}`).toEqual([...preconditions]);
    }
  });
});
