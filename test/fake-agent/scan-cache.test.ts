import { statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentFor, clientOf, tempDir, writeClass } from './fixture.js';
import { waitFor } from '../support/wait.js';

describe('scanCache', () => {
  it('still captures a same-size, same-mtime rewrite with new bytes (ctime moved) and VERIFY reads applied', async () => {
    const dir = tempDir();
    writeClass(dir, 'com/acme/A.class', 'aaaa');
    writeClass(dir, 'com/acme/B.class', 'bbbb');
    const file = join(dir, 'com/acme/A.class');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const agent = await agentFor({ watchDirs: [dir], scanCache: true });
    const client = await clientOf(agent);

    const before = statSync(file);
    client.send('BUILD started request=s1 owner=o1');
    await client.reply('BUILD_ACK', 's1');
    const v2 = writeClass(dir, 'com/acme/A.class', 'AAAA');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    expect(statSync(file).size).toBe(before.size);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(agent.hold().files).toBe(1);
    client.send('BUILD ok request=k1 owner=o1');
    await client.reply('BUILD_ACK', 'k1');
    await waitFor(() => agent.captures === 1, 'capture 1');
    await client.next((e) => e.level === 'RELOAD');
    expect(await client.verify('q1', 'com.acme.A', v2)).toMatchObject({ status: 'applied', observedSha256: v2 });
    expect(await client.verify('q2', 'com.acme.B', v2)).toMatchObject({ status: 'not_observed' });
  });
});
