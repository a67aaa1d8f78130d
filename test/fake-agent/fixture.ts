/** Temp class-output directories for the fake agent's tests. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterThisTest } from '../support/cleanup.js';

export { standInsOf } from '../support/stand-ins.js';
import { startFakeAgent, type FakeAgent, type FakeAgentOptions } from '../../src/fake-agent/index.js';
import { LineClient } from './line-client.js';


/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-agent-test-'));
  afterThisTest(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Write `content` to `root/rel` (parents created); returns its sha256 hex. */
export function writeClass(root: string, rel: string, content: string | Buffer): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return sha(content);
}

export function sha(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Start a fake agent with fast test timings, stopped after the test. */
export async function agentFor(options: FakeAgentOptions = {}): Promise<FakeAgent> {
  const agent = await startFakeAgent({ heartbeatMs: 60_000, captureDelayMs: 20, reloadMs: 20, ...options });
  afterThisTest(() => agent.stop());
  return agent;
}

/** Connect a client that has seen CONNECTED; closed after the test. */
export async function clientOf(agent: FakeAgent): Promise<LineClient> {
  const client = await LineClient.ready(agent.port);
  afterThisTest(() => client.close());
  return client;
}

/** Register an extra cleanup step. */
export function onCleanup(step: () => Promise<void> | void): void {
  afterThisTest(step);
}

/** DOCTOR and parse the JSON of DOCTOR_RESULT. */
export async function doctor(client: LineClient, token: string): Promise<Record<string, unknown>> {
  const message = await client.ask(`DOCTOR ${token}`, 'DOCTOR_RESULT', token);
  return JSON.parse(message.slice(`DOCTOR_RESULT ${token} `.length)) as Record<string, unknown>;
}

/** True while process `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return stat !== '' && !stat.startsWith('Z');
  } catch {
    return false; // ps exits 1 when the pid is gone
  }
}

let verifyCount = 0;

/** VERIFY until the receipt is for these bytes and final (not running, not_observed or mismatch); throws after `timeoutMs`. */
export async function finalVerify(client: LineClient, className: string, sha256: string, timeoutMs = 2000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await client.verify(`f${++verifyCount}`, className, sha256);
    if (!['running', 'not_observed', 'mismatch'].includes(result.status)) return result;
    if (Date.now() > deadline) throw new Error(`VERIFY ${className} stayed ${result.status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Bytes of a minimal class file (JVMS §4.1) for `name` extending `superclass` and implementing
 * `interfaces` (binary names with dots), with a long constant so the two-slot rule is exercised.
 */
export function classBytes(name: string, superclass: string, interfaces: string[] = [], salt = 0): Buffer {
  const pool: Buffer[] = [];
  let next = 1;
  const utf8 = (text: string): number => {
    const body = Buffer.from(text, 'utf8');
    const entry = Buffer.alloc(3 + body.length);
    entry[0] = 1;
    entry.writeUInt16BE(body.length, 1);
    body.copy(entry, 3);
    pool.push(entry);
    return next++;
  };
  const classRef = (binary: string): number => {
    const nameIndex = utf8(binary.replace(/\./g, '/'));
    const entry = Buffer.alloc(3);
    entry[0] = 7;
    entry.writeUInt16BE(nameIndex, 1);
    pool.push(entry);
    return next++;
  };
  const long = Buffer.alloc(9);
  long[0] = 5;
  long.writeBigInt64BE(BigInt(salt), 1);
  pool.push(long);
  next += 2;
  const thisIndex = classRef(name);
  const superIndex = classRef(superclass);
  const interfaceIndexes = interfaces.map(classRef);
  const head = Buffer.alloc(10);
  head.writeUInt32BE(0xcafebabe, 0);
  head.writeUInt16BE(0, 4);
  head.writeUInt16BE(65, 6);
  head.writeUInt16BE(next, 8);
  const tail = Buffer.alloc(8 + 2 * interfaceIndexes.length + 6);
  tail.writeUInt16BE(0x21, 0);
  tail.writeUInt16BE(thisIndex, 2);
  tail.writeUInt16BE(superIndex, 4);
  tail.writeUInt16BE(interfaceIndexes.length, 6);
  interfaceIndexes.forEach((index, i) => tail.writeUInt16BE(index, 8 + 2 * i));
  return Buffer.concat([head, ...pool, tail]);
}
