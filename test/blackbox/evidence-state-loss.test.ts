/**
 * The state-loss matrix (issue 11, hole 5): whatever happens to `.reclazz/`, a class whose
 * reload failed is never reported live. In every cell the app started, a run recorded its
 * classes, an outside compile rewrote Greeter and the agent's reload of it failed; then the
 * state is damaged and a build that changes nothing runs: no "✔", exit 75. Losing the record
 * means checking more, never less.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readClassIndex, writeClassIndex } from '../../src/state/store.js';
import { buildCommand, type Project } from '../support/project.js';
import { classFile, compileOutside, giveToNobody, reloadsEnded, run, sha, useProjects } from '../support/evidence.js';

const projectWithAgent = useProjects();

const indexFile = (p: Project) => path.join(p.dir, '.reclazz', 'classes.idx');

/** What is done to the state before the second run; `unprivileged`: that run goes as another user. */
const CELLS: ReadonlyArray<[string, (p: Project) => void, { unprivileged?: boolean }?]> = [
  ['nothing lost (the record says Greeter changed)', () => undefined],
  ['index deleted', (p) => fs.rmSync(indexFile(p))],
  ['index truncated', (p) => fs.truncateSync(indexFile(p), fs.statSync(indexFile(p)).size - 40)],
  [
    'index corrupted',
    (p) => {
      const bytes = fs.readFileSync(indexFile(p));
      bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
      fs.writeFileSync(indexFile(p), bytes);
    },
  ],
  [
    'index of an older version',
    (p) => fs.writeFileSync(indexFile(p), Buffer.concat([Buffer.from('RCLZIDX2'), fs.readFileSync(indexFile(p)).subarray(8)])),
  ],
  [
    'index from another agent session',
    (p) => writeClassIndex(p.dir, { ...readClassIndex(p.dir, () => undefined), sessionId: 'an-earlier-session' }),
  ],
  ['owner.json corrupted', (p) => fs.writeFileSync(path.join(p.dir, '.reclazz', 'owner.json'), '{"owner": "cut-sh')],
  [
    "Greeter's class folder unreadable",
    (p) => {
      giveToNobody(p);
      fs.chmodSync(path.dirname(classFile(p, 'com.acme.Greeter')), 0);
    },
    { unprivileged: true },
  ],
];

describe('state loss never shows a failed reload as live', () => {
  it.each(CELLS)('%s', async (_, damage, options = {}) => {
    const { p, agent } = await projectWithAgent({
      autoReload: true,
      watchDebounceMs: 50,
      watchPollMs: 20,
      verifyStatus: (_name, hash) => (hash === sha('greeter-v2') ? 'failed' : undefined),
    });
    const first = await run(p, buildCommand(p));
    expect(first.exitCode, first.stderr).toBe(0);
    // The agent's watcher tries the outside compile, and its reload fails.
    await reloadsEnded(agent, ['com.acme.Greeter'], () => compileOutside(p, 'com.acme.Greeter', 'greeter-v2'));
    damage(p);
    const second = await run(p, buildCommand(p), options);
    expect(second.stderr).not.toContain('✔');
    // Where Greeter can be read, the agent was asked about it and its failure is shown.
    if (options.unprivileged !== true) expect(second.stderr).toMatch(/failed\s+com\.acme\.Greeter/);
    expect(second.exitCode, second.stderr).toBe(75);
  });
});
