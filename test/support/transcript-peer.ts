/**
 * Random and mutated agent transcripts for the fuzz test, and a tiny TCP peer that serves one.
 *
 * A transcript is a plan of how the "agent" answers each thing reclazz-build can send
 * (greeting on connect, DOCTOR, BUILD started/ok/failed, VERIFY): correctly, rejected, not at
 * all, late, closing the connection, duplicated, after hostile noise, or as a mutation of the
 * correct reply (bytes flipped, cut, padded past 64 KiB, invalid UTF-8, CRLF, wrong token or
 * state or owner, wrong level or types, not an object...), plus unsolicited lines and closes at
 * random times. Everything comes from a seeded PRNG, so a failing transcript can be replayed.
 *
 * A tainted transcript (see {@link taintedPlan}) also puts control characters (see
 * {@link controlText}) into every text field the peer sends: levels and messages, CONNECTED's
 * agent, every DOCTOR string, VERIFY's detail, source and session, now and then its class name.
 *
 * The peer records every byte it writes; {@link oracle} re-reads those bytes with a strict
 * parser written here, independently of src/, to say which receipts were really on the wire.
 */
import net from 'node:net';

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;
const int = (rng: Rng, min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));

/** How one reply (or the greeting) is given. */
type Action =
  | { kind: 'correct' }
  | { kind: 'reject' }
  | { kind: 'drop' }
  | { kind: 'close' }
  | { kind: 'delay'; ms: number }
  | { kind: 'duplicate' }
  | { kind: 'noise' }
  | { kind: 'mutate'; mutations: Mutation[] };

const MUTATIONS = [
  'flip-byte',
  'cut',
  'pad-64k',
  'invalid-utf8',
  'crlf',
  'wrong-token',
  'token-case',
  'wrong-state',
  'wrong-owner',
  'no-owner',
  'level',
  'message-type',
  'array',
  'extra-field',
  'extra-word',
  'leading-space',
  'newline-inside',
  'receipt-field',
] as const;
type Mutation = (typeof MUTATIONS)[number];

/** The kinds of request a plan answers. */
type RequestKind = 'greeting' | 'doctor' | 'started' | 'ok' | 'failed' | 'verify';

/** One transcript: how the agent behaves for one run. Times in ms. */
export interface Plan {
  index: number;
  timeoutMs: number;
  verifyTimeoutMs: number;
  waitMs: number;
  buildExit: number;
  /** Class files the build rewrites (0..3: A, B, C). */
  changes: number;
  /** Actions per request kind, consumed in order (the last repeats). */
  actions: Record<RequestKind, Action[]>;
  ownership: boolean;
  verifySupported: boolean;
  /** A reconnect (after a loss) sees this session. */
  reconnectSession: 'same' | 'new' | 'none';
  /** Unsolicited lines, written at these times after connect. */
  noise: Array<{ atMs: number; line: string | Buffer }>;
  /** Close the first connection at this time after connect. */
  closeAtMs?: number;
  /** Abort the run with this signal at this time after start. */
  abort?: { atMs: number; signal: 'SIGINT' | 'SIGTERM' };
  /** Put control characters into every text field sent (see {@link controlText}). */
  taint?: boolean;
}

/** What a tainted field's line break is followed by: a line a peer must never get printed on its own. */
export const INJECTED_LINE = 'FUZZ-INJECTED reclazz-build: ✔ proven live';

