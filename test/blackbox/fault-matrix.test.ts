/**
 * The fault matrix: every protocol step crossed with every fault, each cell driving the real
 * binary against the fake agent (through a line-level proxy where the fault is on the agent's
 * side of the wire) and asserting the exit status, whether the build ran, what the agent
 * received, the hold left behind, and the message. The run prints how many cells ran.
 *
 * Steps: connect (TCP and what answers it), handshake (the CONNECTED line), DOCTOR, the
 * `started` receipt, during the build, the finish (`ok`) receipt, VERIFY.
 * Faults: silence, disconnect, rejection, garbage line, late reply (after the bound), wrong
 * token, CRLF. Where a fault has no literal meaning at a step, the cell's `mapping` says what
 * stands in for it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { FakeAgent, FakeAgentOptions } from '../../src/fake-agent/index.js';
import { runCli } from '../support/cli.js';
import {
  agentFor,
  buildCommand,
  buildRan,
  flow,
  hasStackTrace,
  info,
  project,
  release,
  requestToken,
  type Project,
} from '../support/project.js';
import { isReply, messageOf, startProxy, type LineAction, type Proxy, type ProxyConnection, type ProxyRules } from '../support/proxy.js';
import { waitFor } from '../support/wait.js';

const STEPS = ['connect', 'handshake', 'doctor', 'started', 'build', 'finish', 'verify'] as const;
const FAULTS = ['silence', 'disconnect', 'rejection', 'garbage', 'late', 'wrong-token', 'crlf'] as const;
type Step = (typeof STEPS)[number];
type Fault = (typeof FAULTS)[number];

const OWNER = 'matrix-owner';
/**
 * --timeout per receipt, ms: small, so silence costs little, with room for a 2-core machine
 * running other test files at once (a reply that does come is never near it).
 */
const T = 2000;
/** A late reply arrives this long after its request, ms: well past T and past VERIFY's 1 s re-ask. */
const LATE = 4000;
/** --verify-timeout, ms. */
const V = 5000;
const WRITES = { 'com.acme.Greeter': 'greeter-v2', 'com.acme.Outer$Inner': 'inner-v2' };

const FULL = ['DOCTOR', 'BUILD started', 'BUILD ok', 'VERIFY...'];
const LOST_OK = ['DOCTOR', 'BUILD started', 'BUILD ok', 'BUILD failed'];

interface Context {
  p: Project;
  agent: FakeAgent;
  /** Index into agent.received where the run's own lines start (after any setup). */
  from: number;
  cleanup: Array<() => unknown>;
}

interface Expectation {
  exit: number;
  built: boolean;
  /** The agent's received verbs (VERIFY runs collapsed), see `flow`. */
  flow: string[];
  /** none: no hold; ours: named by OWNER; ide: named by 'the-ide'. */
  hold: 'none' | 'ours' | 'ide';
  /** The message that says what happened. */
  says: RegExp;
  /** Extra checks. */
  also?: (ctx: Context, stderr: string) => void;
}

interface Cell {
  /** How a fault with no literal meaning at this step is mapped. */
  mapping?: string;
  agent?: (ctx: { p: Project }) => FakeAgentOptions;
  proxy?: (ctx: Context) => ProxyRules;
  /** Before the run; may replace the port file (return its content) or prepare the agent. */
  setup?: (ctx: Context, proxy: Proxy) => Promise<string | void> | string | void;
  /** The fault comes during the build: the build runs until the proxy has acted (afterStarted). */
  during?: boolean;
  expect: Expectation;
}

// ---- fault material -------------------------------------------------------------------------

/** Hostile lines: invalid UTF-8, over 64 KiB, JSON that is not an object, missing and wrong-typed fields, unknown level, broken JSON, empty. */
const HOSTILE: Array<string | Buffer> = [
  Buffer.concat([Buffer.from('{"level":"INFO","message":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}\n')]),
  `{"level":"INFO","message":"${'x'.repeat(70 * 1024)}"}`,
  '[]',
  'null',
  '42',
  '"INFO"',
  '{"level":"INFO"}',
  '{"level":5,"message":"x"}',
  '{"level":"INFO","message":7}',
  '{"level":"FROM_THE_FUTURE","message":"an unknown level","extra":{"a":[1,2]}}',
  '{"level":"INFO","message":"BUILD_ACK',
  '',
];

