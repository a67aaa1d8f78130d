/**
 * Issue 24, item 5, on the real binary against the fake agent (modelled on the agent's source):
 * the agent's own words. Restart-required verdicts come from its receipts (the StructuralReloader
 * warning) and its PENDING sentences, and a later `applied` for the bytes on disk wins over an
 * old PENDING entry; DIAGNOSE's words come with a `failed` or `unverified` verdict; the
 * batch-wide `unverified` names what the agent's detail covers; a legacy hold's advice says an
 * unowned `BUILD ok` releases it; class names take every Java identifier character.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildCommand } from '../support/project.js';
import { classFile, run, sha, useProjects } from '../support/evidence.js';

const projectWithAgent = useProjects();

describe('class names', () => {
  it('a class whose name holds a currency symbol or connector punctuation is asked and proven, as the JVM names it', async () => {
    const { p, agent } = await projectWithAgent({}, (q) => {
      fs.writeFileSync(classFile(q, 'com.acme.Price€'), 'price-v1');
      fs.writeFileSync(classFile(q, 'com.acme.tie‿Knot'), 'knot-v1');
    });
    const result = await run(p, buildCommand(p, { writes: { 'com.acme.Price€': 'price-v2', 'com.acme.tie‿Knot': 'knot-v2' } }));
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/applied\s+com\.acme\.Price€/);
    expect(result.stderr).toMatch(/applied\s+com\.acme\.tie‿Knot/);
    expect(agent.received.some((r) => r.line.endsWith(` com.acme.Price€ ${sha('price-v2')}`))).toBe(true);
  });
});
