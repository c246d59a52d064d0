// A pulse's timeline: its events (the /v1 stream's data, or a trace file's entries turned
// into the same events) laid out as spans, one row each, in the order they happened.
// Pure, for `node --test`.
//
// SEA's events carry durations, not clock times (a node's end its `duration_s`, a model call
// its `latency_s`, a tool call its `duration_s`): the layout keeps a clock of its own that
// the calls advance, and a node's span runs from its start to the later of the clock and its
// start plus its own duration. A node spans the nodes and calls made inside it (a subplay's
// callee, an exec's playbook): they are drawn one level deeper.

/** Event kinds drawn as instants (a mark on the row, no width). */
export const MARKS = new Set(['memory_write', 'ref_resolved', 'plan_event', 'tool_settled',
  'approval_request', 'spoken', 'error', 'warning', 'subagent_start', 'subagent_end',
  'actions_planned', 'action_start', 'action_end']);

const IGNORED = new Set(['metadata', 'token', 'values', 'end', 'pulse_start', 'log_truncated']);

function labelOf(event) {
  const at = event.kind === 'llm_call' ? event.record || {} : event;
  const where = [at.playbook, at.node].filter(Boolean).join('.');
  switch (event.kind) {
    case 'llm_call': return `model ${event.record?.model ?? ''} ${where}`.trim();
    case 'tool_call': return `tool ${event.tool} ${where}`;
    case 'memory_write': return `memory ${event.role} ${where}`.trim();
    case 'ref_resolved': return `ref:${event.ref} → ${event.parameter}`;
    case 'plan_event': return `plan ${event.event} (${event.status})`;
    case 'tool_settled': return `settled ${event.tool} ${event.asked ? '(asked)' : ''}`.trim();
    case 'approval_request': return `approval asked at ${where}`;
    case 'spoken': return `spoken ${where}`;
    case 'subagent_start': return `subagent ${event.callee} started`;
    case 'subagent_end': return `subagent ${event.callee} ${event.status}`;
    case 'actions_planned': return `planned ${event.actions?.length ?? 0} actions ${where}`;
    case 'action_start': return `action ${event.action_id} ${event.tool}`;
    case 'action_end': return `action ${event.action_id} ${event.status}`;
    default: return `${event.kind} ${where}`.trim();
  }
}

/**
 * The spans of `events`: {spans, total, totals}. A span is {id, kind, label, level, start,
 * end, event, outcome?, open?}: `kind` `node`, `llm`, `tool` or the event's kind for an
 * instant; `level` its nesting; `open` a node that had not ended (running, or waiting).
 */
export function layout(events) {
  const spans = [];
  const stack = [];
  let clock = 0;
  let ended = null;
  const totals = { nodes: 0, llm: 0, tools: 0, tokens_in: 0, tokens_out: 0, cost: 0 };
  const close = (open, end, outcome) => {
    open.span.end = end;
    if (outcome) open.span.outcome = outcome;
    delete open.span.open;
  };
  for (const event of events) {
    if (!event || typeof event !== 'object' || IGNORED.has(event.kind)) continue;
    const id = spans.length;
    if (event.kind === 'node_start') {
      while (stack.length && stack[stack.length - 1].depth >= (event.depth ?? 0)) {
        close(stack.pop(), clock); // a trace has no node ends: the next node at its depth ends it
      }
      const span = { id, kind: 'node', label: `${event.playbook}.${event.node}`, type: event.node_type,
        level: stack.length, start: clock, end: clock, open: true, event };
      spans.push(span);
      stack.push({ span, depth: event.depth ?? 0, key: `${event.playbook}.${event.node}` });
      totals.nodes += 1;
    } else if (event.kind === 'node_end') {
      const at = stack.map((open) => open.key).lastIndexOf(`${event.playbook}.${event.node}`);
      if (at < 0) continue;
      while (stack.length > at + 1) close(stack.pop(), clock);
      const open = stack.pop();
      clock = Math.max(clock, open.span.start + (event.duration_s || 0));
      close(open, clock, event.outcome);
      open.span.duration = event.duration_s;
    } else if (event.kind === 'llm_call') {
      const record = event.record || {};
      const took = Math.max(0, record.latency_s || 0);
      spans.push({ id, kind: 'llm', label: labelOf(event), level: stack.length, start: clock,
        end: clock + took, outcome: record.outcome, event });
      clock += took;
      totals.llm += 1;
      totals.tokens_in += record.tokens_in || 0;
      totals.tokens_out += record.tokens_out || 0;
      totals.cost += record.cost || 0;
    } else if (event.kind === 'tool_call') {
      const took = Math.max(0, event.duration_s || 0);
      spans.push({ id, kind: 'tool', label: labelOf(event), level: stack.length, start: clock,
        end: clock + took, outcome: event.ok === false ? 'error' : 'ok', event });
      clock += took;
      totals.tools += 1;
    } else if (event.kind === 'pulse_end') {
      ended = event;
    } else {
      spans.push({ id, kind: event.kind, label: labelOf(event), level: stack.length, start: clock,
        end: clock, event, mark: true });
    }
  }
  if (ended && ended.status !== 'waiting') {
    clock = Math.max(clock, ended.duration_s || 0);
    while (stack.length) close(stack.pop(), clock);
  } else {
    for (const open of stack) open.span.end = clock; // still running, or waiting for a person
  }
  return { spans, total: clock, totals, status: ended ? ended.status : null };
}

