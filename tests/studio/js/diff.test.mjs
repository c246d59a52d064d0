// The diff line classifier (sea/serve/studio/static/diff.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classify, diffCounts, diffLines } from '../../../sea/serve/studio/static/diff.js';

const WRITE = '--- a/old.txt\n+++ b/old.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n keep\n';

test('each line of a unified diff gets its kind', () => {
  assert.deepEqual(diffLines(WRITE).map((line) => line.kind),
    ['file', 'file', 'hunk', 'del', 'add', 'context']);
  assert.equal(classify('\\ No newline at end of file'), 'note');
  assert.equal(classify(''), 'context');
});

test('old and new line numbers follow the hunk header', () => {
  const lines = diffLines('--- a/x\n+++ b/x\n@@ -10,3 +10,4 @@\n ten\n-eleven\n+ELEVEN\n+extra\n twelve\n');
  assert.deepEqual(lines.slice(3).map((l) => [l.kind, l.old, l.new]), [
    ['context', 10, 10], ['del', 11, null], ['add', null, 11], ['add', null, 12], ['context', 12, 13]]);
  assert.deepEqual(lines.slice(0, 3).map((l) => [l.old, l.new]), [[null, null], [null, null], [null, null]]);
});

test('a line "+++" or "---" inside a hunk is content, not a file header', () => {
  const lines = diffLines('--- /dev/null\n+++ b/a.md\n@@ -0,0 +1,2 @@\n+++ heading\n+b\n');
  assert.deepEqual(lines.map((l) => l.kind), ['file', 'file', 'hunk', 'add', 'add']);
  assert.deepEqual(lines.slice(3).map((l) => l.new), [1, 2]);
});

test('counts, Japanese text and an empty diff', () => {
  assert.deepEqual(diffCounts(WRITE), { added: 1, removed: 1 });
  assert.deepEqual(diffLines('@@ -1 +1 @@\n-古い\n+新しい\n').map((l) => [l.kind, l.text]),
    [['hunk', '@@ -1 +1 @@'], ['del', '-古い'], ['add', '+新しい']]);
  assert.deepEqual(diffLines(''), []);
  assert.deepEqual(diffLines(null), []);
});
