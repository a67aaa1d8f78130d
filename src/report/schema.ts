/**
 * The `--json` output as strict zod schemas: each stdout line is a {@link jsonLineSchema}
 * (`events --json`: {@link agentLineSchema}), so a field missing here (and in docs/json.md)
 * fails the test of real runs. Exported from `reclazz-build` for consumers.
 */
import * as z from 'zod';
import { doctorObservedSchema } from '../outcome/facts.js';
import type { Reason } from '../outcome/outcome.js';
import { WAITING_KINDS, WARNING_KINDS } from './step-words.js';

const int = z.number().int();
const ms = int.min(0);

/** The agent as a build sees it (CONNECTED and DOCTOR). */
const agentInfoSchema = z.strictObject({
  port: int,
  source: z.string(),
  agentVersion: z.string(),
  sessionId: z.string(),
  pid: z.string(),
  javaVersion: z.string(),
  workingDirectory: z.string(),
  watchedDirectories: z.array(z.string()),
  watchSampleTruncated: z.boolean(),
  verifySupported: z.boolean(),
});

/** The agent as a subcommand sees it on connect. */
const endpointSchema = z.strictObject({
  port: int,
  source: z.string(),
  portFile: z.string().nullable(),
  agentVersion: z.string().nullable(),
  protocolVersion: int,
});

/** With several agents, the line is about one agent's session: its `source` (the port file's path). */
const agentSource = z.string().optional();

/**
 * Event lines of a build (and of `verify`).
 * @internal for its tests
 */
export const eventLineSchemas = {
  agent: z.strictObject({ type: z.literal('agent'), agent: agentInfoSchema, agentSource }),
  warning: z.strictObject({ type: z.literal('warning'), kind: z.enum(WARNING_KINDS), message: z.string(), agentSource }),
  waiting: z.strictObject({ type: z.literal('waiting'), kind: z.enum(WAITING_KINDS), what: z.string(), elapsedMs: ms, agentSource }),
  hold: z.strictObject({
    type: z.literal('hold'),
    owner: z.string(),
    ownerSource: z.enum(['option', 'saved', 'new']),
    recovers: z.boolean(),
    agentSource,
  }),
  agentDirs: z.strictObject({
    type: z.literal('agent-dirs'),
    fromAgent: z.array(z.string()),
    fromClassPath: z.array(z.string()),
    missing: z.array(z.string()),
    agentSource,
  }),
  buildStart: z.strictObject({
    type: z.literal('build-start'),
    command: z.string(),
    wrapper: z.boolean(),
    cwd: z.string(),
    movedFrom: z.string().optional(),
    classDirs: z.array(z.string()),
    held: z.boolean(),
  }),
  buildEnd: z.strictObject({ type: z.literal('build-end'), exitCode: int, durationMs: ms, signal: z.string().optional() }),
  finish: z.strictObject({ type: z.literal('finish'), state: z.enum(['ok', 'failed']), acknowledged: z.boolean(), agentSource }),
  changes: z.strictObject({
    type: z.literal('changes'),
    changed: ms,
    checks: ms,
    added: ms,
    removed: ms,
    notVerifiable: ms,
    total: ms,
    agentSource,
  }),
  verifyProgress: z.strictObject({ type: z.literal('verify-progress'), final: ms, applied: ms, total: ms, agentSource }),
  agentEvent: z.strictObject({ type: z.literal('agent-event'), level: z.string(), message: z.string(), agentSource }),
  restartNeeded: z.strictObject({
    type: z.literal('restart-needed'),
    classes: z.array(z.string()),
    command: z.string().nullable(),
    log: z.string().nullable(),
    timeoutMs: ms,
    agentSource,
  }),
  restartOutput: z.strictObject({ type: z.literal('restart-output'), text: z.string(), agentSource }),
  restart: z.strictObject({
    type: z.literal('restart'),
    command: z.string(),
    exitCode: int,
    durationMs: ms,
    appBack: z.boolean(),
    agentSource,
  }),
  restartRunning: z.strictObject({ type: z.literal('restart-running'), command: z.string(), pid: int, log: z.string(), agentSource }),
} as const;

/**
 * Statuses of a class: VERIFY verdicts, plus files that were not verified.
 * @internal for its tests
 */
export const classStatusSchema = z.enum([
  'applied',
  'unchanged',
  'failed',
  'mismatch',
  'unverified',
  'timeout',
  'beyond-capacity',
  'session-changed',
  'connection-lost',
  'interrupted',
  'not-observed',
  'restart-required',
  'rewritten',
  'not-watched',
  'paused',
  'hold-kept',
  'added',
  'removed',
  'not-verifiable',
]);

