/**
 * The words of the outcomes that come from talking to the agent: reaching it, its handshake
 * and DOCTOR, the hold, the receipts, and what a reconnect found after a loss.
 */
import type { AgentAfterLoss, PortPlace } from '../outcome/facts.js';
import type { OutcomeOf } from '../outcome/outcome.js';
import type { Words } from '../outcome/result.js';

/** The reasons whose words are here. */
export type AgentOutcome = OutcomeOf<
  | 'stale-port'
  | 'handshake'
  | 'old-agent'
  | 'agent-not-ready'
  | 'unsupported'
  | 'hold-busy'
  | 'no-receipt'
  | 'agent-disconnected'
  | 'unexpected-receipt'
  | 'not-safe'
>;

/** The words for an outcome of talking to the agent. */
export function describeAgentOutcome(outcome: AgentOutcome): Words {
  switch (outcome.reason) {
    case 'stale-port':
      return describeStalePort(outcome);
    case 'handshake':
      return describeHandshake(outcome);
    case 'old-agent':
      return describeOldAgent(outcome);
    case 'agent-not-ready':
      return describeNotReady(outcome);
    case 'unsupported':
      return describeUnsupported(outcome);
    case 'hold-busy':
      if (outcome.legacy !== undefined) {
        return {
          message: `an unowned (legacy) build hold is still held after ${outcome.waitedMs} ms: a client that names no owner took it; the build did not run`,
          hint: `let that build (an older IDE plugin or wrapper) finish, or raise --wait <ms>; if it is gone, an unowned BUILD ok releases the hold once the output is good (exec 3<>/dev/tcp/127.0.0.1/${outcome.legacy.port}; printf 'BUILD ok\\n' >&3), and so does restarting the app`,
        };
      }
      return {
        message: `another owner still holds the agent's build hold after ${outcome.waitedMs} ms; the build did not run`,
        hint: 'let that build (IDE or terminal) finish, raise --wait <ms>, or restart the app if its owner is gone',
      };
    case 'no-receipt':
      return describeNoReceipt(outcome);
    case 'agent-disconnected':
      return describeDisconnected(outcome);
    case 'unexpected-receipt':
      return {
        message: `the agent answered RELOAD ${outcome.action} with paused=${outcome.paused}: automatic reload is ${outcome.paused ? 'still paused' : 'not paused'}`,
        hint: 'check with `reclazz-build status`',
      };
    case 'not-safe':
      return describeNotSafe(outcome);
  }
}

/** `port N (source)`, or `port N from <port file>`. */
function where(place: PortPlace): string {
  return place.portFile === undefined ? `port ${place.port} (${place.source})` : `port ${place.port} from ${place.portFile}`;
}

function describeHandshake(outcome: OutcomeOf<'handshake'>): Words {
  switch (outcome.failure) {
    case 'closed-before-connected':
      return {
        message: `the agent on ${where(outcome.place)} closed the connection before CONNECTED${outcome.waitedMs === undefined ? '' : `, on every try for ${outcome.waitedMs} ms (--wait)`}`,
        hint: 'it already serves 5 clients (close an IDE window or an `events` follower, or raise --wait <ms>) or this port is not the agent',
      };
    case 'timeout':
      // The agent sends CONNECTED from the thread that accepts (StatusServer.acceptClients): a
      // connection left without it, or not accepted, is a JVM that runs none of its threads.
      return {
        message: `${outcome.detail} (${where(outcome.place)})`,
        hint: "is the app's JVM stopped (Ctrl-Z, SIGSTOP, a debugger) or hung, or is this port another program? continue or restart the app and try again, or raise --timeout",
      };
    default:
      return { message: `${outcome.detail} (${where(outcome.place)})`, hint: 'check that the port belongs to the reclazz agent' };
  }
}

function describeOldAgent(outcome: OutcomeOf<'old-agent'>): Words {
  if (outcome.evidence === 'unowned-receipt') {
    return {
      message: 'the agent acknowledged BUILD started without the owner suffix: it is too old for owned builds; the build did not run',
      hint: 'update the reclazz agent in the app; an unowned hold it may have taken is released by its next successful BUILD ok, or by restarting the app',
    };
  }
  return {
    message: `the agent on port ${outcome.port} is too old for ${outcome.need} (its CONNECTED line has no agent version); nothing was sent`,
    hint: `update the reclazz agent in the app${outcome.need === 'DOCTOR' ? '; `reclazz-build events` still works with it' : ''}`,
  };
}