function rewrite(line: string, message: string): string {
  const event = JSON.parse(line) as Record<string, unknown>;
  return JSON.stringify({ ...event, message });
}

/** Malformed forms of a real receipt line: each must count as no receipt. */
function malformed(line: string): Array<string | Buffer> {
  const message = messageOf(line)!;
  return [
    rewrite(line, `${message} extra`),
    rewrite(line, message.toLowerCase()),
    line.replace(JSON.stringify(message), '7'),
    line.slice(0, Math.floor(line.length / 2)),
    // The exact receipt inside a line longer than 64 KiB: discarded whole.
    JSON.stringify({ ...(JSON.parse(line) as object), pad: 'p'.repeat(70 * 1024) }),
    Buffer.concat([Buffer.from(line.slice(0, 30)), Buffer.from([0xff]), Buffer.from(`${line.slice(31)}\n`)]),
  ];
}

/** Receipts for this BUILD reply with a wrong token: other request, request in other case, other owner, owner in other case, other state. */
function wrongBuildTokens(line: string): string[] {
  const [word, request, state, ownerWord] = messageOf(line)!.split(' ') as [string, string, string, string];
  return [
    `${word} other-${request} ${state} ${ownerWord}`,
    `${word} ${request.toUpperCase()} ${state} ${ownerWord}`,
    `${word} ${request} ${state} owner=someone-else`,
    `${word} ${request} ${state} ${ownerWord.toUpperCase().replace('OWNER=', 'owner=')}`,
    `${word} ${request} ${state === 'ok' ? 'failed' : 'ok'} ${ownerWord}`,
  ].map((m) => rewrite(line, m));
}

const isBuildReceipt = (line: string, state: string) => isReply(line, 'BUILD_ACK', state) || isReply(line, 'BUILD_REJECTED', state);

/** Proxy rules that act on one kind of reply and pass everything else. */
function onReply(
  match: (line: string) => boolean,
  act: (line: string, ctx: { close(): void; write(d: string | Buffer): void }) => LineAction,
): ProxyRules {
  return { fromAgent: (line, connection) => (match(line) ? act(line, connection) : undefined) };
}

const verifyReply = (line: string) => isReply(line, 'VERIFY_RESULT');

/** VERIFY_RESULT lines for the same request with a malformed JSON payload. */
function malformedVerify(line: string): string[] {
  const message = messageOf(line)!;
  const [word, token] = message.split(' ', 2) as [string, string];
  const json = JSON.parse(message.slice(word.length + token.length + 2)) as Record<string, unknown>;
  const { completedAt: _drop, ...missing } = json;
  return [
    `${word} ${token} ${JSON.stringify({ ...json, status: 'reloaded' })}`,
    `${word} ${token} ${JSON.stringify(missing)}`,
    `${word} ${token} ${JSON.stringify({ ...json, observedSha256: 7 })}`,
    `${word} ${token} [${JSON.stringify(json)}]`,
    `${word} ${token} ${JSON.stringify(json).slice(0, 40)}`,
  ].map((m) => rewrite(line, m));
}

