// The run console's event reducer (sea/serve/studio/static/runstate.js) over the events a
// `meta_user` pulse sends (as sea serve streamed them, shortened).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initial, reduce, settled, summary, visible } from '../../../sea/serve/studio/static/runstate.js';

let seq = 0;
const ev = (event, data) => ({ id: String(++seq), event, data });
const node = (kind, playbook, name, depth, extra = {}) => ev(kind, { kind, playbook, node: name, node_type: 'llm', depth, ...extra });

function run(events, state = initial()) {
  return events.reduce(reduce, state);
}

const START = [
  ev('metadata', { pulse_id: 'p1', run_id: 'p1' }),
  ev('pulse_start', { pulse_id: 'p1', playbook: 'meta_user', input: 'Hi!' }),
  node('node_start', 'meta_user', 'route', 0),
  node('node_start', 'sub_router_user', 'decide', 1),
  ev('llm_call', { record: { playbook: 'sub_router_user', node: 'decide', model: 'scripted', tokens_in: 120, tokens_out: 9, cost: 0.002 } }),
  node('node_end', 'sub_router_user', 'decide', 1, { outcome: 'ok', duration_s: 0.1 }),
  node('node_end', 'meta_user', 'route', 0, { outcome: 'ok' }),
  node('node_start', 'meta_user', 'speak', 0),
  node('node_start', 'sub_speak', 'compose', 1),
  ev('token', { text: 'Hello ' }),
  ev('token', { text: 'there' }),
];

test('the running node, the callees opened, the reply as it streams', () => {
  const state = run(START);
  assert.equal(state.pulseId, 'p1');
  assert.equal(state.root, 'meta_user');
  assert.equal(state.status, 'running');
  assert.equal(state.states['sub_speak.compose'], 'running');
  assert.equal(state.states.speak, 'running');
  assert.equal(state.states.route, 'done');
  assert.equal(state.states['sub_router_user.decide'], 'done');
  assert.deepEqual(state.callees, ['sub_router_user', 'sub_speak']);
  assert.equal(state.streaming, 'Hello there');
  assert.equal(state.lastId, String(seq));
  assert.deepEqual(state.usage, { calls: 1, tokensIn: 120, tokensOut: 9, cost: 0.002, nodes: 2, tools: 0, seconds: 0 });
  assert.ok(!state.events.some((e) => e.kind === 'token'), 'tokens are not listed one by one');
  assert.equal(settled(state), false);
});

test('the reply is spoken, the nodes end, the pulse ends', () => {
  const state = run([
    ev('spoken', { playbook: 'sub_speak', node: 'compose', text: 'Hello there' }),
    node('node_end', 'sub_speak', 'compose', 1, { outcome: 'ok' }),
    node('node_end', 'meta_user', 'speak', 0, { outcome: 'ok' }),
    ev('pulse_end', { status: 'ok', duration_s: 1.5, error: null }),
    ev('end', { status: 'ok', error: null }),
  ], run(START));
  assert.equal(state.states['sub_speak.compose'], 'done');
  assert.deepEqual(state.spoken, ['Hello there']);
  assert.equal(state.streaming, '');
  assert.equal(state.status, 'ok');
  assert.equal(state.usage.seconds, 1.5);
  assert.ok(settled(state));
});

test('a cancelled pulse: what still ran is marked failed', () => {
  const state = run([ev('pulse_end', { status: 'cancelled', duration_s: 1, error: { code: 'SEA560', message: 'cancelled' } }),
    ev('end', { status: 'cancelled', error: null })], run(START));
  assert.equal(state.status, 'cancelled');
  assert.equal(state.states['sub_speak.compose'], 'failed');
  assert.equal(state.error.code, 'SEA560');
  assert.deepEqual(state.running, []);
});

test('an approval request waits in place; the answer\'s run goes on', () => {
  let state = run([
    ev('metadata', { pulse_id: 'p2' }),
    ev('pulse_start', { pulse_id: 'p2', playbook: 'asking', input: 'x' }),
    node('node_start', 'asking', 'look', 0),
    ev('approval_request', { playbook: 'asking', node: 'look', request: { kind: 'tool', tool: 'memory_recent' } }),
    ev('pulse_end', { status: 'waiting', duration_s: 0.2 }),
    ev('end', { status: 'waiting' }),
  ]);
  assert.equal(state.status, 'waiting');
  assert.equal(state.states.look, 'waiting');
  assert.equal(state.approval.request.tool, 'memory_recent');
  assert.ok(settled(state));
  state = run([ev('metadata', { pulse_id: 'p2' }), ev('pulse_start', { pulse_id: 'p2', playbook: 'asking', input: 'x' }),
    node('node_end', 'asking', 'look', 0, { outcome: 'ok' })], { ...state, status: 'running' });
  assert.equal(state.approval, null);
  assert.equal(state.states.look, 'done');
});

test('a failed node is marked failed; a routed error is not', () => {
  const state = run([
    ev('pulse_start', { playbook: 'p', input: '' }),
    node('node_start', 'p', 'a', 0),
    ev('error', { playbook: 'p', node: 'a', error: { code: 'SEA530' }, routed: true }),
    node('node_end', 'p', 'a', 0, { outcome: 'error' }),
    node('node_start', 'p', 'b', 0),
    ev('error', { playbook: 'p', node: 'b', error: { code: 'SEA530' }, routed: false }),
  ]);
  assert.equal(state.states.a, 'failed');
  assert.equal(state.states.b, 'failed');
});

test('summaries and the panel filter', () => {
  assert.equal(summary('node_end', { playbook: 'p', node: 'a', outcome: 'ok', duration_s: 0.5 }), 'p.a ok in 0.50 s');
  assert.equal(summary('llm_call', { record: { playbook: 'p', node: 'a', model: 'm', tokens_in: 3, tokens_out: 4 } }), 'p.a m: 3 in, 4 out');
  const events = run(START).events;
  assert.deepEqual(visible(events, 'llm_call').map((e) => e.kind), ['llm_call']);
  assert.equal(visible(events, '').length, events.length);
  assert.equal(visible(events, '', 2).length, 2);
  assert.equal(visible(events, '', 2)[1], events[events.length - 1]);
});
