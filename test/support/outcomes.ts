/**
 * One outcome of every kind the code can end with: each reason, and each variant of its facts
 * that has words of its own. The words tests run over all of them.
 */
import type { Outcome } from '../../src/outcome/outcome.js';

const place = { port: 4711, source: '/p/.reclazz/agent.port', portFile: '/p/.reclazz/agent.port' };
const state = { action: 'status', paused: false, pendingClasses: 1, pendingActions: 0, buildHold: 'named' } as const;

/** Every outcome variant, labelled. */
export const SAMPLE_OUTCOMES: ReadonlyArray<[string, Outcome]> = [
  ['proven', { reason: 'ok', proof: { kind: 'proven', applied: 3 } }],
  ['files proven', { reason: 'ok', proof: { kind: 'proven', applied: 3, files: true } }],
  ['nothing to prove', { reason: 'ok', proof: { kind: 'nothing-to-prove' } }],
  ['--no-verify', { reason: 'ok', proof: { kind: 'not-verified', changed: 2 } }],
  ['unchanged', { reason: 'ok', proof: { kind: 'proven', applied: 1, unchanged: 2 } }],
  ['none verifiable', { reason: 'ok', proof: { kind: 'none-verifiable', files: 1 } }],
  ['doctor', { reason: 'ok', done: { kind: 'doctor', dirs: 2, watched: 1, unwatched: 1, unknown: 0 } }],
  ['status', { reason: 'ok', done: { kind: 'reload', action: 'status', state } }],
  ['scan', { reason: 'ok', done: { kind: 'scan', delivered: true, hold: 'none' } }],
  ['no agent build', { reason: 'no-agent-build' }],
  ['stream ended', { reason: 'stream-ended', port: 4711, events: 12 }],
  [
    'doctor findings',
    { reason: 'doctor-findings', done: { kind: 'doctor', dirs: 1, watched: 1, unwatched: 0, unknown: 0, paused: 3, hold: 'not-ours' } },
  ],
  ['build failed', { reason: 'build-failed', status: 3, owner: 'owner-1' }],
  ['usage', { reason: 'usage', problem: { kind: 'input', text: 'no build command given after --', forBuild: true } }],
  ['config', { reason: 'usage', problem: { kind: 'config', text: 'invalid config in /p/reclazz.config.json: key "timeoutMs"' } }],
  ['continuous', { reason: 'usage', problem: { kind: 'never-ending', argument: '--continuous' } }],
  ['no class files', { reason: 'usage', problem: { kind: 'no-class-files', paths: ['out'] } }],
  ['working directory gone', { reason: 'usage', problem: { kind: 'no-working-dir' } }],
  ['nothing to watch', { reason: 'usage', problem: { kind: 'no-sources', projectDir: '/p' } }],
  ['nested', { reason: 'nested', variable: 'RECLAZZ_SAFE_BUILD_ACTIVE' }],
  ['no agent', { reason: 'no-agent', cwd: '/p', depth: 4, offerNoAgent: true }],
  ['ambiguous', { reason: 'ambiguous-agent', cwd: '/p', portFiles: ['/p/a/.reclazz/agent.port', '/p/b/.reclazz/agent.port'] }],
  [
    'other checkouts',
    { reason: 'ambiguous-agent', cwd: '/p', portFiles: ['/p/a/.reclazz/agent.port', '/p/b/.reclazz/agent.port'], otherCheckouts: true },
  ],
  ['port file missing', { reason: 'bad-port-file', fault: { input: 'file', file: '/p/x.port', problem: 'missing' } }],
  ['port file too large', { reason: 'bad-port-file', fault: { input: 'file', file: '/p/x.port', problem: 'too-large', limit: 64 } }],
  ['port file garbage', { reason: 'bad-port-file', fault: { input: 'file', file: '/p/x.port', problem: 'not-a-number', text: 'abc' } }],
  ['RECLAZZ_PORT', { reason: 'bad-port-file', fault: { input: 'RECLAZZ_PORT', problem: 'out-of-range', text: '70000' } }],
  ['lock busy', { reason: 'lock-busy', lockPath: '/p/.reclazz/build.lock', waitedMs: 30000 }],
  ['stale port', { reason: 'stale-port', place }],
  ['sixth client', { reason: 'handshake', place, failure: 'closed-before-connected', detail: 'closed' }],
  [
    'not CONNECTED',
    { reason: 'handshake', place, failure: 'bad-handshake', detail: '127.0.0.1:4711 did not start with a valid CONNECTED line' },
  ],
  ['old agent', { reason: 'old-agent', port: 4711, need: 'owned builds', evidence: 'connected' }],
  ['unowned receipt', { reason: 'old-agent', port: 4711, need: 'owned builds', evidence: 'unowned-receipt' }],
  ['DOCTOR timeout', { reason: 'agent-not-ready', port: 4711, why: { kind: 'doctor-timeout', agent: '1.4.0', timeoutMs: 5000 } }],
  [
    'DOCTOR timeout, a stopped JVM',
    {
      reason: 'agent-not-ready',
      port: 4711,
      why: { kind: 'doctor-timeout', agent: '1.4.0', timeoutMs: 5000, answered: { pid: '4242', stopped: true } },
    },
  ],
  [
    'DOCTOR timeout, a hung JVM',
    {
      reason: 'agent-not-ready',
      port: 4711,
      why: { kind: 'doctor-timeout', agent: '1.4.0', timeoutMs: 5000, answered: { pid: '4242', stopped: false } },
    },
  ],
  [
    'DOCTOR timeout, a JVM elsewhere',
    {
      reason: 'agent-not-ready',
      port: 4711,
      why: { kind: 'doctor-timeout', agent: '1.4.0', timeoutMs: 5000, answered: { pid: '', stopped: false } },
    },
  ],
  ['no session', { reason: 'agent-not-ready', port: 4711, why: { kind: 'no-session' } }],
  ['ownership not wired yet', { reason: 'agent-not-ready', port: 4711, why: { kind: 'wiring' }, waitedMs: 30000 }],
  ['no owned builds', { reason: 'unsupported', agentVersion: '1.4.0', flag: 'buildOwnershipSupported' }],
  ['no VERIFY', { reason: 'unsupported', agentVersion: '1.4.0', flag: 'verifySupported', offerNoVerify: true }],
  ['hold busy', { reason: 'hold-busy', waitedMs: 30000 }],
  ['legacy hold busy', { reason: 'hold-busy', waitedMs: 30000, legacy: { port: 4711 } }],
  [
    'no started receipt',
    { reason: 'no-receipt', awaited: { kind: 'build-started', owner: 'owner-1', detail: 'no BUILD started receipt within 5000 ms' } },
  ],
  ['no RELOAD_STATE', { reason: 'no-receipt', awaited: { kind: 'reload', action: 'pause', timeoutMs: 5000 } }],
  ['DOCTOR after SCAN', { reason: 'no-receipt', awaited: { kind: 'doctor-after-scan', why: 'none within 5000 ms' } }],
  ['closed during DOCTOR', { reason: 'agent-disconnected', port: 4711, during: { kind: 'doctor' } }],
  ['unexpected receipt', { reason: 'unexpected-receipt', action: 'pause', paused: false }],
  ['lost during build', { reason: 'not-safe', owner: 'owner-1', what: { kind: 'lost-during-build', found: { kind: 'gone' } } }],
  ['ok receipt lost', { reason: 'not-safe', owner: 'owner-1', what: { kind: 'finish', succeeded: true, receipt: 'lost' } }],
  ['not proven', { reason: 'verify-incomplete', applied: 1, total: 3, shortfall: { kind: 'not-proven', timedOut: true } }],
  ['beyond receipts', { reason: 'verify-incomplete', applied: 512, total: 600, shortfall: { kind: 'capacity', capacity: 512 } }],
  ['unreadable', { reason: 'verify-incomplete', applied: 2, total: 2, shortfall: { kind: 'unreadable', unreadable: 1, folders: 0 } }],
  [
    'unreadable folder',
    { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'unreadable', unreadable: 0, folders: 2 }, noneChanged: true },
  ],
  ['no class dirs', { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'no-class-dirs', searchRoot: '/p' } }],
  ['no class files', { reason: 'verify-incomplete', applied: 0, total: 0, shortfall: { kind: 'no-class-files', dirs: 1 } }],
  ['restart required', { reason: 'verify-incomplete', applied: 1, total: 2, shortfall: { kind: 'restart-required', classes: 1 } }],
  ['paused', { reason: 'verify-incomplete', applied: 0, total: 2, shortfall: { kind: 'paused', classes: 2 } }],
  [
    'build left a process running',
    {
      reason: 'verify-incomplete',
      applied: 1,
      total: 1,
      shortfall: { kind: 'detached', processes: [{ pid: 4242, command: 'sh -c sleep 0.2; cp new.class target/classes' }] },
    },
  ],
  [
    'watcher starting, hold left',
    {
      reason: 'verify-incomplete',
      applied: 0,
      total: 0,
      shortfall: { kind: 'watcher-starting', owner: 'o1', waitedMs: 30000, option: '--verify-timeout' },
    },
  ],
  [
    'watcher starting past --wait-for-agent',
    {
      reason: 'verify-incomplete',
      applied: 0,
      total: 0,
      shortfall: { kind: 'watcher-starting', owner: 'o1', waitedMs: 800, option: '--wait-for-agent' },
    },
  ],
  [
    'hold kept after ok',
    {
      reason: 'verify-incomplete',
      applied: 0,
      total: 1,
      shortfall: { kind: 'hold-kept', cause: { kind: 'unreadable-file', file: '/p/target/classes/a/Foo$1.class' }, owner: 'o1' },
    },
  ],
  [
    'hold kept after ok, its scan unfinished',
    {
      reason: 'verify-incomplete',
      applied: 0,
      total: 1,
      shortfall: { kind: 'hold-kept', cause: { kind: 'scan-unfinished' }, owner: 'o1' },
    },
  ],
  [
    'autoCompile, from its options',
    { reason: 'verify-incomplete', applied: 0, total: 2, shortfall: { kind: 'auto-compile', from: 'options' } },
  ],
  [
    'autoCompile, from receipts',
    { reason: 'verify-incomplete', applied: 0, total: 2, shortfall: { kind: 'auto-compile', from: 'receipts' } },
  ],
  [
    'not watched',
    {
      reason: 'verify-incomplete',
      applied: 1,
      total: 3,
      shortfall: {
        kind: 'not-watched',
        classes: 2,
        dirs: ['/p/lib/target/classes'],
        watchDirs: '/p/app/target/classes;/p/lib/target/classes',
      },
    },
  ],
  [
    'not watched, excluded or unseen',
    {
      reason: 'verify-incomplete',
      applied: 0,
      total: 3,
      shortfall: {
        kind: 'not-watched',
        classes: 3,
        dirs: ['/p/lib/target/classes'],
        excludedBy: ['*Test.class'],
        unseen: ['/p/x/classes'],
      },
    },
  ],
  [
    'checked not proven',
    { reason: 'verify-incomplete', applied: 1, total: 3, unchanged: 1, checked: 2, shortfall: { kind: 'not-proven', timedOut: false } },
  ],
  ['interrupted', { reason: 'interrupted', signal: 'SIGTERM', at: 'build', holdOwner: 'owner-1' }],
  [
    'state error',
    { reason: 'state-error', problem: 'cannot write /p/.reclazz/owner.json (EACCES)', dir: '/p/.reclazz', file: 'owner.json' },
  ],
  ['internal error', { reason: 'internal-error', problem: 'boom' }],
  ['not executable', { reason: 'command-not-executable', path: '/p/build.sh' }],
  ['not found', { reason: 'command-not-found', file: 'mvn', tool: 'mvn' }],
];
