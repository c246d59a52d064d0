// What the plan review answers a pulse that waits for the plan's approval
// (sea/serve/studio/static/pages/plans.js pulseAnswer): SEA's answers, as sea resume takes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pulseAnswer } from '../../../sea/serve/studio/static/pages/plans.js';

test('some specs, all of them, or none, with the reason', () => {
  assert.deepEqual(pulseAnswer('some', ['1'], 'only the notes'), { answer: { ids: ['1'] }, reason: 'only the notes' });
  assert.deepEqual(pulseAnswer('all', ['1'], ''), { answer: true, reason: '' });
  assert.deepEqual(pulseAnswer('none', [], 'not now'), { answer: false, reason: 'not now' });
});
