// The timeline layout (sea/serve/studio/static/timeline.js): events -> spans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHUNK, chunkKey, eventsOfTrace, layout, nextChunk } from '../../../sea/serve/studio/static/timeline.js';

const start = (playbook, node, depth = 0, type = 'llm') => ({ kind: 'node_start', playbook, node, node_type: type, depth });
const end = (playbook, node, duration, depth = 0, outcome = 'ok') => ({ kind: 'node_end', playbook, node, node_type: 'llm', depth, duration_s: duration, outcome });
const llm = (playbook, node, latency, tokens = [10, 5], cost = 0.25) => ({ kind: 'llm_call', record: {
  playbook, node, model: 'm', latency_s: latency, tokens_in: tokens[0], tokens_out: tokens[1], cost, outcome: 'ok',
  messages: [{ role: 'user', content: 'hi' }], response: 'yo' } });

test('a node spans the calls made in it; calls advance the clock', () => {
  const { spans, total, totals } = layout([
    { kind: 'metadata', run_id: 'r' }, { kind: 'pulse_start' },
    start('chat', 'look', 0, 'tool'),
    { kind: 'tool_call', playbook: 'chat', node: 'look', tool: 'memory_recent', args: { limit: 1 }, ok: true, result: [], duration_s: 0.5 },
    end('chat', 'look', 0.75),
    start('chat', 'reply'), { kind: 'token', text: 'x' }, llm('chat', 'reply', 1.0),
    { kind: 'memory_write', playbook: 'chat', node: 'reply', role: 'assistant', content: 'yo', tags: [] },
    end('chat', 'reply', 1.25),
    { kind: 'pulse_end', status: 'ok', duration_s: 2.5 },
  ]);
  assert.deepEqual(spans.map((s) => [s.kind, s.level, s.start, s.end]), [
    ['node', 0, 0, 0.75], ['tool', 1, 0, 0.5], ['node', 0, 0.75, 2], ['llm', 1, 0.75, 1.75],
    ['memory_write', 1, 1.75, 1.75]]);
  assert.equal(total, 2.5);
  assert.deepEqual(totals, { nodes: 2, llm: 1, tools: 1, tokens_in: 10, tokens_out: 5, cost: 0.25 });
  assert.equal(spans[0].outcome, 'ok');
  assert.equal(spans[4].mark, true);
});

test('a subplay holds its callee one level deeper', () => {
  const { spans } = layout([
    start('meta', 'speak', 0, 'subplay'), start('sub_speak', 'compose', 1), llm('sub_speak', 'compose', 2),
    end('sub_speak', 'compose', 2, 1), end('meta', 'speak', 2.5),
  ]);
  assert.deepEqual(spans.map((s) => [s.label, s.level, s.start, s.end]), [
    ['meta.speak', 0, 0, 2.5], ['sub_speak.compose', 1, 0, 2], ['model m sub_speak.compose', 2, 0, 2]]);
});

test('a pulse that waits leaves its node open; an error outcome is kept', () => {
  const waiting = layout([start('asking', 'look', 0, 'tool'),
    { kind: 'approval_request', playbook: 'asking', node: 'look', request: { tool: 'memory_recent' } },
    { kind: 'pulse_end', status: 'waiting', duration_s: 0.1 }]);
  assert.equal(waiting.status, 'waiting');
  assert.equal(waiting.spans[0].open, true);
  assert.equal(waiting.spans[1].label, 'approval asked at asking.look');
  const failed = layout([start('p', 'a'), end('p', 'a', 0.3, 0, 'failed')]);
  assert.equal(failed.spans[0].outcome, 'failed');
  assert.equal(failed.spans[0].open, undefined);
});

test('a trace file becomes the same events, in seq order', () => {
  const trace = { version: 1, status: 'ok', duration_s: 3, error: null,
    nodes: [{ seq: 1, playbook: 'p', node: 'a', type: 'tool', depth: 0 }, { seq: 4, playbook: 'p', node: 'b', type: 'llm', depth: 0 }],
    llm_calls: [{ seq: 5, playbook: 'p', node: 'b', model: 'm', latency_s: 1, tokens_in: 3, tokens_out: 2, cost: 0, outcome: 'ok' }],
    tool_calls: [{ seq: 2, playbook: 'p', node: 'a', tool: 't', args: {}, ok: true, result: 1 }],
    memory_writes: [{ seq: 6, playbook: 'p', node: 'b', role: 'assistant', content: 'x', tags: [] }],
    actions: [{ seq: 3, playbook: 'p', node: 'a', action_id: 'x', tool: 't', normalized: [{ parameter: 'q', ref: 'y', rule: 'string.json', from_type: 'object', to_type: 'string' }] }],
  };
  const events = eventsOfTrace(trace);
  assert.deepEqual(events.map((e) => e.kind), ['node_start', 'tool_call', 'ref_resolved', 'node_start', 'llm_call', 'memory_write', 'pulse_end']);
  const { spans, total } = layout(events);
  assert.deepEqual(spans.map((s) => [s.kind, s.level]), [['node', 0], ['tool', 1], ['ref_resolved', 1], ['node', 0], ['llm', 1], ['memory_write', 1]]);
  assert.equal(spans[0].end, 0); // ended by the next node at its depth
  assert.equal(total, 3);
  assert.deepEqual(eventsOfTrace({ events: [{ kind: 'x' }] }), [{ kind: 'x' }]);
  assert.throws(() => eventsOfTrace({ nodes: 'no' }), /not a SEA trace/);
  assert.throws(() => eventsOfTrace(null), /JSON object/);
});

test('ten thousand events lay out, and are drawn in chunks redrawn only when they change', () => {
  const events = [];
  for (let i = 0; i < 5000; i += 1) events.push(start('p', `n${i}`), end('p', `n${i}`, 0.001));
  const { spans } = layout(events);
  assert.equal(spans.length, 5000);
  assert.equal(nextChunk(0, 5000), CHUNK);
  assert.equal(nextChunk(4900, 5000), 5000);
  const first = spans.slice(0, CHUNK);
  assert.equal(chunkKey(first, 5), chunkKey(layout(events).spans.slice(0, CHUNK), 5)); // nothing to redraw
  assert.notEqual(chunkKey(first, 5), chunkKey(first, 6)); // a new scale redraws
});