const classFields = {
  className: z.string(),
  path: z.string(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  status: classStatusSchema,
  detail: z.string(),
  agentSource,
};

/** One class and its verdict (emitted before `result`, one line per class). */
export const classLineSchema = z.strictObject({ type: z.literal('class'), ...classFields });

const runReasonSchema = z.enum([
  'ok',
  'no-agent-build',
  'build-failed',
  'usage',
  'nested',
  'command-not-found',
  'command-not-executable',
  'no-agent',
  'bad-port-file',
  'ambiguous-agent',
  'lock-busy',
  'stale-port',
  'handshake',
  'old-agent',
  'agent-not-ready',
  'unsupported',
  'hold-busy',
  'no-receipt',
  'agent-disconnected',
  'not-safe',
  'verify-incomplete',
  'interrupted',
  'state-error',
  'internal-error',
] as const satisfies readonly Reason[]);

/** What a build's `result` line says of a run, and with several agents of each agent. */
const runResultFields = {
  reason: runReasonSchema,
  exitCode: int,
  provenLive: z.boolean(),
  message: z.string(),
  hint: z.string().nullable(),
  owner: z.string().nullable(),
  command: z.string().nullable(),
  hold: z.enum(['none', 'held', 'unknown']),
  agent: agentInfoSchema.nullable(),
  /** `output`: the build's last lines, when it failed and they were kept (stderr not a terminal). */
  build: z
    .strictObject({ exitCode: int, durationMs: ms, signal: z.string().nullable(), output: z.array(z.string()).optional() })
    .nullable(),
  changes: z.strictObject({ changed: ms, checks: ms, added: ms, removed: ms, notVerifiable: ms, resources: ms, total: ms }).nullable(),
  classes: z.array(z.strictObject(classFields)),
  resources: z.array(z.string()),
  durationMs: ms,
  /** After a restart for a change that needed one: true, and the new agent session. */
  restarted: z.literal(true).optional(),
  restartSessionId: z.string().optional(),
  /** The agent kept the hold after acknowledging ok (reason verify-incomplete), and why: a file its capture could not read, or a scan that did not finish. */
  holdKept: z
    .union([
      z.strictObject({ cause: z.literal('unreadable-file'), file: z.string() }),
      z.strictObject({ cause: z.literal('scan-unfinished') }),
    ])
    .optional(),
};

/** The final line of a build (`action: build`) or of `verify` (`action: verify`); `agents` only with several agents. */
export const runResultLineSchema = z.strictObject({
  type: z.literal('result'),
  action: z.enum(['build', 'verify']),
  ...runResultFields,
  agents: z.array(z.strictObject({ agentSource: z.string(), ...runResultFields })).optional(),
});

const commandReasonSchema = z.enum([
  'ok',
  'usage',
  'no-agent',
  'bad-port-file',
  'ambiguous-agent',
  'stale-port',
  'handshake',
  'old-agent',
  'agent-not-ready',
  'unsupported',
  'agent-disconnected',
  'interrupted',
  'no-receipt',
  'unexpected-receipt',
  'stream-ended',
  'doctor-findings',
] as const satisfies readonly Reason[]);

const commandBase = {
  type: z.literal('result'),
  reason: commandReasonSchema,
  exitCode: int,
  message: z.string(),
  hint: z.string().nullable(),
  endpoint: endpointSchema.nullable(),
  durationMs: ms,
};

/** The RELOAD_STATE receipt. */
const reloadStateSchema = z.strictObject({
  action: z.enum(['pause', 'resume', 'status']),
  paused: z.boolean(),
  pendingClasses: ms,
  pendingActions: ms,
  buildHold: z.enum(['none', 'named', 'legacy']),
});

/** Final lines of the agent subcommands (also the MCP tools' output schemas: src/mcp/tools.ts). */
export const commandResultLineSchemas = {
  doctor: z.strictObject({
    ...commandBase,
    action: z.literal('doctor'),
    doctor: z.nullable(doctorObservedSchema),
    classDirs: z.array(z.strictObject({ dir: z.string(), watched: z.boolean().nullable() })),
    watched: z.array(
      z.strictObject({ dir: z.string(), local: z.string(), here: z.enum(['missing', 'empty', 'classes']), ours: z.boolean() }),
    ),
    watchedFrom: z.enum(['options', 'doctor', 'sample', 'none']),
    reload: reloadStateSchema.nullable(),
  }),
  reload: z.strictObject({ ...commandBase, action: z.enum(['status', 'pause', 'resume']), state: reloadStateSchema.nullable() }),
  scan: z.strictObject({ ...commandBase, action: z.literal('scan'), sent: z.boolean(), delivered: z.boolean() }),
  events: z.strictObject({ ...commandBase, action: z.literal('events'), events: ms }),
} as const;

/** Any `result` line. */
export const resultLineSchema = z.union([
  runResultLineSchema,
  commandResultLineSchemas.doctor,
  commandResultLineSchemas.reload,
  commandResultLineSchemas.scan,
  commandResultLineSchemas.events,
]);

/** Any line reclazz-build writes with `--json` (except `events --json`, see {@link agentLineSchema}). */
export const jsonLineSchema = z.union([...Object.values(eventLineSchemas), classLineSchema, resultLineSchema]);
export type JsonLine = z.infer<typeof jsonLineSchema>;

/** A line of `events --json`: the agent's own event object, unchanged (its fields may grow). */
export const agentLineSchema = z.looseObject({ level: z.string(), message: z.string(), timestamp: z.string().optional() });
