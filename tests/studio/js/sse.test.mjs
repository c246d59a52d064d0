// The SSE parser and reader (sea/serve/studio/static/sse.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, follow, parser } from '../../../sea/serve/studio/static/sse.js';

test('whole events come out however the text is split', () => {
  const text = 'id: 1\nevent: node_start\ndata: {"node":"a"}\n\n: keep-alive\n\nid: 2\nevent: end\ndata: {}\n\n';
  for (let size = 1; size <= text.length; size += 1) {
    const events = parser();
    const out = [];
    for (let at = 0; at < text.length; at += size) out.push(...events.feed(text.slice(at, at + size)));
    assert.deepEqual(out, [
      { id: '1', event: 'node_start', data: '{"node":"a"}' },
      { id: '2', event: 'end', data: '{}' },
    ], `split every ${size}`);
  }
});

test('CRLF and CR line ends, multi-line data, default event name, last id kept', () => {
  const events = parser();
  const out = events.feed('id: 7\r\ndata: one\r\ndata: two\r\n\r\ndata: x\r\rdata: y');
  assert.deepEqual(out, [
    { id: '7', event: 'message', data: 'one\ntwo' },
    { id: '7', event: 'message', data: 'x' },
  ]);
  assert.equal(events.lastEventId, '7');
});

test('a CR at the end of a chunk waits for its LF', () => {
  const events = parser();
  assert.deepEqual(events.feed('data: a\r'), []);
  assert.deepEqual(events.feed('\n\r\n'), [{ id: null, event: 'message', data: 'a' }]);
});

test('an event with no data is not dispatched; retry is read', () => {
  const events = parser();
  assert.deepEqual(events.feed('event: ping\n\nretry: 1500\n\n'), []);
  assert.equal(events.retry, 1500);
});

test('dataOf parses JSON and keeps text', () => {
  assert.deepEqual(dataOf({ data: '{"a":1}' }), { a: 1 });
  assert.equal(dataOf({ data: 'plain' }), 'plain');
});

function streamOf(chunks, { contentType = 'text/event-stream', status = 200 } = {}) {
  const encoder = new TextEncoder();
  let index = 0;
  return {
    ok: status < 400, status,
    headers: { get: (name) => (name === 'content-type' ? contentType : null) },
    text: async () => chunks.join(''),
    body: { getReader: () => ({ read: async () => (index < chunks.length
      ? { value: encoder.encode(chunks[index++]), done: false } : { value: undefined, done: true }) }) },
  };
}

test('follow reconnects after a drop with Last-Event-ID and loses nothing', async () => {
  const asked = [];
  const answers = [
    streamOf(['id: 1\nevent: a\ndata: 1\n\n', 'id: 2\nevent: a\ndata: 2\n\n']), // dropped here
    streamOf(['id: 3\nevent: a\ndata: 3\n\n', 'id: 4\nevent: end\ndata: {}\n\n']),
  ];
  const api = { raw: async (path, init) => { asked.push(init.headers['last-event-id'] ?? null); return answers.shift(); } };
  const seen = [];
  const last = await follow(api, '/v1/pulses/p/events', { onEvent: (m) => seen.push(m.id) });
  assert.deepEqual(seen, ['1', '2', '3', '4']);
  assert.deepEqual(asked, [null, '2']);
  assert.equal(last, '4');
});

test('follow gives up at once on a client error and says why', async () => {
  const api = { raw: async () => streamOf(['{"error":{"code":"SEA404","message":"pulse not found"}}'], { status: 404, contentType: 'application/json' }) };
  await assert.rejects(follow(api, '/x', { onEvent: () => {} }), (error) => error.status === 404 && error.code === 'SEA404');
});
