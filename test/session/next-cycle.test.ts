/**
 * The start of each cycle of a long session: the run lock for that cycle only, and DOCTOR and
 * owner.json read again, so that what the last cycle (or a run between two cycles) left is seen.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processHost } from '../../src/cli/host.js';
import { type BuildSession, closeSession, prepareBuild } from '../../src/session/options.js';
import { runCycle } from '../../src/session/group.js';
import { beginCycle } from '../../src/session/begin.js';
import { openSession } from '../../src/session/open.js';
import { useFakeAgents } from '../support/agents.js';
import { tempDir, writeClass } from '../support/cli.js';

const agentFor = useFakeAgents();

describe('beginCycle', () => {
  it('takes the run lock for the cycle only, and sees the hold a failed cycle left', async () => {
    const dir = tempDir();
    const classes = path.join(dir, 'target', 'classes');
    writeClass(classes, 'com.acme.Greeter', 'greeter-v1');
    await agentFor({ dir, classes });
    const host = { ...processHost(), cwd: dir, env: { ...process.env, RECLAZZ_PORT: undefined, RECLAZZ_PORT_FILE: undefined } };
    const opening = await openSession(
      {},
      host,
      {},
      {
        builds: true,
        lockPerCycle: true,
        requires: { need: 'owned builds', ownedBuilds: true, verify: true, session: true },
      },
    );
    if (opening.kind !== 'open') throw new Error(opening.outcome.reason);
    const session = opening.session as BuildSession;
    const lock = path.join(dir, '.reclazz', 'build.lock');
    try {
      expect(fs.existsSync(lock)).toBe(false);
      const start = await beginCycle([session]);
      if (start.kind !== 'ready') throw new Error(start.kind);
      expect(fs.existsSync(lock)).toBe(true);
      // A failed build that wrote a class file: the hold stays (one that wrote nothing is released).
      const greeter = path.join(classes, 'com', 'acme', 'Greeter.class');
      const script = `require('fs').writeFileSync(${JSON.stringify(greeter)}, 'greeter-v2'); process.exit(1)`;
      const failing = { tool: 'command' as const, args: [process.execPath, '-e', script] };
      const prepared = await prepareBuild(failing, host);
      if (prepared.kind !== 'ok') throw new Error(prepared.outcome.reason);
      const failed = await runCycle(session, prepared.command, failing);
      expect(failed).toMatchObject({ reason: 'build-failed', hold: 'held' });
      await start.releaseLock();
      expect(fs.existsSync(lock)).toBe(false);
      // What the session saw when it opened: no hold, nothing saved.
      expect(session.doctor.buildHold).toBe('none');
      const next = await beginCycle([session]);
      if (next.kind !== 'ready') throw new Error(next.kind);
      expect(session.doctor.buildHold).toBe('named');
      expect(session.owner.saved).toMatchObject({ owner: session.owner.owner, held: true });
      await next.releaseLock();
    } finally {
      await closeSession(session);
    }
  });
});