/** Pieces of hostile text: every kind of character a terminal must be kept from, and sequences built from them. */
const CONTROL_PIECES: ReadonlyArray<(rng: Rng) => string> = [
  // C0 controls but TAB, and DEL.
  (rng) =>
    String.fromCharCode(pick(rng, [...Array.from({ length: 9 }, (_, i) => i), ...Array.from({ length: 22 }, (_, i) => i + 10), 0x7f])),
  // C1 controls, the one-character CSI among them.
  (rng) => String.fromCharCode(int(rng, 0x80, 0x9f)),
  () => '\u009b2J',
  // Bidirectional embeddings, overrides and isolates.
  (rng) => String.fromCharCode(pick(rng, [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])),
  // Lone surrogate halves (JSON carries them as \ud8xx escapes).
  (rng) => String.fromCharCode(int(rng, 0xd800, 0xdfff)),
  // Escape sequences: window title, clear screen, colour, cursor moves.
  () => '\u001b]0;fuzz-title\u0007',
  () => '\u001b[2J\u001b[H',
  (rng) => `\u001b[${int(rng, 30, 47)}m`,
  () => '\u001b[1A\u001b[K',
  () => `\r${INJECTED_LINE}`,
  () => `\n${INJECTED_LINE}`,
  () => `\r\n${INJECTED_LINE}`,
  () => 'plain',
];

/** 1 to 6 pieces of hostile text (see {@link CONTROL_PIECES}) for one field. */
function controlText(rng: Rng): string {
  return Array.from({ length: int(rng, 1, 6) }, () => pick(rng, CONTROL_PIECES)(rng)).join('');
}

const HOSTILE: Array<string | Buffer> = [
  Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x0a]),
  `${'{"level":"INFO","message":"'}${'z'.repeat(66 * 1024)}"}`,
  '[]',
  'null',
  '{"level":"INFO"}',
  '{"level":5,"message":"BUILD_ACK x started owner=y"}',
  '{"level":"HEARTBEAT","message":"","timestamp":"2026-01-01T00:00:00Z"}',
  '{"level":"NEW_THING","message":"unknown level"}',
  '{"level":"INFO","message":"BUILD_ACK',
  '{"level":"WARN","message":"Status client 1 is not keeping up; dropping events"}',
  '',
  '\r',
];

/** Mutations that keep a line looking like a valid receipt: the ones a sloppy client would believe. */
const SEMANTIC: readonly Mutation[] = [
  'receipt-field',
  'receipt-field',
  'wrong-token',
  'token-case',
  'wrong-state',
  'wrong-owner',
  'no-owner',
  'extra-word',
  'leading-space',
  'level',
  'crlf',
  'extra-field',
];

/** The request kinds, in protocol order. */
const KINDS: readonly RequestKind[] = ['greeting', 'doctor', 'started', 'ok', 'failed', 'verify'];

/** How one reply is given, faulty with probability `faultRate`. */
function action(rng: Rng, kind: RequestKind, faultRate: number): Action {
  if (rng() >= faultRate) return { kind: 'correct' };
  const r = rng();
  if (r < 0.12) return { kind: 'reject' };
  if (r < 0.24) return { kind: 'drop' };
  if (r < 0.3) return { kind: 'close' };
  if (r < 0.42) return { kind: 'delay', ms: int(rng, 0, kind === 'verify' ? 1500 : 150) };
  if (r < 0.5) return { kind: 'duplicate' };
  if (r < 0.58) return { kind: 'noise' };
  // Mostly one mutation, mostly one that keeps the line plausible.
  const count = rng() < 0.7 ? 1 : int(rng, 2, 3);
  return { kind: 'mutate', mutations: Array.from({ length: count }, () => (rng() < 0.6 ? pick(rng, SEMANTIC) : pick(rng, MUTATIONS))) };
}

