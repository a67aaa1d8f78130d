/**
 * readPortFile and parsePort in-process: the faults a root-run e2e test cannot produce
 * (unreadable files, folders that cannot be looked into) through a mocked fs error, and the
 * parsing rules (protocol.md "Finding the agent": trimmed, decimal, 1..65535).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DiscoveryError, parsePort, readPortFile } from '../../src/agent/discover.js';
import { tempDir } from '../support/cli.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: mocked`), { code });
}

function failure(run: () => unknown): DiscoveryError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DiscoveryError);
    return error as DiscoveryError;
  }
  throw new Error('expected a DiscoveryError');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('readPortFile', () => {
  it('an unreadable file (EACCES on read) names the path, the cause and the next step', () => {
    const file = path.join(tempDir(), 'agent.port');
    fs.writeFileSync(file, '4321');
    vi.spyOn(fs, 'readFileSync').mockImplementation(() => {
      throw errno('EACCES');
    });
    const error = failure(() => readPortFile(file));
    expect(error.kind).toBe('bad-port-file');
    expect(error.paths).toEqual([file]);
    expect(error.message).toBe(
      `cannot read port file ${file} (EACCES): check its permissions (the agent writes it as the user running the app), or pass --port <n>.`,
    );
  });

  it('a folder on the path that cannot be looked into (EACCES on stat) is a different message', () => {
    const file = path.join(tempDir(), 'agent.port');
    vi.spyOn(fs, 'statSync').mockImplementation(() => {
      throw errno('EACCES');
    });
    const error = failure(() => readPortFile(file));
    expect(error.message).toBe(
      `cannot look at port file ${file} (EACCES): check the permissions of the folders on its path, or pass --port <n>.`,
    );
  });

  it('a path through a regular file (ENOTDIR) is reported with its code', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), '');
    const error = failure(() => readPortFile(path.join(dir, 'file', 'agent.port')));
    expect(error.message).toMatch(/cannot look at port file .*file\/agent\.port \(ENOTDIR\)/);
  });

  it('a FIFO is not a regular file', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'agent.port');
    const { execa } = await import('execa');
    await execa('mkfifo', [fifo]);
    const error = failure(() => readPortFile(fifo));
    expect(error.message).toMatch(/is not a regular file \(a device, pipe or socket\)/);
  });

  it('accepts surrounding whitespace and a CRLF', () => {
    const file = path.join(tempDir(), 'agent.port');
    fs.writeFileSync(file, ' 4321\r\n');
    expect(readPortFile(file)).toBe(4321);
  });
});

describe('parsePort', () => {
  const fix = 'do the thing';
  it.each([
    ['', /is empty: do the thing\./],
    ['-1', /does not hold a port number \("-1"\)/],
    ['80.5', /does not hold a port number/],
    ['0x50', /does not hold a port number/],
    ['1e3', /does not hold a port number/],
    ['0', /holds 0, outside 1-65535/],
    ['65536', /holds 65536, outside 1-65535/],
    ['99999999999999999999999', /outside 1-65535/],
  ])('%j is refused', (text, message) => {
    expect(failure(() => parsePort(text, 'X', fix)).message).toMatch(message);
  });

  it.each([
    ['1', 1],
    ['65535', 65535],
    ['08080', 8080],
  ])('%j is port %d', (text, port) => {
    expect(parsePort(text, 'X', fix)).toBe(port);
  });
});
