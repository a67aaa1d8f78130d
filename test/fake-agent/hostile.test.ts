import { describe, expect, it } from 'vitest';
import { HOSTILE_PAYLOAD, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { agentFor, clientOf, doctor, finalVerify, onCleanup, tempDir, writeClass } from './fixture.js';
import { LineClient } from './line-client.js';
import { sleep, waitFor } from '../support/wait.js';

const P = HOSTILE_PAYLOAD;

/** Every character a terminal must not receive raw: C0 but TAB, DEL, C1, bidi controls. */
const DANGEROUS = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('hostile payload', () => {
  it('holds the escape sequences and controls a tester needs', () => {
    for (const piece of ['\u001b]0;', '\u0007', '\u001b[2J', '\u001b[31m', '\r', '\n', '\u009b', '\u202e', '\u2066', '\u007f']) {
      expect(P).toContain(piece);
    }
  });

  it('travels as valid JSON: C0 controls escaped, U+009B and bidi controls raw', async () => {
    const agent = await agentFor({ hostile: { messages: true } });
    const client = await clientOf(agent);
    agent.broadcast('INFO', 'hello');
    const event = await client.next((e) => e.level === 'INFO');
    expect(event.message).toBe(`hello${P}`);
    expect(event.raw).not.toMatch(/[\u0000-\u001f]/);
    expect(event.raw).toContain('\\u001b');
    expect(event.raw).toContain('\u009b');
  });
});

describe('each switch taints one kind of field', () => {
  async function tainted(options: FakeAgentOptions): Promise<{ agent: Awaited<ReturnType<typeof agentFor>>; client: LineClient; dir: string }> {
    const dir = tempDir();
    writeClass(dir, 'A.class', 'v1');
    const agent = await agentFor({ watchDirs: [dir], ...options });
    return { agent, client: await clientOf(agent), dir };
  }

  it('levels: broadcast levels only', async () => {
    const { agent, client } = await tainted({ hostile: { levels: true } });
    expect(client.events()[0].level).toBe('CONNECTED');
    agent.broadcast('WARN', 'careful');
    expect(await client.next((e) => e.message === 'careful')).toMatchObject({ level: `WARN${P}` });
    expect(await client.ask('DOCTOR d', 'DOCTOR_RESULT', 'd')).toMatch(/^DOCTOR_RESULT d \{/);
  });

  it('messages: broadcast messages and CONNECTED, replies untouched', async () => {
    const { agent, client } = await tainted({ hostile: { messages: true } });
    expect(client.events()[0]).toMatchObject({ level: 'CONNECTED', message: `Agent status server connected${P}`, agent: `1.4.0-fake${P}` });
    expect(await client.ask('BUILD started request=r1 owner=o', 'BUILD_ACK', 'r1')).toBe('BUILD_ACK r1 started owner=o');
    expect(client.infos()).toContain(`Build started; holding 0 class files until BUILD ok${P}`);
    agent.broadcast('HEARTBEAT', '');
    expect((await client.next((e) => e.level === 'HEARTBEAT')).message).toBe(P);
  });

  it('doctor: every string field but requestId and status, or only the listed ones', async () => {
    const { client } = await tainted({ hostile: { doctor: true } });
    const result = await doctor(client, 'd1');
    expect(result.requestId).toBe('d1');
    expect(result.status).toBe('observed');
    for (const field of ['detail', 'sessionId', 'agentVersion', 'pid', 'javaVersion', 'vmName', 'workingDirectory', 'watcherState', 'buildHold']) {
      expect(String(result[field]).endsWith(P)).toBe(true);
    }
    expect((result.watchedDirectories as string[])[0].endsWith(P)).toBe(true);

    const some = await tainted({ hostile: { doctor: ['vmName'] }, java: { version: '21.0.4', vmName: 'OpenJDK 64-Bit Server VM' } });
    const only = await doctor(some.client, 'd2');
    expect(String(only.vmName).endsWith(P)).toBe(true);
    expect(only.javaVersion).toBe('21.0.4');
    expect(only.pid).toBe(String(some.agent.jvm!.pid));
  });

  it('verify: VERIFY detail and source', async () => {
    const { client, dir } = await tainted({ hostile: { verify: true } });
    const v2 = writeClass(dir, 'A.class', 'v2');
    client.send('SCAN');
    const result = await finalVerify(client, 'A', v2);
    expect(result.status).toBe('applied');
    expect(result.detail.endsWith(P)).toBe(true);
    expect(result.source.endsWith(P)).toBe(true);
    expect(result.className).toBe('A');
  });

  it('reload: RELOAD_STATE replies and RELOAD events', async () => {
    const { client, dir } = await tainted({ hostile: { reload: true } });
    expect(await client.ask('RELOAD status request=s', 'RELOAD_STATE', 's')).toBe(
      `RELOAD_STATE s status paused=false pendingClasses=0 pendingActions=0 buildHold=none${P}`,
    );
    writeClass(dir, 'A.class', 'v2');
    client.send('SCAN');
    expect((await client.next((e) => e.level === 'RELOAD')).message).toMatch(/^Reloaded A \(\d+ms\)/);
    expect(client.events().find((e) => e.level === 'RELOAD')!.message.endsWith(P)).toBe(true);
  });

  it('health: HEALTH, PENDING and DIAGNOSE lines', async () => {
    const { client } = await tainted({ hostile: { health: true } });
    client.send('HEALTH');
    client.send('PENDING');
    client.send('DIAGNOSE A');
    await client.next((e) => e.message.startsWith('Reclazz has not attempted'));
    const infos = client.infos();
    // HEALTH's five lines (version, nothing reloaded, the watch, no change, no restart), PENDING's two,
    // and DIAGNOSE's four: its header, the compiled file, the load state, the last attempt.
    expect(infos).toHaveLength(11);
    for (const line of infos) expect(line.endsWith(P)).toBe(true);
  });

  it('a custom payload', async () => {
    const { agent, client } = await tainted({ hostile: { messages: true, payload: '\u009b31m' } });
    agent.broadcast('INFO', 'x');
    expect((await client.next((e) => e.level === 'INFO')).message).toBe('x\u009b31m');
  });

  it('nothing is tainted without a switch', async () => {
    const { agent, client } = await tainted({});
    agent.broadcast('INFO', 'plain');
    await client.next((e) => e.message === 'plain');
    const result = await doctor(client, 'd');
    expect(client.lines.some((line) => DANGEROUS.test(JSON.stringify(JSON.parse(line))))).toBe(false);
    expect(JSON.stringify(result)).not.toMatch(DANGEROUS);
  });
});

describe('broken connections', () => {
  async function raw(port: number): Promise<LineClient> {
    const client = await LineClient.connect(port);
    onCleanup(() => client.close());
    return client;
  }

  it('oversizedLine: 1 MiB without a newline right after CONNECTED', async () => {
    const agent = await agentFor({ hostile: { oversizedLine: true } });
    const client = await raw(agent.port);
    await waitFor(() => client.rawText.length >= 1024 * 1024, 'the oversized line');
    await sleep(20);
    expect(client.lines).toHaveLength(1);
    expect(client.rawText.length - client.lines[0].length - 1).toBe(1024 * 1024);
    // The next real line ends it: one line of more than 1 MiB.
    agent.broadcast('INFO', 'after');
    await waitFor(() => client.lines.length === 2, 'two lines');
    expect(client.lines[1].length).toBeGreaterThan(1024 * 1024);
  });

  it('oversizedLine with a size and a newline', async () => {
    const agent = await agentFor({ hostile: { oversizedLine: { bytes: 30_000, newline: true } } });
    const client = await raw(agent.port);
    await waitFor(() => client.lines.length === 2, 'two lines');
    expect(client.lines[1]).toHaveLength(30_000);
  });

  it('flood: as many events as asked, as fast as the reader takes them', async () => {
    const agent = await agentFor({ hostile: { flood: { events: 20_000 } } });
    const client = await raw(agent.port);
    await waitFor(() => client.lines.length === 20_001, 'the flood');
    expect(JSON.parse(client.lines[20_000]).message).toBe('flood 20000 of 20000');
  });

  it('silentConnect: accepted, never a byte, commands ignored', async () => {
    const agent = await agentFor({ hostile: { silentConnect: true } });
    const client = await raw(agent.port);
    client.send('DOCTOR d');
    agent.broadcast('INFO', 'nobody hears this');
    await sleep(100);
    expect(client.rawText).toBe('');
    expect(client.ended).toBe(false);
    expect(agent.received).toEqual([]);
    expect(agent.clientCount()).toBe(0);
  });

  it('halfLine: half a CONNECTED line, then silence; a predicate picks the connections', async () => {
    const agent = await agentFor({ heartbeatMs: 30, hostile: { halfLine: (n) => n === 1 } });
    const first = await raw(agent.port);
    await waitFor(() => first.rawText.length > 0, 'bytes on the first connection');
    await sleep(100);
    expect(first.rawText.startsWith('{"level":"CONNECTED"')).toBe(true);
    expect(first.rawText).not.toContain('\n');
    expect(first.ended).toBe(false);
    const second = await clientOf(agent);
    await second.next((e) => e.level === 'HEARTBEAT');
  });

  it('stop() closes held-open hostile connections', async () => {
    const agent = await agentFor({ hostile: { silentConnect: true } });
    const client = await raw(agent.port);
    await sleep(20);
    await agent.stop();
    await client.closed;
  });
});