/** VERIFY_RESULT lines that answer another request, class or hash. */
function wrongVerify(line: string): string[] {
  const message = messageOf(line)!;
  const [word, token] = message.split(' ', 2) as [string, string];
  const json = JSON.parse(message.slice(word.length + token.length + 2)) as Record<string, unknown>;
  const applied = { ...json, status: 'applied', observedSha256: json.expectedSha256, completedAt: new Date().toISOString() };
  return [
    `${word} other-${token} ${JSON.stringify({ ...applied, requestId: `other-${token}` })}`,
    `${word} ${token.toUpperCase()} ${JSON.stringify(applied)}`,
    `${word} ${token} ${JSON.stringify({ ...applied, className: 'com.acme.Other' })}`,
    `${word} ${token} ${JSON.stringify({ ...applied, expectedSha256: '0'.repeat(64), observedSha256: '0'.repeat(64) })}`,
  ].map((m) => rewrite(line, m));
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Takes the hold as `owner` from a raw client, as the IDE would. */
async function holdAs(port: number, owner: string): Promise<void> {
  const socket = net.createConnection({ host: '127.0.0.1', port });
  let text = '';
  let sent = false;
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      text += String(chunk);
      if (!sent && text.includes('"CONNECTED"')) {
        sent = true;
        socket.write(`BUILD started request=ide-1 owner=${owner}\n`);
      }
      if (text.includes('BUILD_ACK ide-1 started')) resolve();
    });
  });
  socket.destroy();
}

/** The agent ignores every command after `started` (goes silent during the build). */
function silentAfterStarted(): FakeAgentOptions {
  let started = false;
  return {
    intercept: (cmd) => {
      if (started) return { kind: 'ignore' };
      if (cmd.verb === 'BUILD' && cmd.words[1] === 'started') started = true;
      return undefined;
    },
  };
}

/** The file a build of a cell with `during` waits for (afterStarted writes it once it has acted). */
const goFile = (p: Project): string => path.join(p.dir, 'go');

/**
 * After the started receipt passes, once the build has started: run `then` (and wait for what it
 * returns), and let the build end (it waits for that: `during`).
 */
function afterStarted(
  ctx: Context,
  then: (connection: ProxyConnection, startedLine: string) => unknown,
  rest?: ProxyRules['fromAgent'],
): ProxyRules {
  return {
    fromAgent: (line, connection) => {
      if (isReply(line, 'BUILD_ACK', 'started')) {
        void (async () => {
          await waitFor(() => buildRan(ctx.p), 'the build to start');
          await then(connection, line);
          release(goFile(ctx.p));
        })();
      }
      return rest?.(line, connection);
    },
  };
}

// ---- the matrix ---------------------------------------------------------------------------

