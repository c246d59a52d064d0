// The run console's state from a pulse's native events (`/v1/pulses/{id}/events`), one at a
// time: what the graph shows (each node running, done, failed or waiting; the callees
// opened), the reply as it streams, the usage so far, an approval waited for, and the
// events for the side panel. Pure: no DOM, so `node --test` runs it.
//
// The events SEA's native stream sends (sea/engine/events.py; the hub adds `metadata` first
// and `end` last): metadata, pulse_start, pulse_end, node_start, node_end, token, spoken,
// memory_write, tool_call, tool_settled, llm_call, warning, error, approval_request,
// plan_event, subagent_start, subagent_end, actions_planned, action_start, ref_resolved,
// action_end, end.

export const KINDS = ['pulse_start', 'pulse_end', 'node_start', 'node_end', 'token', 'spoken',
  'memory_write', 'tool_call', 'tool_settled', 'llm_call', 'warning', 'error',
  'approval_request', 'plan_event', 'subagent_start', 'subagent_end', 'actions_planned',
  'action_start', 'ref_resolved', 'action_end', 'metadata', 'end'];

/** The state before any event. */
export function initial(root = null) {
  return {
    pulseId: null, root, input: '', status: 'idle', lastId: null, states: {}, running: [],
    callees: [], spoken: [], streaming: '', events: [], approval: null, error: null,
    usage: { calls: 0, tokensIn: 0, tokensOut: 0, cost: 0, nodes: 0, tools: 0, seconds: 0 },
  };
}

/** A node's id in the drawing: the root playbook's nodes by their id, a callee's as
 *  `callee.node` (`sub_speak.compose`). */
export function graphId(state, playbook, node) {
  if (!playbook || playbook === state.root) return node;
  return `${playbook}.${node}`;
}

/** One line saying what an event is, for the side panel. */
export function summary(kind, data) {
  const d = data || {};
  const where = d.node ? `${d.playbook ? `${d.playbook}.` : ''}${d.node}` : '';
  switch (kind) {
    case 'pulse_start': return `${d.playbook}: “${d.input}”`;
    case 'pulse_end': return `${d.status}${d.error ? `: ${d.error.message || d.error.code}` : ''}`;
    case 'node_start': return `${where} (${d.node_type})`;
    case 'node_end': return `${where} ${d.outcome}${typeof d.duration_s === 'number' ? ` in ${d.duration_s.toFixed(2)} s` : ''}`;
    case 'tool_call': return `${where} ${d.tool} ${d.ok ? 'ok' : 'failed'}`;
    case 'llm_call': {
      const r = d.record || {};
      return `${r.playbook}.${r.node} ${r.model}: ${r.tokens_in ?? 0} in, ${r.tokens_out ?? 0} out`;
    }
    case 'memory_write': return `${d.role}: ${String(d.content || '').slice(0, 60)}`;
    case 'spoken': return String(d.text || '').slice(0, 80);
    case 'approval_request': return `${where} waits for a person`;
    case 'warning': return `${d.code}: ${d.message}`;
    case 'error': return `${where} ${(d.error && (d.error.code || d.error.message)) || ''}${d.routed ? ' (routed)' : ''}`;
    case 'end': return d.status || '';
    default: return where;
  }
}

function setNode(state, id, value) {
  return { ...state.states, [id]: value };
}

/** The state after one event ({id, event, data} as the SSE reader gives it, data parsed). */
export function reduce(state, message) {
  const kind = message.event;
  const data = message.data && typeof message.data === 'object' ? message.data : {};
  const next = { ...state, lastId: message.id ?? state.lastId };
  if (kind !== 'token') {
    next.events = [...state.events, { id: message.id, kind, data, summary: summary(kind, data) }];
  }
  switch (kind) {
    case 'metadata':
      next.pulseId = data.pulse_id || state.pulseId;
      if (state.status === 'idle') next.status = 'starting';
      break;
    case 'pulse_start':
      next.pulseId = data.pulse_id || state.pulseId;
      next.root = state.root || data.playbook;
      next.input = state.input || data.input || '';
      next.status = 'running';
      next.approval = null;
      break;
    case 'node_start': {
      const root = next.root || data.playbook;
      next.root = root;
      const id = graphId(next, data.playbook, data.node);
      next.states = setNode(next, id, 'running');
      next.running = [...state.running.filter((item) => item !== id), id];
      if (data.playbook && data.playbook !== root && !state.callees.includes(data.playbook)) {
        next.callees = [...state.callees, data.playbook];
      }
      break;
    }
    case 'node_end': {
      const id = graphId(next, data.playbook, data.node);
      next.states = setNode(next, id, data.outcome === 'ok' || !data.outcome ? 'done' : 'failed');
      next.running = state.running.filter((item) => item !== id);
      next.usage = { ...state.usage, nodes: state.usage.nodes + 1 };
      break;
    }
    case 'error': {
      if (data.node && !data.routed) next.states = setNode(next, graphId(next, data.playbook, data.node), 'failed');
      break;
    }
    case 'token':
      next.streaming = state.streaming + (data.text || '');
      break;
    case 'spoken':
      next.spoken = [...state.spoken, data.text || ''];
      next.streaming = '';
      break;
    case 'tool_call':
      next.usage = { ...state.usage, tools: state.usage.tools + 1 };
      break;
    case 'llm_call': {
      const record = data.record || {};
      next.usage = { ...state.usage, calls: state.usage.calls + 1,
        tokensIn: state.usage.tokensIn + (record.tokens_in || 0),
        tokensOut: state.usage.tokensOut + (record.tokens_out || 0),
        cost: state.usage.cost + (record.cost || 0) };
      break;
    }
    case 'approval_request': {
      next.approval = { request: data.request || {}, playbook: data.playbook, node: data.node };
      if (data.node) next.states = setNode(next, graphId(next, data.playbook, data.node), 'waiting');
      break;
    }
    case 'pulse_end':
      next.status = data.status || 'ok';
      next.error = data.error || null;
      next.usage = { ...state.usage, seconds: typeof data.duration_s === 'number' ? data.duration_s : state.usage.seconds };
      if (data.status !== 'waiting') next.approval = null;
      break;
    case 'end':
      if (['idle', 'starting', 'running'].includes(next.status)) next.status = data.status || 'ended';
      if (data.error && !next.error) next.error = data.error;
      if (next.status !== 'waiting') {
        // Whatever still runs when the pulse ended did not finish.
        const states = { ...next.states };
        for (const id of next.running) states[id] = next.status === 'ok' ? 'done' : 'failed';
        next.states = states;
        next.running = [];
      }
      break;
    default:
      break;
  }
  return next;
}

/** The pulse is over (ended, failed, cancelled) or waits for a person. */
export function settled(state) {
  return !['idle', 'starting', 'running'].includes(state.status);
}

/** The events the side panel shows for a kind filter ('' = all), newest last, at most `limit`. */
export function visible(events, filter, limit = 400) {
  const chosen = filter ? events.filter((event) => event.kind === filter) : events;
  return chosen.length > limit ? chosen.slice(chosen.length - limit) : chosen;
}