function describeNotReady(outcome: OutcomeOf<'agent-not-ready'>): Words {
  const why = outcome.why;
  switch (why.kind) {
    case 'doctor-timeout':
      if (why.answered !== undefined) return describeNotAnswering(outcome.port, why.timeoutMs, why.answered);
      return {
        message: `the agent ${why.agent} on port ${outcome.port} accepted the connection but did not answer DOCTOR within ${why.timeoutMs} ms${waited(outcome.waitedMs)}: it is still starting, too old, or its JVM is stopped or hung`,
        hint: 'wait until the app has started and try again, or raise --timeout or --wait; an app that never answers may be stopped (Ctrl-Z, a debugger) or hung',
      };
    case 'doctor-unavailable':
      return {
        message: `the agent on port ${outcome.port} cannot describe itself yet${waited(outcome.waitedMs)} (DOCTOR: ${why.detail})`,
        hint: 'wait until the app has started and try again',
      };
    case 'no-session':
      return {
        message: `the agent reports no session id yet${waited(outcome.waitedMs)}: it is still starting`,
        hint: 'try again in a moment',
      };
    case 'starting':
      return {
        message: `the agent on port ${outcome.port} is still starting${waited(outcome.waitedMs)}: DOCTOR shows no session, its watcher unavailable and nothing supported`,
        hint: 'let the app finish starting, or raise --wait <ms>',
      };
    case 'wiring':
      return {
        message: `the agent on port ${outcome.port} is still starting${waited(outcome.waitedMs)}: DOCTOR shows its session and VERIFY, but its build hold is not wired yet (owned builds unsupported, hold and watcher unavailable)`,
        hint: 'let the app finish starting, or raise --wait <ms>',
      };
  }
}

/**
 * DOCTOR without a reply from an agent that answered it before on the same connection: not an
 * agent starting, but a JVM stopped (its process state says so) or hung.
 */
function describeNotAnswering(port: number, timeoutMs: number, answered: { pid: string; stopped: boolean }): Words {
  const pid = /^\d+$/.test(answered.pid) ? answered.pid : undefined;
  const jvm = pid === undefined ? 'its JVM' : `its JVM (pid ${pid})`;
  const base = `the agent on port ${port} does not answer: no reply to DOCTOR within ${timeoutMs} ms, where it answered before`;
  if (answered.stopped)
    return {
      message: `${base}; ${jvm} is stopped`,
      hint: `continue it (kill -CONT ${answered.pid}, fg in its terminal, or resume it in its debugger), then build again`,
    };
  return {
    message: `${base}: is ${jvm} stopped or hung?`,
    hint: `check the app${pid === undefined ? '' : ` (a thread dump: jstack ${pid})`}; once it answers, build again, or raise --timeout`,
  };
}

/** The clause for how long a refusal was waited out, when it was. */
function waited(waitedMs: number | undefined): string {
  return waitedMs === undefined ? '' : ` after waiting ${waitedMs} ms`;
}

function describeUnsupported(outcome: OutcomeOf<'unsupported'>): Words {
  switch (outcome.flag) {
    case 'buildOwnershipSupported':
      return {
        message: `the agent ${outcome.agentVersion} does not support owned build holds yet (buildOwnershipSupported=false)`,
        hint: 'if the app is still starting, try again in a moment; otherwise update the agent',
      };
    case 'verifySupported':
      return {
        message: `the agent ${outcome.agentVersion} cannot VERIFY classes (verifySupported=false), so nothing could be proven live`,
        hint: outcome.offerNoVerify
          ? 'try again once the app has started, or pass --no-verify to build under the hold only'
          : 'try again once the app has started, or update the agent',
      };
    case 'scanSupported':
      return {
        message: 'the agent read SCAN but reports scanSupported=false: its SCAN handler is not wired yet, so nothing was scanned',
        hint: 'wait until the app has started and try again',
      };
  }
}

export function reloadUncertain(action: 'pause' | 'resume' | 'status'): string {
  return action === 'status' ? 'the reload state is unknown' : `uncertain whether the agent ${action === 'pause' ? 'paused' : 'resumed'}`;
}

function reloadHint(action: 'pause' | 'resume' | 'status'): string {
  return action === 'status'
    ? 'the agent may still be starting; try again, or raise --timeout'
    : 'check with `reclazz-build status` before retrying';
}

function startedLost(owner: string, detail: string): Words {
  return {
    message: `the agent did not acknowledge BUILD started (${detail}); the build did not run`,
    hint: `the hold may have been taken by owner ${owner}; the next run here reuses that owner and recovers it`,
  };
}

function describeNoReceipt(outcome: OutcomeOf<'no-receipt'>): Words {
  const awaited = outcome.awaited;
  switch (awaited.kind) {
    case 'build-started':
      return startedLost(awaited.owner, awaited.detail);
    case 'reload':
      return {
        message: `no RELOAD_STATE receipt for RELOAD ${awaited.action} within ${awaited.timeoutMs} ms: ${reloadUncertain(awaited.action)}`,
        hint: reloadHint(awaited.action),
      };
    case 'doctor-after-scan':
      return {
        message: `SCAN sent, but the DOCTOR sent after it got no answer (${awaited.why}): uncertain whether the agent read it`,
        hint: 'the agent may still be starting; check with `reclazz-build doctor`, then send SCAN again',
      };
  }
}

