// The layout adapter (sea/serve/studio/static/graph.js) with the vendored dagre.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dagre from '../../../sea/serve/studio/static/vendor/dagre.esm.js';
import { END, layout, modelFromGraph, pathOf, textWidth } from '../../../sea/serve/studio/static/graph.js';

const LOOP = {
  start: 'ask',
  nodes: [
    { id: 'ask', type: 'llm', label: 'ask: llm' },
    { id: 'check', type: 'pass', label: 'check: pass', shape: 'diamond' },
    { id: 'act', type: 'tool', label: 'act: tool' },
  ],
  edges: [
    { source: 'ask', target: 'check', kind: 'next' },
    { source: 'check', target: 'act', kind: 'case', label: 'go' },
    { source: 'check', target: null, kind: 'default', label: 'default' },
    { source: 'act', target: 'ask', kind: 'next' },
    { source: 'act', target: null, kind: 'error' },
  ],
};

test('edges to the end go to one END node; kinds and labels kept', () => {
  const model = modelFromGraph(LOOP);
  assert.deepEqual(model.nodes.map((n) => n.id), ['ask', 'check', 'act', END]);
  assert.equal(model.edges.filter((e) => e.target === END).length, 2);
  assert.deepEqual(model.edges.map((e) => e.kind), ['next', 'case', 'default', 'next', 'error']);
});

test('left to right: each node right of the one before it, the loop drawn back', () => {
  const laid = layout(modelFromGraph(LOOP), dagre);
  const at = Object.fromEntries(laid.nodes.map((n) => [n.id, n]));
  assert.ok(at.ask.x < at.check.x && at.check.x < at.act.x, JSON.stringify(at));
  assert.equal(laid.edges.length, 5);
  const back = laid.edges.find((e) => e.source === 'act' && e.target === 'ask');
  assert.ok(back.points.length >= 2);
  const labelled = laid.edges.find((e) => e.label === 'go');
  assert.notEqual(labelled.labelX, null);
  for (const node of laid.nodes) {
    assert.ok(node.x - node.w / 2 >= 0 && node.x + node.w / 2 <= laid.width, node.id);
  }
});

test('an edge to a node that does not exist is left out, not a crash', () => {
  const model = modelFromGraph({ start: 'a', nodes: [{ id: 'a', type: 'pass' }], edges: [{ source: 'a', target: 'ghost', kind: 'next' }] });
  assert.equal(layout(model, dagre).edges.length, 0);
});

test('wide characters count wider; paths start where the points start', () => {
  assert.ok(textWidth('応答') > textWidth('ab'));
  assert.match(pathOf([{ x: 0, y: 0 }, { x: 5, y: 5 }, { x: 10, y: 0 }]), /^M0\.0,0\.0 Q5\.0,5\.0 10\.0,0\.0$/);
});