const MATRIX: Record<Step, Record<Fault, Cell>> = {
  connect: {
    silence: {
      mapping: 'the port accepts TCP but nothing ever speaks (a hung agent, or another program)',
      proxy: () => ({ onAccept: () => 'silent' }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: new RegExp(String.raw`sent no CONNECTED line within ${T} ms`) },
    },
    disconnect: {
      mapping: "the agent's sixth client: five clients already connected, the sixth is accepted and closed before CONNECTED",
      setup: async (ctx) => {
        for (let i = 0; i < 5; i++) {
          const socket = net.createConnection({ host: '127.0.0.1', port: ctx.agent.port });
          socket.on('error', () => undefined);
          ctx.cleanup.push(() => socket.destroy());
        }
        const deadline = Date.now() + 5000;
        while (ctx.agent.clientCount() < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      },
      expect: {
        exit: 69,
        built: false,
        flow: [],
        hold: 'none',
        says: /closed the connection before CONNECTED/,
        also: (_c, err) => expect(err).toMatch(/5 clients/),
      },
    },
    rejection: {
      mapping: 'connection refused: the port file is stale (left by a killed app)',
      setup: async () => String(await deadPort()),
      expect: {
        exit: 69,
        built: false,
        flow: [],
        hold: 'none',
        says: /nothing is listening on port \d+ from .*agent\.port/,
        also: (_c, err) => expect(err).toMatch(/stale.*delete/),
      },
    },
    garbage: {
      mapping: 'the port belongs to another program that greets with a non-JSON banner',
      proxy: () => ({ onAccept: () => 'SSH-2.0-OpenSSH_9.6\r\n' }),
      expect: {
        exit: 69,
        built: false,
        flow: [],
        hold: 'none',
        says: /did not start with a valid CONNECTED line/,
        also: (_c, err) => expect(err).toMatch(/belongs to the reclazz agent/),
      },
    },
    late: {
      // (Not timed: a port file written on a timer would race the CLI's own start-up.)
      mapping: 'the app is still starting: it listens, but has not written its port file yet',
      setup: (ctx) => {
        fs.rmSync(ctx.p.portFile);
      },
      expect: {
        exit: 69,
        built: false,
        flow: [],
        hold: 'none',
        says: /no running agent found/,
        also: (_c, err) => expect(err).toMatch(/next: start the app with the reclazz agent/),
      },
    },
    'wrong-token': {
      mapping: 'the only token at connect is the port number: the port file names port 70000',
      setup: () => '70000',
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: /agent\.port holds 70000, outside 1-65535/ },
    },
    crlf: {
      mapping: 'the port file ends in CRLF (written on Windows): trimmed, the run works',
      setup: (_ctx, proxy) => `${proxy.port}\r\n`,
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  handshake: {
    silence: {
      mapping: 'the CONNECTED line stalls half-way (no newline ever comes)',
      proxy: () => ({ fromAgent: (line, c) => (c.agentLines === 0 ? [Buffer.from(line.slice(0, 25))] : undefined) }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: new RegExp(String.raw`sent no CONNECTED line within ${T} ms`) },
    },
    disconnect: {
      proxy: () => ({
        fromAgent: (line, c) => (c.agentLines === 0 ? { close: true, lines: [Buffer.from(line.slice(0, 25))] } : undefined),
      }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: /closed the connection before CONNECTED/ },
    },
    rejection: {
      mapping: 'CONNECTED without an agent version: an agent from before build ownership, which cannot give an owned hold',
      agent: () => ({ agentVersion: null }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: /too old for owned builds/ },
    },
    garbage: {
      proxy: () => ({ fromAgent: (_line, c) => (c.agentLines === 0 ? [Buffer.from([0xff, 0xfe, 0x7b, 0x0a])] : undefined) }),
      expect: {
        exit: 69,
        built: false,
        flow: [],
        hold: 'none',
        says: /did not start with a valid CONNECTED line \(got a line that is not UTF-8 JSON/,
      },
    },
    late: {
      proxy: () => ({ fromAgent: (line, c) => (c.agentLines === 0 ? { delayMs: LATE, lines: [line] } : undefined) }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: new RegExp(String.raw`sent no CONNECTED line within ${T} ms`) },
    },
    'wrong-token': {
      mapping: 'CONNECTED with a wrong-typed field (version "1"): not a valid greeting',
      proxy: () => ({ fromAgent: (line, c) => (c.agentLines === 0 ? [line.replace('"version":1', '"version":"1"')] : undefined) }),
      expect: { exit: 69, built: false, flow: [], hold: 'none', says: /did not start with a valid CONNECTED line/ },
    },
    crlf: {
      mapping: 'an agent on a Windows JVM: every line ends in CRLF',
      agent: () => ({ crlf: true }),
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  doctor: {
    silence: {
      mapping: 'an agent still starting: its handlers are not wired, DOCTOR gets no reply',
      agent: () => ({ notReady: true }),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR'],
        hold: 'none',
        says: new RegExp(String.raw`did not answer DOCTOR within ${T} ms: it is still starting, too old, or its JVM is stopped or hung`),
      },
    },
    disconnect: {
      agent: () => ({ intercept: (cmd) => (cmd.verb === 'DOCTOR' ? { kind: 'close' } : undefined) }),
      expect: { exit: 69, built: false, flow: ['DOCTOR'], hold: 'none', says: /closed the connection during DOCTOR/ },
    },
    rejection: {
      mapping: 'DOCTOR_RESULT with status "unavailable"',
      proxy: () =>
        onReply(
          (line) => isReply(line, 'DOCTOR_RESULT'),
          (line) => {
            const token = messageOf(line)!.split(' ')[1]!;
            return [
              rewrite(
                line,
                `DOCTOR_RESULT ${token} ${JSON.stringify({ requestId: token, status: 'unavailable', detail: 'observation exceeds 3900 characters' })}`,
              ),
            ];
          },
        ),
      expect: { exit: 69, built: false, flow: ['DOCTOR'], hold: 'none', says: /cannot describe itself yet \(DOCTOR: observation exceeds/ },
    },
    garbage: {
      proxy: () =>
        onReply(
          (line) => isReply(line, 'DOCTOR_RESULT'),
          (line) => [...HOSTILE, line.slice(0, line.length - 40)],
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR'],
        hold: 'none',
        says: new RegExp(String.raw`did not answer DOCTOR within ${T} ms`),
      },
    },
    late: {
      proxy: () =>
        onReply(
          (line) => isReply(line, 'DOCTOR_RESULT'),
          (line) => ({ delayMs: LATE, lines: [line] }),
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR'],
        hold: 'none',
        says: new RegExp(String.raw`did not answer DOCTOR within ${T} ms`),
      },
    },
    'wrong-token': {
      proxy: () =>
        onReply(
          (line) => isReply(line, 'DOCTOR_RESULT'),
          (line) => {
            const token = messageOf(line)!.split(' ')[1]!;
            return [line.replaceAll(token, `x${token.slice(1)}`), line.replaceAll(token, token.toUpperCase())];
          },
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR'],
        hold: 'none',
        says: new RegExp(String.raw`did not answer DOCTOR within ${T} ms`),
      },
    },
    crlf: {
      proxy: () =>
        onReply(
          (line) => isReply(line, 'DOCTOR_RESULT'),
          (line) => [`${line}\r`],
        ),
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  started: {
    silence: {
      mapping: 'the agent takes the hold but its receipt is lost (dropped from the outbox)',
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'started'),
          () => [],
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'ours',
        says: new RegExp(
          String.raw`the agent did not acknowledge BUILD started \(no BUILD started receipt from the agent on port \d+ within ${T} ms\); the build did not run`,
        ),
        also: (ctx, err) => {
          expect(err).toMatch(/the next run here reuses that owner and recovers it/);
          expect(JSON.parse(fs.readFileSync(`${ctx.p.dir}/.reclazz/owner.json`, 'utf8'))).toMatchObject({
            owner: OWNER,
            sessionId: ctx.agent.sessionId,
          });
        },
      },
    },
    disconnect: {
      agent: () => ({ intercept: (cmd) => (cmd.verb === 'BUILD' ? { kind: 'close' } : undefined) }),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'none',
        says: /did not acknowledge BUILD started \(the agent on port \d+ closed the connection\)/,
      },
    },
    rejection: {
      mapping: 'another owner (the IDE) holds the build; --wait 0',
      setup: (ctx) => holdAs(ctx.agent.port, 'the-ide'),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'ide',
        says: /another owner still holds the agent's build hold after \d+ ms; the build did not run/,
        also: (_c, err) => expect(err).toMatch(/let that build \(IDE or terminal\) finish.*restart the app/),
      },
    },
    garbage: {
      mapping: 'the agent takes the hold; its receipt arrives only in malformed forms',
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'started'),
          (line) => [...HOSTILE, ...malformed(line)],
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'ours',
        says: new RegExp(String.raw`did not acknowledge BUILD started \(no BUILD started receipt .*within ${T} ms\)`),
      },
    },
    late: {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'started'),
          (line) => ({ delayMs: LATE, lines: [line] }),
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'ours',
        says: new RegExp(String.raw`did not acknowledge BUILD started \(no BUILD started receipt .*within ${T} ms\)`),
      },
    },
    'wrong-token': {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'started'),
          (line) => wrongBuildTokens(line),
        ),
      expect: {
        exit: 69,
        built: false,
        flow: ['DOCTOR', 'BUILD started'],
        hold: 'ours',
        says: new RegExp(String.raw`did not acknowledge BUILD started \(no BUILD started receipt .*within ${T} ms\)`),
      },
    },
    crlf: {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'started'),
          (line) => [`${line}\r`],
        ),
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  build: {
    silence: {
      mapping: 'from the started receipt on, the agent answers nothing (hung): the build runs to its end, ok and failed get no receipt',
      agent: silentAfterStarted,
      expect: {
        exit: 70,
        built: true,
        flow: LOST_OK,
        hold: 'ours',
        says: /the build succeeded but the BUILD ok receipt was lost: not completed safely; the reload state is unknown/,
      },
    },
    disconnect: {
      mapping: 'the connection drops during the build while the app keeps running',
      // The build ends only once the CLI has seen the close, so the loss is one during the build.
      proxy: (ctx) => afterStarted(ctx, (c) => c.closeSeen()),
      during: true,
      expect: {
        exit: 70,
        built: true,
        flow: ['DOCTOR', 'BUILD started', 'DOCTOR'],
        hold: 'ours',
        says: /closed the connection during the build; the agent is back with the same session .*The reload state is unknown: not completed safely/,
        also: (_c, err) => expect(err).toMatch(/still holds this build for owner matrix-owner: run again here/),
      },
    },
    rejection: {
      mapping: 'the app restarts during the build: hold and connection are gone, a new session answers',
      proxy: (ctx) => afterStarted(ctx, () => ctx.agent.restart()),
      during: true,
      expect: {
        exit: 70,
        built: true,
        flow: ['DOCTOR', 'BUILD started', 'DOCTOR'],
        hold: 'none',
        says: /the agent is back with a new session [0-9a-f-]+: the app restarted.*The reload state is unknown/,
      },
    },
    garbage: {
      proxy: (ctx) => afterStarted(ctx, (c) => HOSTILE.forEach((line) => c.write(typeof line === 'string' ? `${line}\n` : line))),
      during: true,
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
    late: {
      mapping:
        "a stale receipt replayed during the build (the started request's token, state ok) while the real ok receipt is lost: it must not count",
      proxy: (ctx) =>
        afterStarted(
          ctx,
          (c, started) => c.write(`${rewrite(started, messageOf(started)!.replace(' started ', ' ok '))}\n`),
          (line) => (isBuildReceipt(line, 'ok') ? [] : undefined),
        ),
      during: true,
      expect: { exit: 70, built: true, flow: LOST_OK, hold: 'none', says: /the BUILD ok receipt was lost: not completed safely/ },
    },
    'wrong-token': {
      mapping: "other clients' receipts during the build (other request tokens, our owner): ignored",
      proxy: (ctx) =>
        afterStarted(ctx, (c) =>
          [
            info(`BUILD_ACK someone-else ok owner=${OWNER}`),
            info(`BUILD_REJECTED someone-else started owner=${OWNER}`),
            info(`VERIFY_RESULT someone-else {"status":"applied"}`),
          ].forEach((line) => c.write(`${line}\n`)),
        ),
      during: true,
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
    crlf: {
      mapping: 'CRLF-terminated broadcasts during the build',
      proxy: (ctx) =>
        afterStarted(ctx, (c) =>
          [info('Compiling'), JSON.stringify({ level: 'RELOAD', message: 'Reloaded x', timestamp: 'now' })].forEach((l) =>
            c.write(`${l}\r\n`),
          ),
        ),
      during: true,
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  finish: {
    silence: {
      mapping: 'the agent schedules the capture but the ok receipt is lost',
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'ok'),
          () => [],
        ),
      expect: {
        exit: 70,
        built: true,
        flow: LOST_OK,
        hold: 'none',
        says: /the BUILD ok receipt was lost: not completed safely; the reload state is unknown/,
        also: (ctx) => {
          const builds = ctx.agent.received.filter((r) => r.line.startsWith('BUILD '));
          const tokens = builds.map((r) => requestToken(r.line));
          expect(new Set(tokens).size).toBe(3); // started, ok and failed each with a fresh request token
        },
      },
    },
    disconnect: {
      agent: () => ({ intercept: (cmd) => (cmd.verb === 'BUILD' && cmd.words[1] === 'ok' ? { kind: 'close' } : undefined) }),
      expect: {
        exit: 70,
        built: true,
        flow: ['DOCTOR', 'BUILD started', 'BUILD ok', 'DOCTOR'],
        hold: 'ours',
        says: /BUILD ok receipt was lost \(the connection closed; the agent is back with the same session .*\): not completed safely/,
      },
    },
    rejection: {
      mapping: 'BUILD_REJECTED for ok (the agent did not act on it)',
      agent: () => ({
        intercept: (cmd) =>
          cmd.verb === 'BUILD' && cmd.words[1] === 'ok'
            ? { kind: 'reply', lines: [info(`BUILD_REJECTED ${requestToken(cmd.line)} ok owner=${OWNER}`)] }
            : undefined,
      }),
      expect: { exit: 70, built: true, flow: LOST_OK, hold: 'ours', says: /the BUILD ok receipt was rejected: not completed safely/ },
    },
    garbage: {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'ok'),
          (line) => [...HOSTILE, ...malformed(line)],
        ),
      expect: { exit: 70, built: true, flow: LOST_OK, hold: 'none', says: /the BUILD ok receipt was lost: not completed safely/ },
    },
    late: {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'ok'),
          (line) => ({ delayMs: LATE, lines: [line] }),
        ),
      expect: { exit: 70, built: true, flow: LOST_OK, hold: 'none', says: /the BUILD ok receipt was lost: not completed safely/ },
    },
    'wrong-token': {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'ok'),
          (line) => wrongBuildTokens(line),
        ),
      expect: { exit: 70, built: true, flow: LOST_OK, hold: 'none', says: /the BUILD ok receipt was lost: not completed safely/ },
    },
    crlf: {
      proxy: () =>
        onReply(
          (line) => isBuildReceipt(line, 'ok'),
          (line) => [`${line}\r`],
        ),
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
  verify: {
    silence: {
      mapping: "the first VERIFY reply for each class is dropped (the agent's outbox): re-asked within the deadline",
      proxy: () => {
        const seen = new Set<string>();
        return onReply(verifyReply, (line) => {
          const className = (JSON.parse(messageOf(line)!.split(' ').slice(2).join(' ')) as { className: string }).className;
          if (seen.has(className)) return undefined;
          seen.add(className);
          return [];
        });
      },
      expect: {
        exit: 0,
        built: true,
        flow: FULL,
        hold: 'none',
        says: /all 2 changed class\(es\) proven live/,
        also: (ctx) => {
          const asks = ctx.agent.received.filter((r) => r.line.startsWith('VERIFY ')).map((r) => r.line.split(' '));
          for (const name of ['com.acme.Greeter', 'com.acme.Outer$Inner']) {
            const tokens = asks.filter((w) => w[2] === name).map((w) => w[1]);
            expect(tokens.length).toBeGreaterThanOrEqual(2);
            expect(new Set(tokens).size).toBe(tokens.length);
          }
        },
      },
    },
    disconnect: {
      agent: () => ({ intercept: (cmd) => (cmd.verb === 'VERIFY' ? { kind: 'close' } : undefined) }),
      expect: {
        exit: 75,
        built: true,
        flow: [...FULL, 'DOCTOR'],
        hold: 'none',
        says: /only 0 of 2 changed class\(es\) are proven live: the agent closed the connection during VERIFY; the agent is back with the same session/,
      },
    },
    rejection: {
      mapping: 'the reload of Greeter failed: VERIFY answers status "failed"',
      agent: () => ({ verifyStatus: (name) => (name === 'com.acme.Greeter' ? 'failed' : undefined) }),
      expect: {
        exit: 75,
        built: true,
        // A reload that did not apply: PENDING (its end marked by a DOCTOR) says whether it needs a restart,
        // and DIAGNOSE (its end marked the same way) what the JVM has loaded of it.
        flow: [...FULL, 'PENDING', 'DOCTOR', 'DIAGNOSE', 'DOCTOR'],
        hold: 'none',
        says: /only 1 of 2 changed class\(es\) are proven live/,
        also: (_c, err) => expect(err).toMatch(/failed\s+com\.acme\.Greeter/),
      },
    },
    garbage: {
      mapping:
        'every VERIFY reply arrives malformed (unknown status, missing or wrong-typed field, not an object, cut): no receipt, re-asked until the deadline',
      proxy: () => onReply(verifyReply, (line) => [...HOSTILE.slice(0, 3), ...malformedVerify(line)]),
      expect: {
        exit: 75,
        built: true,
        flow: FULL,
        hold: 'none',
        says: /only 0 of 2/,
        also: (_c, err) => expect(err).toMatch(/timeout\s+com\.acme\.Greeter\s+no receipt before the deadline/),
      },
    },
    late: {
      mapping: 'every VERIFY reply comes after the 1 s re-ask: late replies to old tokens are ignored',
      proxy: () => onReply(verifyReply, (line) => ({ delayMs: LATE, lines: [line] })),
      expect: {
        exit: 75,
        built: true,
        flow: FULL,
        hold: 'none',
        says: /only 0 of 2/,
        also: (_c, err) => expect(err).toMatch(/timeout\s+com\.acme\.Greeter/),
      },
    },
    'wrong-token': {
      mapping: 'VERIFY replies for another token, class or hash, claiming applied',
      proxy: () => onReply(verifyReply, (line) => wrongVerify(line)),
      expect: { exit: 75, built: true, flow: FULL, hold: 'none', says: /only 0 of 2/ },
    },
    crlf: {
      proxy: () => onReply(verifyReply, (line) => [`${line}\r`]),
      expect: { exit: 0, built: true, flow: FULL, hold: 'none', says: /all 2 changed class\(es\) proven live/ },
    },
  },
};