function describeDisconnected(outcome: OutcomeOf<'agent-disconnected'>): Words {
  const during = outcome.during;
  switch (during.kind) {
    case 'doctor':
      return {
        message: `the agent on port ${outcome.port} closed the connection during DOCTOR`,
        hint: 'check that the app is still running',
      };
    case 'build-started':
      return startedLost(during.owner, during.detail);
    case 'reload':
      return {
        message: `the agent closed the connection before the RELOAD_STATE receipt for RELOAD ${during.action}: ${reloadUncertain(during.action)}`,
        hint: reloadHint(during.action),
      };
    case 'watch':
      return {
        message: `the agent on port ${outcome.port} went away during the watch (--exit-on-agent-loss)`,
        hint: 'start the app again, then the watch; without --exit-on-agent-loss the watch waits for the agent and reconnects',
      };
  }
}

export function describeAgentAfterLoss(found: AgentAfterLoss): string {
  switch (found.kind) {
    case 'gone':
      return 'the agent is not answering any more (the app stopped, is restarting, or hangs)';
    case 'same-session':
      return 'the agent is back with the same session (the app did not restart)';
    case 'restarted':
      return `the agent is back with a new session ${found.sessionId}: the app restarted and loads classes fresh from disk`;
  }
}

function describeNotSafe(outcome: OutcomeOf<'not-safe'>): Words {
  const { owner, what } = outcome;
  if (what.kind === 'lost-during-build') {
    const found = what.found;
    return {
      message: `the agent closed the connection during the build; ${describeAgentAfterLoss(found)}. The reload state is unknown: not completed safely`,
      hint:
        found.kind === 'restarted'
          ? 'the app restarted, so its hold is gone: check the app, and run again to rebuild under a hold'
          : found.kind === 'same-session'
            ? `the agent still holds this build for owner ${owner}: run again here to rebuild and release it`
            : `check the app; when it is back, run again here (owner ${owner} is reused if the app did not restart)`,
    };
  }
  const state = what.succeeded ? 'ok' : 'failed';
  const closed = what.found === undefined ? '' : ` (the connection closed; ${describeAgentAfterLoss(what.found)})`;
  return {
    message: `the build ${what.succeeded ? 'succeeded' : 'failed'} but the BUILD ${state} receipt was ${what.receipt}${closed}: not completed safely; the reload state is unknown`,
    hint:
      what.found?.kind === 'restarted'
        ? 'the app restarted: check it, and run again to rebuild under a hold'
        : `run again here to recover the hold with owner ${owner}, then check the app`,
  };
}

/** Nothing listens on the port, or another app's agent does; names every other port file found and the next step. */
function describeStalePort(outcome: OutcomeOf<'stale-port'>): Words {
  const { place, foreign, testJvm, portFiles } = outcome;
  const others =
    portFiles === undefined || portFiles.length === 0
      ? ''
      : `; other port files here: ${portFiles.join(', ')} (pick one with --port-file <file>)`;
  if (testJvm !== undefined)
    return {
      message: `the agent on ${where(place)} runs in a test JVM (${testJvm.runner}, pid ${testJvm.pid}), not in the app: reclazz-build never holds or asks it, so the build did not run`,
      hint: `a test JVM's agent overwrites the app's port file and deletes it when the tests end, while the app's agent keeps listening: let the tests end and restart the app (or pass its --port); keep test JVMs away from the app's port file (the Maven plugin's reclazz.propertyName, or portFile= in its agentArgs)${others}`,
    };
  if (foreign !== undefined) {
    const watched = foreign.watched.length === 0 ? 'no directory' : foreign.watched.join(', ');
    const file = place.portFile === undefined ? 'the port' : `the port file ${place.portFile}`;
    return {
      message: `the agent on ${where(place)} is another app's: pid ${foreign.pid}, working directory ${foreign.workingDirectory}, watching ${watched}; none of it is this project's, so the build did not run`,
      hint: `${file} is stale (this project's app stopped and another app's agent now has the port): start this project's app with the agent, or delete ${place.portFile ?? 'the port setting'}; if the app runs in a container, map its paths with --path-map <agent path>=<local path>${others}`,
    };
  }
  return {
    message:
      outcome.waitedMs === undefined
        ? `nothing is listening on ${where(place)}: the agent is not running`
        : `nothing answered on ${where(place)} within ${outcome.waitedMs} ms (--wait-for-agent): the agent did not start listening`,
    hint:
      (place.portFile === undefined
        ? 'check the port'
        : `the port file is stale (left by a killed app): start the app with the agent, or delete ${place.portFile}`) + others,
  };
}
