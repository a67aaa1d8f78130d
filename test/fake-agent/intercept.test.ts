import { describe, expect, it } from 'vitest';
import { formatEvent, type InterceptAction, type InterceptCommand } from '../../src/fake-agent/index.js';
import { agentFor, clientOf } from './fixture.js';
import { sleep, waitFor } from '../support/wait.js';

describe('intercept', () => {
  it('sees every line with verb upper-cased, words as sent and the client id', async () => {
    const seen: InterceptCommand[] = [];
    const agent = await agentFor({ intercept: (cmd) => void seen.push(cmd) });
    const client = await clientOf(agent);
    client.send('build started request=r1');
    await client.reply('BUILD_ACK', 'r1');
    expect(seen).toEqual([
      { line: 'build started request=r1', verb: 'BUILD', words: ['build', 'started', 'request=r1'], client: 1 },
    ]);
  });

  it('drop: acts on the command but sends no receipt (a lost receipt)', async () => {
    const agent = await agentFor({ intercept: (c) => (c.words[1] === 'started' ? { kind: 'drop' } : undefined) });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o');
    await client.next((e) => e.message.startsWith('Build started; holding'));
    expect(await client.never((e) => e.message.startsWith('BUILD_ACK'), 50)).toBe(true);
    expect(agent.hold()).toMatchObject({ kind: 'named', owner: 'o' });
  });

  it('ignore: neither acts nor replies', async () => {
    const agent = await agentFor({ intercept: (c) => (c.verb === 'BUILD' ? { kind: 'ignore' } : undefined) });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o');
    client.send('DOCTOR d');
    await client.reply('DOCTOR_RESULT', 'd');
    expect(client.infos()).toHaveLength(1);
    expect(agent.hold().kind).toBe('none');
    expect(agent.received.map((r) => r.line)).toEqual(['BUILD started request=r1 owner=o', 'DOCTOR d']);
  });

  it('close: closes the connection instead of processing', async () => {
    const agent = await agentFor({ intercept: (c) => (c.verb === 'BUILD' ? { kind: 'close' } : undefined) });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o');
    await client.closed;
    expect(agent.hold().kind).toBe('none');
    await waitFor(() => agent.clientCount() === 0, '0 clients');
  });

  it('reply: sends raw lines instead of processing', async () => {
    const fake = formatEvent('INFO', 'BUILD_ACK r1 started');
    const agent = await agentFor({ intercept: () => ({ kind: 'reply', lines: [fake, 'not json'] }) });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o');
    expect(await client.reply('BUILD_ACK', 'r1')).toBe('BUILD_ACK r1 started');
    await waitFor(() => client.lines.includes('not json'), 'the line that is not JSON');
    expect(agent.hold().kind).toBe('none');
  });

  it('reply with act: raw lines first, then normal processing with the real reply', async () => {
    const decoy = formatEvent('INFO', 'BUILD_ACK other started owner=o');
    const agent = await agentFor({ intercept: () => ({ kind: 'reply', lines: [decoy], act: true }) });
    const client = await clientOf(agent);
    client.send('BUILD started request=r1 owner=o');
    await client.reply('BUILD_ACK', 'r1');
    expect(client.infos()).toEqual([
      'BUILD_ACK other started owner=o',
      'Build started; holding 0 class files until BUILD ok',
      'BUILD_ACK r1 started owner=o',
    ]);
    expect(agent.hold().kind).toBe('named');
  });

  it('reply with delayMs: raw lines arrive late', async () => {
    const late = formatEvent('INFO', 'DOCTOR_RESULT d {}');
    const agent = await agentFor({ intercept: () => ({ kind: 'reply', lines: [late], delayMs: 80 }) });
    const client = await clientOf(agent);
    const sent = Date.now();
    client.send('DOCTOR d');
    await client.reply('DOCTOR_RESULT', 'd');
    expect(Date.now() - sent).toBeGreaterThanOrEqual(70);
  });

  it('delay: acts at once but the reply comes late', async () => {
    const action: InterceptAction = { kind: 'delay', ms: 100 };
    const agent = await agentFor({ intercept: (c) => (c.words[1] === 'started' ? action : undefined) });
    const client = await clientOf(agent);
    const sent = Date.now();
    client.send('BUILD started request=r1 owner=o');
    await waitFor(() => agent.hold().kind === 'named', 'the hold to be named');
    // Held, and no reply yet: this poll is a timer of the agent's own event loop, due long before the delayed reply.
    expect(client.infos().filter((m) => m.startsWith('BUILD_ACK'))).toEqual([]);
    await client.reply('BUILD_ACK', 'r1');
    expect(Date.now() - sent).toBeGreaterThanOrEqual(90);
  });

  it('a delayed reply is not sent after stop()', async () => {
    const agent = await agentFor({ intercept: () => ({ kind: 'delay', ms: 50 }) });
    const client = await clientOf(agent);
    client.send('DOCTOR d');
    await waitFor(() => agent.received.length === 1, 'command 1 received');
    await agent.stop();
    await sleep(80);
    expect(client.infos()).toEqual([]);
  });
});