/** A random plan for transcript `index` (its own PRNG stream, so each one can be replayed alone). */
export function randomPlan(seed: number, index: number): Plan {
  const rng = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  // Most transcripts concentrate their faults on one step, so every step is reached and
  // attacked often; some are chaotic everywhere.
  const chaos = rng() < 0.15;
  const focus = pick(rng, KINDS);
  const rate = (kind: RequestKind) => (chaos ? 0.3 : kind === focus ? 0.65 : 0.04);
  const list = (kind: RequestKind, n: number) => Array.from({ length: n }, () => action(rng, kind, rate(kind)));
  const timeoutMs = int(rng, 80, 160);
  const plan: Plan = {
    index,
    timeoutMs,
    verifyTimeoutMs: int(rng, 150, 400),
    waitMs: rng() < 0.85 ? 0 : 600,
    buildExit: rng() < 0.8 ? 0 : 3,
    changes: int(rng, 0, 3),
    actions: {
      greeting: list('greeting', 2),
      doctor: list('doctor', 2),
      started: list('started', 3),
      ok: list('ok', 1),
      failed: list('failed', 1),
      verify: list('verify', 8),
    },
    ownership: rng() < 0.97,
    verifySupported: rng() < 0.97,
    reconnectSession: pick(rng, ['same', 'new', 'none'] as const),
    noise: Array.from({ length: int(rng, 0, 4) }, () => ({ atMs: int(rng, 0, 300), line: pick(rng, HOSTILE) })),
  };
  if (rng() < 0.08) plan.closeAtMs = int(rng, 0, 400);
  if (rng() < 0.1) plan.abort = { atMs: int(rng, 0, 400), signal: rng() < 0.5 ? 'SIGINT' : 'SIGTERM' };
  // Correct answers all the way for a share of transcripts: the happy path must stay reachable.
  if (rng() < 0.15) for (const key of Object.keys(plan.actions) as RequestKind[]) plan.actions[key] = [{ kind: 'correct' }];
  return plan;
}

/**
 * A plan that taints every text field: {@link randomPlan} of a stream of its own, with
 * {@link Plan.taint} set, and a share of its noise lines replaced by tainted events.
 */
export function taintedPlan(seed: number, index: number): Plan {
  return { ...randomPlan((seed ^ 0x3c6ef372) >>> 0, index), taint: true };
}

/** What the peer saw and wrote. */
export interface PeerLog {
  /** Command lines received, all connections, in order. */
  received: string[];
  /** Every chunk written to the client, all connections, in order. */
  written: Buffer[];
  /** Connections accepted. */
  connections: number;
}

/** A running transcript peer. */
export interface Peer {
  port: number;
  log: PeerLog;
  /** The session id DOCTOR reports on the first connection. */
  sessionId: string;
  stop(): Promise<void>;
}

function event(level: string, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ level, message, timestamp: new Date().toISOString(), ...extra });
}

