// The editor's pure logic (sea/serve/studio/static/editing.js) and graph.js's
// modelFromDocument / prefixModel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { END, modelFromDocument, prefixModel } from '../../../sea/serve/studio/static/graph.js';
import {
  diagnosticBadges, diagnosticMarks, graphFor, lineCount, lineMarks, mergeMarks, nodeCounts, offsetOf, overlayMarks,
} from '../../../sea/serve/studio/static/editing.js';

const DOC = {
  name: 'flow', start_node: 'route',
  nodes: [
    { id: 'route', type: 'subplay', playbook: 'sub_router_user', next: 'check', error_next: 'speak' },
    { id: 'check', type: 'pass', conditional_next: { field: 'x', operator: 'eq', cases: { a: 'speak' }, default: 'ghost' } },
    { id: 'speak', type: 'llm' },
    { type: 'llm' },
    { id: 'speak', type: 'tool' },
  ],
};

test('a document being written is drawn: its edges, a missing target, the end', () => {
  const model = modelFromDocument(DOC);
  assert.equal(model.start, 'route');
  assert.deepEqual(model.nodes.map((n) => n.id), ['route', 'check', 'speak', 'ghost', END]);
  assert.equal(model.nodes[0].label, 'route: subplay sub_router_user');
  assert.equal(model.nodes[1].shape, 'diamond');
  assert.equal(model.nodes.find((n) => n.id === 'ghost').type, 'missing');
  assert.deepEqual(model.edges.map((e) => [e.source, e.target, e.kind, e.label]), [
    ['route', 'check', 'next', ''], ['route', 'speak', 'error', 'error'],
    ['check', 'speak', 'case', 'a'], ['check', 'ghost', 'default', 'default'], ['speak', END, 'next', ''],
  ]);
});

test('what is not a playbook yet draws nothing, without throwing', () => {
  for (const value of [null, 3, 'x', [], {}, { nodes: 'no' }, { nodes: [null, 1, { id: 5 }] }]) {
    assert.deepEqual(modelFromDocument(value).nodes, []);
  }
  const odd = modelFromDocument({ nodes: [{ id: 'a', next: 7 }] });
  assert.deepEqual(odd.edges, []);
  assert.equal(odd.start, 'a');
});

test('a callee is prefixed: sub_speak.compose', () => {
  const model = prefixModel(modelFromDocument({ start_node: 'compose', nodes: [{ id: 'compose', type: 'llm' }] }), 'sub_speak');
  assert.deepEqual(model.nodes.map((n) => n.id), ['sub_speak.compose', `sub_speak.${END}`]);
  assert.equal(model.start, 'sub_speak.compose');
  assert.deepEqual([model.edges[0].source, model.edges[0].target], ['sub_speak.compose', `sub_speak.${END}`]);
});

test('offsets of lines and columns, and line counts', () => {
  const text = 'ab\ncde\n\nf';
  assert.equal(offsetOf(text, 1, 1), 0);
  assert.equal(offsetOf(text, 2, 2), 4);
  assert.equal(offsetOf(text, 2, 99), 6);
  assert.equal(offsetOf(text, 4), 8);
  assert.equal(offsetOf(text, 9), text.length);
  assert.equal(lineCount(text), 4);
  assert.equal(lineCount(''), 1);
});

const DIAGNOSTICS = [
  { code: 'SEA001', severity: 'warning', line: 3, node_id: 'a' },
  { code: 'SEA002', severity: 'error', line: 3, node_id: 'a' },
  { code: 'SEA003', severity: 'warning', line: 5, node_id: 'b' },
  { code: 'SEA004', severity: 'error', line: null, node_id: null },
];

test('diagnostics mark their lines (the worst one) and their nodes', () => {
  assert.deepEqual(lineMarks(DIAGNOSTICS), { 3: 'error', 5: 'warning' });
  assert.deepEqual(diagnosticMarks(DIAGNOSTICS), { a: ['warning-diag', 'error-diag'], b: ['warning-diag'] });
  assert.deepEqual(nodeCounts(DIAGNOSTICS), { a: { errors: 1, warnings: 1 }, b: { errors: 0, warnings: 1 } });
  assert.deepEqual(lineMarks([]), {});
  const badges = diagnosticBadges([...DIAGNOSTICS.slice(0, 3)].map((d) => ({ ...d, message: 'm' })));
  assert.deepEqual(badges.a, { text: '2', kind: 'error', title: 'SEA001 warning: m\nSEA002 error: m' });
  assert.deepEqual(badges.b.kind, 'warning');
});

test('the variable overlay lights definitions and reads, undefined reads apart', () => {
  const variables = [
    { name: 'greeting', defined_by: ['a'], read_by: ['b', 'c'], defined: true },
    { name: 'topic', defined_by: ['input_schema'], read_by: ['a'], defined: true },
    { name: 'missing', defined_by: [], read_by: ['b'], defined: false },
  ];
  assert.deepEqual(overlayMarks(variables, 'greeting'), { a: ['defines'], b: ['reads'], c: ['reads'] });
  assert.deepEqual(overlayMarks(variables, 'topic'), { a: ['reads'] });
  assert.deepEqual(overlayMarks(variables, 'missing'), { b: ['reads-undefined'] });
  assert.deepEqual(overlayMarks(variables, 'nope'), {});
  assert.deepEqual(mergeMarks({ a: ['x'] }, { a: ['y'], b: ['z'] }), { a: ['x', 'y'], b: ['z'] });
});

test('the graph: the server\'s, else the document\'s, else the last good one', () => {
  const last = { start: 'k', nodes: [{ id: 'k' }], edges: [] };
  const server = { start: 'a', nodes: [{ id: 'a', type: 'llm', label: 'a: llm' }], edges: [] };
  assert.equal(graphFor('{}', server, last).nodes[0].id, 'a');
  const dangling = { ...server, edges: [{ source: 'a', target: 'zz', kind: 'next' }] };
  assert.deepEqual(graphFor('{}', dangling, last).nodes.map((n) => [n.id, n.type]), [['a', 'llm'], ['zz', 'missing']]);
  assert.equal(graphFor('{"nodes": [{"id": "z", "type": "llm"}]}', null, last).nodes[0].id, 'z');
  assert.equal(graphFor('{"nodes": [', null, last), last);
  assert.equal(graphFor('{}', null, last), last);
  assert.equal(graphFor('{"nodes": [', null, null), null);
});
