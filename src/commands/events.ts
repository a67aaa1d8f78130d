/**
 * `reclazz-build events`: follows the agent's event stream (protocol.md "The stream") like
 * `tail -f`, until the caller's signal aborts or the agent closes the connection. Works with
 * agents of any age: it sends nothing.
 */
import { requestFailure } from '../agent/connection.js';
import type { AgentTarget } from '../agent/handshake.js';
import { closeSession } from '../session/options.js';
import { openFor } from './doctor.js';
import type { AgentEvent, ConnectedEvent } from '../agent/protocol.js';
import { signalOf } from '../outcome/exit.js';
import type { AgentEndpoint } from '../outcome/facts.js';
import type { Outcome } from '../outcome/outcome.js';
import { buildResult, type EventsResult } from '../outcome/result.js';

/** Options for {@link followEvents}. */
export interface FollowOptions extends Omit<AgentTarget, 'onEvent'> {
  /** The CONNECTED line, once. */
  onConnected?: (connected: ConnectedEvent, endpoint: AgentEndpoint) => void;
  /** Every later event, in arrival order (HEARTBEAT included). */
  onEvent: (event: AgentEvent) => void;
}

/** Follows the stream until `signal` aborts (exit 130/143) or the agent closes it (exit 0). */
export async function followEvents(options: FollowOptions): Promise<EventsResult> {
  const started = performance.now();
  let events = 0;
  const end = (outcome: Outcome, endpoint?: AgentEndpoint): EventsResult =>
    buildResult(
      outcome,
      { action: 'events' as const, events, ...(endpoint === undefined ? {} : { endpoint }) },
      performance.now() - started,
    );
  // Lines that arrive with CONNECTED are dispatched before open() returns: keep them until
  // the CONNECTED line has been handed on, so the order stays the agent's.
  let early: AgentEvent[] | undefined = [];
  const deliver = (event: AgentEvent): void => {
    events += 1;
    options.onEvent(event);
  };
  const opening = await openFor({
    ...options,
    onEvent: (event) => (early === undefined ? deliver(event as AgentEvent) : early.push(event as AgentEvent)),
  });
  if (opening.kind === 'refused') return end(opening.outcome);
  const { session } = opening;
  const { connection, endpoint } = session;
  options.onConnected?.(session.open.connected, endpoint);
  const queued = early;
  early = undefined;
  queued.forEach(deliver);
  try {
    await connection.waitFor(() => false, 'the end of the stream', Number.POSITIVE_INFINITY, options.signal);
  } catch (error) {
    if (requestFailure(error, options.signal) === 'aborted')
      return end({ reason: 'interrupted', signal: signalOf(options.signal), at: 'following', events }, endpoint);
  } finally {
    await closeSession(session);
  }
  return end({ reason: 'stream-ended', port: endpoint.port, events }, endpoint);
}