// ---- the runner ---------------------------------------------------------------------------

let ran = 0;

// Most cells wait on a bound rather than compute: run more at once than the default 5, not so many
// that this worker (each cell's agent and proxy run in it) answers late on a loaded machine.
vi.setConfig({ maxConcurrency: 6 });

afterAll(() => {
  console.log(`fault matrix: ${ran} of ${STEPS.length * FAULTS.length} cells ran (${STEPS.length} steps x ${FAULTS.length} faults)`);
});

describe.concurrent('fault matrix (step x fault) through the real binary', () => {
  for (const step of STEPS) {
    for (const fault of FAULTS) {
      const cell = MATRIX[step][fault];
      it(`${step} x ${fault}${cell.mapping ? ` (${cell.mapping})` : ''}`, async () => {
        const p = project();
        const agent = await agentFor(p, [], cell.agent?.({ p }) ?? {});
        const ctx: Context = { p, agent, from: 0, cleanup: [() => agent.stop()] };
        const proxy = await startProxy(agent.port, cell.proxy?.(ctx) ?? {});
        ctx.cleanup.push(() => proxy.stop());
        fs.mkdirSync(`${p.dir}/.reclazz`, { recursive: true });
        fs.writeFileSync(p.portFile, String(proxy.port));
        const content = await cell.setup?.(ctx, proxy);
        if (typeof content === 'string') fs.writeFileSync(p.portFile, content);
        ctx.from = agent.received.length;
        try {
          const run = await runCli(
            [
              '--owner',
              OWNER,
              '--timeout',
              String(T),
              '--verify-timeout',
              String(V),
              '--wait',
              '0',
              ...buildCommand(p, { writes: WRITES, ...(cell.during ? { until: goFile(p) } : {}) }),
            ],
            { cwd: p.dir },
          );
          const e = cell.expect;
          const report = `exit ${run.exitCode}\n${run.stderr}`;
          expect(run.stderr, report).toMatch(e.says);
          expect(run.exitCode, report).toBe(e.exit);
          expect(hasStackTrace(run.stderr), report).toBe(false);
          expect(buildRan(p), 'build ran').toBe(e.built);
          expect(flow(agent, ctx.from), 'what the agent received').toEqual(e.flow);
          // An acknowledged ok schedules the capture; the agent releases the hold when it has run.
          if (e.hold === 'none') await waitFor(() => agent.hold().kind === 'none', 'the capture to release the hold');
          const hold = agent.hold();
          if (e.hold !== 'none') expect(hold).toMatchObject({ kind: 'named', owner: e.hold === 'ours' ? OWNER : 'the-ide' });
          e.also?.(ctx, run.stderr);
          ran += 1;
        } finally {
          await Promise.all(ctx.cleanup.map((undo) => undo()));
        }
      });
    }
  }
});
