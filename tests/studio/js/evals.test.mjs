// What the Evals page shows of a stored run and of a comparison
// (sea/serve/studio/static/evals.js): rates, each check's expected and observed values,
// the case rows and their filter, the comparison's rows, the natural baseline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caseRows, comparedRows, expectedOf, filterRows, gotOf, percent, previousRun, verdict } from '../../../sea/serve/studio/static/evals.js';

test('rates as percentages, nothing as a dash', () => {
  assert.equal(percent(2 / 3), '66.7%');
  assert.equal(percent(1), '100%');
  assert.equal(percent(0), '0%');
  assert.equal(percent(null), '—');
  assert.equal(percent(undefined), '—');
});

test('the expectation a check judged, from the case spec', () => {
  const expect = { route_any: ['a', 'b'], reply: { contains: 'Aoi', regex: '^H' }, status: 'ok', nodes_ran: ['x.y'] };
  assert.deepEqual(expectedOf(expect, 'route'), ['a', 'b']);
  assert.equal(expectedOf({ route: 'basic_chat' }, 'route'), 'basic_chat');
  assert.equal(expectedOf(expect, 'reply.contains'), 'Aoi');
  assert.equal(expectedOf(expect, 'reply.regex'), '^H');
  assert.equal(expectedOf(expect, 'reply.json'), undefined);
  assert.equal(expectedOf(expect, 'status'), 'ok');
  assert.deepEqual(expectedOf(expect, 'nodes_ran'), ['x.y']);
  assert.equal(expectedOf(null, 'status'), undefined);  // an older run kept no spec
});

test('what the attempt showed that a check looked at', () => {
  const seen = { status: 'ok', route: null, reply: 'Hello!', nodes: ['a.b'], tools: ['t'], plan_proposed: true };
  assert.equal(gotOf(seen, 'route'), '(no route)');
  assert.equal(gotOf({ ...seen, route: 'basic_chat' }, 'route'), 'basic_chat');
  assert.equal(gotOf(seen, 'reply.contains'), 'Hello!');
  assert.equal(gotOf(seen, 'rubric'), 'Hello!');
  assert.deepEqual(gotOf(seen, 'nodes_not_ran'), ['a.b']);
  assert.deepEqual(gotOf(seen, 'tools_not_called'), ['t']);
  assert.equal(gotOf(seen, 'plan'), 'a plan was proposed');
  assert.equal(gotOf(seen, 'memos'), undefined);
  assert.equal(verdict(true), 'pass');
  assert.equal(verdict(false), 'fail');
  assert.equal(verdict(null), 'not judged');
});

const RUN = {
  models: {
    'scripted:b': { cases: { 's/z': { runs: 1, passed: 1, pass_rate: 1, latency_s: { mean: 0.5 }, tokens_in: 3, tokens_out: 1, cost: 0, failures: [], attempts: [] } } },
    'scripted:a': { cases: {
      's/y': { runs: 2, passed: 1, pass_rate: 0.5, latency_s: { mean: 0.2 }, tokens_in: 5, tokens_out: 2, cost: 0, failures: ['route: x'], attempts: [{}, {}] },
      's/x': { runs: 2, passed: 2, pass_rate: 1, latency_s: { mean: 0.1 }, tokens_in: 5, tokens_out: 2, cost: 0, failures: [], attempts: [{}, {}] } } },
  },
  case_specs: { 's/y': { turns: ['hi'], playbook: 'meta_user', expect: { route: 'r' }, tags: [] } },
};

test('the cases as rows by model then case, failed unless every repeat passed', () => {
  const rows = caseRows(RUN);
  assert.deepEqual(rows.map((row) => [row.model, row.key, row.failed]), [
    ['scripted:a', 's/x', false], ['scripted:a', 's/y', true], ['scripted:b', 's/z', false]]);
  assert.equal(rows[1].spec.expect.route, 'r');
  assert.equal(rows[0].spec, null);
  assert.equal(rows[1].latency, 0.2);
  assert.deepEqual(filterRows(rows, { failedOnly: true }).map((row) => row.key), ['s/y']);
  assert.deepEqual(filterRows(rows, { text: ' B ' }).map((row) => row.key), ['s/z']);
  assert.deepEqual(filterRows(rows, { text: 's/x' }).map((row) => row.key), ['s/x']);
  assert.equal(filterRows(rows).length, 3);
  assert.deepEqual(caseRows({ models: {} }), []);
});

test('a comparison as one list, regressed first; the run before as the baseline', () => {
  const rows = comparedRows({
    improved: [{ model: 'm', case: 's/b', before: 0, after: 1 }],
    regressed: [{ model: 'm', case: 's/a', before: 1, after: 0 }],
    unchanged: [{ model: 'm', case: 's/c', before: 1, after: 1 }],
  });
  assert.deepEqual(rows.map((row) => [row.case, row.change]), [['s/a', 'regressed'], ['s/b', 'improved'], ['s/c', 'unchanged']]);
  const items = [{ id: 'r3' }, { id: 'broken', error: {} }, { id: 'r2' }, { id: 'r1' }];
  assert.equal(previousRun(items, 'r3'), 'r2');  // a broken file is skipped
  assert.equal(previousRun(items, 'r2'), 'r1');
  assert.equal(previousRun(items, 'r1'), null);
  assert.equal(previousRun(items, 'nope'), null);
});
