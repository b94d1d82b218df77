import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { checkText, outputRows } from '../src/diff_view.js';
import { historyRow, questionPath } from '../src/history_view.js';

describe('the diff page', () => {
  it('shows each output with its fate and old and new records', () => {
    const rows = outputRows({ outputs: [{ key: 'a', fate: 'changed', old_value: [['a', 1]], new_value: [['a', 3]] },
      { key: ['b'], fate: 'added', old_value: [], new_value: [{ k: 'b', n: 2 }] }] });
    assert.deepEqual(rows.map((r) => [r.keyText, r.fate, r.old, r.new]),
      [['"a"', 'changed', '["a",1]', '["a",3]'], ['["b"]', 'added', '—', '{"k":"b","n":2}']]);
  });
  it('states the additive check, and why it was not made', () => {
    const text = checkText({ check: { old: { value: 1 }, new: { value: 3 }, added: { value: 5 }, removed: { value: 3 }, holds: true } });
    assert.match(text, /^The explanation adds up/);
    assert.match(text, /value: 1 → 3 \(change 2\) = added 5 − removed 3/);
    assert.match(checkText({ check: null, why_no_check: 'not kept' }), /not made: not kept/);
  });
  it('is linked from the history', () => {
    assert.equal(questionPath({ kind: 'diff', id: 4 }), '/diffs/4/');
    assert.equal(historyRow({ kind: 'diff', id: 4, status: 'succeeded' }).title, 'diff 4');
  });
});