/**
 * The events of a trace file (`schemas/trace.schema.json`), in the order they happened, so
 * a downloaded trace is drawn as a live pulse is. A file of {events: [...]} (what the
 * studio saves when the server kept no trace) gives its events.
 */
export function eventsOfTrace(trace) {
  if (!trace || typeof trace !== 'object') throw new Error('not a trace: a JSON object was expected');
  if (Array.isArray(trace.events)) return trace.events;
  if (trace.version !== 1 || !Array.isArray(trace.nodes)) {
    throw new Error('not a SEA trace: it has no "version": 1 and "nodes" (sea run --record writes one)');
  }
  const found = [];
  const add = (list, kind, shape) => (list || []).forEach((entry) => found.push({ seq: entry.seq, event: { kind, ...shape(entry) } }));
  add(trace.nodes, 'node_start', (n) => ({ playbook: n.playbook, node: n.node, node_type: n.type, depth: n.depth }));
  add(trace.llm_calls, 'llm_call', (c) => ({ playbook: c.playbook, node: c.node, record: c }));
  add(trace.tool_calls, 'tool_call', (t) => ({ ...t }));
  add(trace.memory_writes, 'memory_write', (w) => ({ ...w }));
  add(trace.plan_events, 'plan_event', (p) => ({ ...p }));
  add(trace.settled, 'tool_settled', (s) => ({ ...s }));
  add(trace.subagents, 'subagent_end', (s) => ({ ...s }));
  add(trace.plans, 'actions_planned', (p) => ({ ...p }));
  for (const action of trace.actions || []) {
    for (const ref of action.normalized || []) {
      found.push({ seq: action.seq + 0.5, event: { kind: 'ref_resolved', playbook: action.playbook, node: action.node,
        action_id: action.action_id, ...ref } });
    }
  }
  found.sort((a, b) => a.seq - b.seq);
  const events = found.map((entry) => entry.event);
  events.push({ kind: 'pulse_end', status: trace.status, duration_s: trace.duration_s, error: trace.error });
  return events;
}

/** How many rows are drawn a frame. */
export const CHUNK = 250;

/** The next size of a list drawn in chunks: `shown` grown by `step`, at most `total`. */
export function nextChunk(shown, total, step = CHUNK) {
  return Math.min(total, shown + step);
}

/** What a chunk of rows is drawn from (equal keys: nothing to redraw). */
export function chunkKey(spans, total) {
  let key = `${total}|${spans.length}`;
  for (const span of spans) key += `|${span.id}:${span.start}:${span.end}:${span.outcome || ''}:${span.open ? 1 : 0}`;
  return key;
}
