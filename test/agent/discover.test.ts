/**
 * readPortFile and parsePort in-process: the faults a root-run e2e test cannot produce
 * (unreadable files, folders that cannot be looked into) through a mocked fs error, and the
 * parsing rules (protocol.md "Finding the agent": trimmed, decimal, 1..65535).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { discoverAgent, discoverAgents, readPortFile } from '../../src/agent/discover.js';
import type { PortFault } from '../../src/outcome/outcome.js';
import { describeOutcome } from '../../src/report/words.js';
import { tempDir } from '../support/cli.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: mocked`), { code });
}

/** The fault `readPortFile` found, with the words a user reads for it. */
function failure(run: () => number | PortFault): PortFault & { words: { message: string; hint?: string } } {
  const fault = run();
  if (typeof fault === 'number') throw new Error(`expected a fault, got port ${fault}`);
  return { ...fault, words: describeOutcome({ reason: 'bad-port-file', fault }) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('readPortFile', () => {
  it('an unreadable file (EACCES on read) names the path and the cause, and the hint the next step', () => {
    const file = path.join(tempDir(), 'agent.port');
    fs.writeFileSync(file, '4321');
    vi.spyOn(fs, 'openSync').mockImplementation(() => {
      throw errno('EACCES');
    });
    const fault = failure(() => readPortFile(file));
    expect(fault).toMatchObject({ input: 'file', file, problem: 'unreadable', code: 'EACCES' });
    expect(fault.words).toEqual({
      message: `cannot read port file ${file} (EACCES)`,
      hint: 'check its permissions (the agent writes it as the user running the app), or pass --port <n>',
    });
  });

  it('a folder on the path that cannot be looked into (EACCES on stat) is a different message', () => {
    const file = path.join(tempDir(), 'agent.port');
    vi.spyOn(fs, 'statSync').mockImplementation(() => {
      throw errno('EACCES');
    });
    const fault = failure(() => readPortFile(file));
    expect(fault.words).toEqual({
      message: `cannot look at port file ${file} (EACCES)`,
      hint: 'check the permissions of the folders on its path, or pass --port <n>',
    });
  });

  it('a path through a regular file (ENOTDIR) is reported with its code', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), '');
    const fault = failure(() => readPortFile(path.join(dir, 'file', 'agent.port')));
    expect(fault.words.message).toMatch(/cannot look at port file .*file\/agent\.port \(ENOTDIR\)/);
  });

  it('a FIFO is not a regular file', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'agent.port');
    const { execa } = await import('execa');
    await execa('mkfifo', [fifo]);
    const fault = failure(() => readPortFile(fifo));
    expect(fault.words.message).toMatch(/is not a regular file \(a device, pipe or socket\)/);
    expect(fault.words.hint).toMatch(/--port-file/);
  });

  it('accepts surrounding whitespace and a CRLF', () => {
    const file = path.join(tempDir(), 'agent.port');
    fs.writeFileSync(file, ' 4321\r\n');
    expect(readPortFile(file)).toBe(4321);
  });
});

describe('the port in a port file', () => {
  const withText = (text: string) => {
    const file = path.join(tempDir(), 'agent.port');
    fs.writeFileSync(file, text);
    return () => readPortFile(file);
  };
  it.each([
    ['', /is empty$/],
    ['-1', /does not hold a port number \("-1"\)/],
    ['80.5', /does not hold a port number/],
    ['0x50', /does not hold a port number/],
    ['1e3', /does not hold a port number/],
    ['0', /holds 0, outside 1-65535/],
    ['65536', /holds 65536, outside 1-65535/],
    ['99999999999999999999999', /outside 1-65535/],
  ])('%j is refused, with the advice to delete it', (text, message) => {
    const fault = failure(withText(text));
    expect(fault.words.message).toMatch(message);
    expect(fault.words.hint).toMatch(/delete it and restart the app/);
  });

  it.each([
    ['1', 1],
    ['65535', 65535],
    ['08080', 8080],
  ])('%j is port %d', (text, port) => {
    expect(withText(text)()).toBe(port);
  });
});

describe('discoverAgents: every agent a build holds', () => {
  const portFile = (dir: string, port: number, place = '.reclazz') => {
    const file = path.join(dir, place, 'agent.port');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, String(port));
    return file;
  };

  it('finds every port file below the folder, sorted by path; discoverAgent refuses them as ambiguous', () => {
    const root = tempDir();
    const b = portFile(path.join(root, 'svc-b'), 4002);
    const a = portFile(path.join(root, 'svc-a'), 4001, path.join('.idea', 'reclazz'));
    const found = discoverAgents({ cwd: root, env: {} });
    expect(found).toEqual({
      kind: 'found',
      locations: [
        { port: 4001, source: a, portFile: a, projectDir: path.join(root, 'svc-a') },
        { port: 4002, source: b, portFile: b, projectDir: path.join(root, 'svc-b') },
      ],
    });
    expect(discoverAgent({ cwd: root, env: {} })).toEqual({
      kind: 'refused',
      outcome: { reason: 'ambiguous-agent', cwd: root, portFiles: [a, b] },
    });
  });

  it('port files named more than once are read once each, in path order whatever order they were named in', () => {
    const root = tempDir();
    const a = portFile(path.join(root, 'svc-a'), 4001);
    const b = portFile(path.join(root, 'svc-b'), 4002);
    const found = discoverAgents({ cwd: root, env: {}, portFiles: ['svc-b/.reclazz/agent.port', a, 'svc-a/.reclazz/agent.port'] });
    expect(found.kind === 'found' && found.locations.map((l) => l.source)).toEqual([`--port-file ${a}`, `--port-file ${b}`]);
  });

  it('a port file in the folder or a parent is the one agent, even with others below', () => {
    const root = tempDir();
    const own = portFile(root, 4000);
    portFile(path.join(root, 'svc-a'), 4001);
    const found = discoverAgents({ cwd: root, env: {} });
    expect(found.kind === 'found' && found.locations.map((l) => l.portFile)).toEqual([own]);
  });

  it('from a folder in no checkout, port files below it in other checkouts (their own .git) are refused, named; inside a checkout they are found', () => {
    const root = tempDir();
    const a = portFile(path.join(root, 'a'), 4001);
    const sub = portFile(path.join(root, 'b', 'svc'), 4002);
    fs.mkdirSync(path.join(root, 'a', '.git'));
    // A submodule's or linked worktree's .git is a file.
    fs.writeFileSync(path.join(root, 'b', '.git'), 'gitdir: ../.git/modules/b');
    expect(discoverAgents({ cwd: root, env: {} })).toEqual({
      kind: 'refused',
      outcome: { reason: 'ambiguous-agent', cwd: root, portFiles: [a, sub], otherCheckouts: true },
    });
    // Named, it is taken; inside a checkout, the ones below it are (reactors and submodules).
    expect(discoverAgents({ cwd: root, env: {}, portFile: a })).toMatchObject({ kind: 'found' });
    fs.mkdirSync(path.join(root, '.git'));
    expect(discoverAgents({ cwd: root, env: {} })).toMatchObject({ kind: 'found', locations: [{ portFile: a }, { portFile: sub }] });
  });

  it('one bad port file among several refuses, naming it', () => {
    const root = tempDir();
    portFile(path.join(root, 'svc-a'), 4001);
    const bad = portFile(path.join(root, 'svc-b'), 0);
    expect(discoverAgents({ cwd: root, env: {} })).toMatchObject({
      kind: 'refused',
      outcome: { reason: 'bad-port-file', fault: { file: bad, problem: 'out-of-range' } },
    });
  });
});