function mutate(rng: Rng, line: string, mutations: Mutation[]): string | Buffer {
  let text = line;
  let bytes: Buffer | undefined;
  for (const m of mutations) {
    const parsed = (() => {
      try {
        return JSON.parse(text) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    })();
    const message = typeof parsed?.message === 'string' ? parsed.message : undefined;
    const withMessage = (next: string) => (parsed === undefined ? text : JSON.stringify({ ...parsed, message: next }));
    const words = message?.split(' ') ?? [];
    switch (m) {
      case 'flip-byte': {
        const b = Buffer.from(text);
        if (b.length > 0) b[int(rng, 0, b.length - 1)]! ^= 1 << int(rng, 0, 7);
        bytes = b;
        text = b.toString('latin1');
        break;
      }
      case 'cut':
        text = text.slice(0, int(rng, 0, Math.max(0, text.length - 1)));
        break;
      case 'pad-64k':
        text = parsed === undefined ? text + ' '.repeat(66 * 1024) : JSON.stringify({ ...parsed, pad: 'p'.repeat(66 * 1024) });
        break;
      case 'invalid-utf8':
        bytes = Buffer.concat([Buffer.from(text.slice(0, 20)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(20))]);
        break;
      case 'crlf':
        text = `${text}\r`;
        break;
      case 'wrong-token':
        if (words.length > 1) text = withMessage([words[0], `${words[1]}x`, ...words.slice(2)].join(' '));
        break;
      case 'token-case':
        if (words.length > 1) text = withMessage([words[0], words[1]!.toUpperCase(), ...words.slice(2)].join(' '));
        break;
      case 'wrong-state':
        if (words.length > 2) text = withMessage([words[0], words[1], words[2] === 'ok' ? 'started' : 'ok', ...words.slice(3)].join(' '));
        break;
      case 'wrong-owner':
        if (words.length > 3) text = withMessage([...words.slice(0, 3), 'owner=somebody-else'].join(' '));
        break;
      case 'no-owner':
        if (words.length > 3) text = withMessage(words.slice(0, 3).join(' '));
        break;
      case 'level':
        if (parsed !== undefined) text = JSON.stringify({ ...parsed, level: pick(rng, ['info', 'WARN', 'OK', 'X', 7]) });
        break;
      case 'message-type':
        if (parsed !== undefined) text = JSON.stringify({ ...parsed, message: pick(rng, [null, 42, [message], { message }]) });
        break;
      case 'array':
        text = `[${text}]`;
        break;
      case 'extra-field':
        if (parsed !== undefined) text = JSON.stringify({ ...parsed, unexpected: { nested: [1, 'two'] } });
        break;
      case 'extra-word':
        if (message !== undefined) text = withMessage(`${message} trailing`);
        break;
      case 'leading-space':
        if (message !== undefined) text = withMessage(` ${message}`);
        break;
      case 'receipt-field': {
        // One field of a VERIFY_RESULT / DOCTOR_RESULT payload changed, retyped or removed.
        const match = message === undefined ? null : /^(VERIFY_RESULT|DOCTOR_RESULT) (\S+) (\{.*\})$/.exec(message);
        if (match === null) break;
        const payload = JSON.parse(match[3]!) as Record<string, unknown>;
        // Mostly the fields a receipt is matched on, changed to another plausible value.
        const identity =
          match[1] === 'VERIFY_RESULT'
            ? ['className', 'expectedSha256', 'observedSha256', 'sessionId', 'status', 'completedAt']
            : ['sessionId', 'status', 'buildOwnershipSupported', 'verifySupported'];
        const field = rng() < 0.75 ? pick(rng, identity) : pick(rng, Object.keys(payload));
        const change = rng() < 0.75 ? 'other' : pick(rng, ['retype', 'remove'] as const);
        if (change === 'remove') delete payload[field];
        else if (change === 'retype') payload[field] = typeof payload[field] === 'string' ? 1 : String(payload[field]);
        else if (field.endsWith('Sha256')) payload[field] = 'e'.repeat(64);
        else if (field === 'status') payload[field] = pick(rng, ['applied', 'running', 'mismatch', 'APPLIED', 'observed', 'unavailable']);
        else if (field === 'completedAt') payload[field] = '';
        else if (typeof payload[field] === 'boolean') payload[field] = !payload[field];
        else payload[field] = `${String(payload[field])}x`;
        text = withMessage(`${match[1]} ${match[2]} ${JSON.stringify(payload)}`);
        break;
      }
      case 'newline-inside':
        text = `${text.slice(0, Math.floor(text.length / 2))}\n${text.slice(Math.floor(text.length / 2))}`;
        break;
    }
    if (m !== 'flip-byte' && m !== 'invalid-utf8') bytes = undefined;
  }
  return bytes ?? text;
}

/** Starts a peer that serves `plan`; `seed` drives its random choices at run time. */
export async function servePlan(plan: Plan, seed: number): Promise<Peer> {
  const rng = prng((seed ^ 0x5bd1e995 ^ plan.index) >>> 0);
  const sessionId = `session-${plan.index}-a`;
  const log: PeerLog = { received: [], written: [], connections: 0 };
  const cursor: Record<RequestKind, number> = { greeting: 0, doctor: 0, started: 0, ok: 0, failed: 0, verify: 0 };
  const next = (kind: RequestKind): Action => {
    const list = plan.actions[kind];
    return list[Math.min(cursor[kind]++, list.length - 1)]!;
  };
  /** `text`, with control characters added when the plan is tainted (sometimes before, mostly after). */
  const t = (text: string): string => {
    if (!plan.taint) return text;
    const extra = controlText(rng);
    return rng() < 0.2 ? `${extra}${text}` : `${text}${extra}`;
  };
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    const connection = log.connections++;
    // The same tainted session id in DOCTOR and VERIFY: the run must see one session, and show it safely.
    const session = `${connection === 0 || plan.reconnectSession === 'same' ? sessionId : `session-${plan.index}-b`}${plan.taint ? controlText(rng) : ''}`;
    const write = (data: string | Buffer, terminator = true): void => {
      if (socket.destroyed) return;
      const chunk = Buffer.concat([typeof data === 'string' ? Buffer.from(data) : data, terminator ? Buffer.from('\n') : Buffer.alloc(0)]);
      log.written.push(chunk);
      socket.write(chunk);
    };
    const give = (act: Action, correct: () => string, rejected: () => string): void => {
      switch (act.kind) {
        case 'correct':
          return write(correct());
        case 'reject':
          return write(rejected());
        case 'drop':
          return;
        case 'close':
          socket.destroy();
          return;
        case 'delay':
          later(act.ms, () => write(correct()));
          return;
        case 'duplicate':
          write(correct());
          write(correct());
          return;
        case 'noise':
          for (let i = int(rng, 1, 4); i > 0; i--) write(pick(rng, HOSTILE));
          write(correct());
          return;
        case 'mutate':
          write(mutate(rng, correct(), act.mutations));
          return;
      }
    };

    if (connection > 0 && plan.reconnectSession === 'none') {
      socket.destroy();
      return;
    }
    const greeting = connection === 0 ? next('greeting') : ({ kind: 'correct' } as Action);
    give(
      greeting,
      () => event('CONNECTED', t('Agent status server connected'), { version: 1, agent: t('9.9.9-fuzz') }),
      () => event('CONNECTED', 'Agent status server connected', { version: 1 }),
    );
    if (connection === 0) {
      for (const { atMs, line } of plan.noise) later(atMs, () => write(line));
      // Tainted: events of every level, tainted in level and message, at random times.
      if (plan.taint) {
        for (let i = int(rng, 2, 6); i > 0; i--) {
          const level = pick(rng, ['INFO', 'WARN', 'ERROR', 'RELOAD', 'STRUCTURAL_RELOAD', 'COMPILE', 'OK', 'HEARTBEAT']);
          later(int(rng, 0, 300), () => write(event(rng() < 0.3 ? t(level) : level, t('agent says'))));
        }
      }
      if (plan.closeAtMs !== undefined) later(plan.closeAtMs, () => socket.destroy());
    }

    let pending = '';
    socket.on('data', (chunk) => {
      pending += String(chunk);
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        log.received.push(line);
        const words = line.split(' ');
        if (words[0] === 'DOCTOR') {
          const token = words[1]!;
          const doctor = {
            requestId: token,
            status: 'observed',
            detail: t('fuzz'),
            sessionId: session,
            agentVersion: t('9.9.9-fuzz'),
            pid: t('1'),
            javaVersion: t('21'),
            vmName: t('fuzz'),
            workingDirectory: t('/'),
            watcherState: rng() < 0.5 ? t('watching') : 'watching',
            buildHold: rng() < 0.5 ? t('none') : 'none',
            watchedDirectoryCount: plan.taint ? 2 : 0,
            unwatchableDirectoryCount: 0,
            watchSampleTruncated: false,
            watchedDirectories: plan.taint ? [t('/app/target/classes'), t('/')] : [],
            buildOwnershipSupported: plan.ownership,
            verifySupported: plan.verifySupported,
            scanSupported: true,
            reloadConfirmed: false,
          };
          // A reconnect's DOCTOR (after a loss) is answered plainly.
          const act = connection === 0 ? next('doctor') : ({ kind: 'correct' } as Action);
          give(
            act,
            () => event('INFO', `DOCTOR_RESULT ${token} ${JSON.stringify(doctor)}`),
            () =>
              event(
                'INFO',
                `DOCTOR_RESULT ${token} ${JSON.stringify({ requestId: token, status: 'unavailable', detail: 'fuzz says no' })}`,
              ),
          );
        } else if (words[0] === 'BUILD') {
          const state = words[1] as 'started' | 'ok' | 'failed';
          const request = /request=(\S+)/.exec(line)?.[1];
          const owner = /owner=(\S+)/.exec(line)?.[1];
          if (request === undefined || !['started', 'ok', 'failed'].includes(state)) continue;
          if (state === 'started' && rng() < 0.5) write(event('INFO', t('Build started; holding 3 class files until BUILD ok')));
          give(
            next(state),
            () => event('INFO', `BUILD_ACK ${request} ${state} owner=${owner}`),
            () => event('INFO', `BUILD_REJECTED ${request} ${state} owner=${owner}`),
          );
        } else if (words[0] === 'VERIFY' && words.length === 4) {
          const [, token, className, sha] = words as [string, string, string, string];
          const receipt = (status: string, observed: string, completedAt: string) =>
            event(
              'INFO',
              `VERIFY_RESULT ${token} ${JSON.stringify({ requestId: token, sessionId: session, className: plan.taint && rng() < 0.1 ? t(className) : className, expectedSha256: sha, observedSha256: observed, status, source: t('fuzz'), detail: t(status), completedAt })}`,
            );
          const rejected = () => {
            const status = pick(rng, ['failed', 'unverified', 'mismatch', 'running', 'not_observed']);
            return receipt(
              status,
              status === 'mismatch' ? 'f'.repeat(64) : status === 'not_observed' ? '' : sha,
              status === 'running' || status === 'not_observed' ? '' : new Date().toISOString(),
            );
          };
          give(next('verify'), () => receipt('applied', sha, new Date().toISOString()), rejected);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    log,
    sessionId,
    stop: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The receipts that were really on the wire, read strictly from the bytes the peer wrote. */
export interface Oracle {
  /** `<request> <state> <owner>` of every well-formed BUILD_ACK. */
  acks: Set<string>;
  /** `<token> <className> <sha> <sessionId>` of every well-formed applied VERIFY_RESULT. */
  applied: Set<string>;
}

/** Reads the written bytes as the protocol says a client must, with nothing shared with src/. */
export function oracle(log: PeerLog): Oracle {
  const acks = new Set<string>();
  const applied = new Set<string>();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const all = Buffer.concat(log.written);
  let start = 0;
  for (let nl = all.indexOf(0x0a); nl !== -1; start = nl + 1, nl = all.indexOf(0x0a, start)) {
    let text: string;
    try {
      text = decoder.decode(all.subarray(start, nl));
    } catch {
      continue;
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const { level, message } = value as { level?: unknown; message?: unknown };
    if (level !== 'INFO' || typeof message !== 'string') continue;
    const ack = /^BUILD_ACK ([A-Za-z0-9_-]{1,64}) (started|ok|failed) owner=([A-Za-z0-9_-]{1,64})$/.exec(message);
    if (ack) acks.add(`${ack[1]} ${ack[2]} ${ack[3]}`);
    const verify = /^VERIFY_RESULT ([A-Za-z0-9_-]{1,64}) (\{.*\})$/.exec(message);
    if (verify) {
      try {
        const r = JSON.parse(verify[2]!) as Record<string, unknown>;
        const fields = [
          'requestId',
          'sessionId',
          'className',
          'expectedSha256',
          'observedSha256',
          'status',
          'source',
          'detail',
          'completedAt',
        ];
        if (
          fields.every((f) => typeof r[f] === 'string') &&
          r.status === 'applied' &&
          r.observedSha256 === r.expectedSha256 &&
          r.completedAt !== ''
        ) {
          applied.add(`${verify[1]} ${r.className} ${r.expectedSha256} ${r.sessionId}`);
        }
      } catch {
        // not a receipt
      }
    }
  }
  return { acks, applied };
}
