// The API client's helpers (sea/serve/studio/static/api.js) and the router (route.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { client, errorOf, hashWithoutKey, keepKey, keyFromHash, storedKey } from '../../../sea/serve/studio/static/api.js';
import { href, parseRoute } from '../../../sea/serve/studio/static/route.js';

test('a key in the fragment is found and taken out of it', () => {
  assert.equal(keyFromHash('#key=sea_dev_abc'), 'sea_dev_abc');
  assert.equal(keyFromHash('#/playbooks/meta_user?key=k%2B1&x=2'), 'k+1');
  assert.equal(keyFromHash('#/personas'), null);
  assert.equal(hashWithoutKey('#key=abc'), '');
  assert.equal(hashWithoutKey('#/playbooks/x?key=abc&x=2'), '#/playbooks/x?x=2');
  assert.equal(hashWithoutKey('#/playbooks/x?key=abc'), '#/playbooks/x');
});

test('the key is kept in the storage given and forgotten', () => {
  const box = new Map();
  const storage = { getItem: (k) => box.get(k) ?? null, setItem: (k, v) => box.set(k, v), removeItem: (k) => box.delete(k) };
  keepKey('k1', storage);
  assert.equal(storedKey(storage), 'k1');
  keepKey(null, storage);
  assert.equal(storedKey(storage), null);
});

test("SEA's error body and FastAPI's become an ApiError", () => {
  const sea = errorOf(409, { error: { code: 'SEA409', message: 'busy', hint: 'wait' } });
  assert.deepEqual([sea.status, sea.code, sea.message, sea.hint], [409, 'SEA409', 'busy', 'wait']);
  const fastapi = errorOf(422, { detail: [{ loc: ['body'], msg: 'x' }] });
  assert.equal(fastapi.code, 'HTTP422');
  assert.match(fastapi.message, /body/);
});

test('the client sends the key and JSON, and raises on an error', async () => {
  const calls = [];
  const fake = async (path, init) => {
    calls.push([path, init]);
    return { ok: path !== '/bad', status: path === '/bad' ? 403 : 200,
      text: async () => (path === '/bad' ? '{"error":{"code":"SEA403","message":"no"}}' : '{"ok":true}') };
  };
  const api = client('secret', fake);
  assert.deepEqual(await api.post('/v1/x', { a: 1 }), { ok: true });
  assert.equal(calls[0][1].headers['x-api-key'], 'secret');
  assert.equal(calls[0][1].body, '{"a":1}');
  await assert.rejects(api.get('/bad'), (error) => error.code === 'SEA403' && error.status === 403);
});

test('routes parse and print', () => {
  assert.deepEqual(parseRoute(''), { page: 'personas', parts: [], query: {} });
  assert.deepEqual(parseRoute('#/playbooks/meta_user?line=3&key=x'), { page: 'playbooks', parts: ['meta_user'], query: { line: '3' } });
  assert.equal(href('plans', 'p 1', 'plan/2', { spec: 1, none: null }), '#/plans/p%201/plan%2F2?spec=1');
  assert.deepEqual(parseRoute(href('plans', 'p 1', 'plan/2')).parts, ['p 1', 'plan/2']);
});
