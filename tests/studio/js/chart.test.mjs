// The bar geometry of the stats page (sea/serve/studio/static/chart.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bars, shortNumber } from '../../../sea/serve/studio/static/chart.js';

test('the largest value spans the chart; others in proportion, in order', () => {
  const found = bars([{ key: 'a', calls: 2 }, { key: 'b', calls: 8 }, { key: 'c', calls: 0 }], (r) => r.calls, { span: 400, rowHeight: 20 });
  assert.deepEqual(found.map((b) => [b.key, b.value, b.width, b.y]), [['a', 2, 100, 0], ['b', 8, 400, 20], ['c', 0, 0, 40]]);
});

test('nothing to draw: zero widths, no division by zero; bad values count as 0', () => {
  assert.deepEqual(bars([{ key: 'x', n: 0 }], (r) => r.n).map((b) => b.width), [0]);
  assert.deepEqual(bars([{ key: 'x', n: 'no' }, { key: 'y', n: -3 }], (r) => r.n).map((b) => b.value), [0, 0]);
  assert.deepEqual(bars([], (r) => r.n), []);
});

test('numbers are short', () => {
  assert.equal(shortNumber(12345), '12,345');
  assert.equal(shortNumber(0.174561), '0.175');
  assert.equal(shortNumber(NaN), '—');
});
