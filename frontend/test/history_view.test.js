import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { historyQuery, historyRow, parseHistoryState, questionPath } from '../src/history_view.js';

describe('the history page state', () => {
  it('round-trips through the URL and drops bad values', () => {
    const state = parseHistoryState('?page=3&kind=whatif&status=failed&search=%20nightly%20&pinned=true&ordering=-result_count');
    assert.deepEqual(state, { page: 3, kind: 'whatif', status: 'failed', search: 'nightly', pinned: true, ordering: '-result_count' });
    assert.deepEqual(parseHistoryState(historyQuery(state)), state);
    assert.deepEqual(parseHistoryState('?page=-1&kind=x&status=nope&ordering=id'),
      { page: 1, kind: '', status: '', search: '', pinned: false, ordering: '' });
    assert.equal(historyQuery(parseHistoryState('')), '');
  });
});

describe('a history row', () => {
  it('names the question, links its page and says what it asked', () => {
    const row = historyRow({ id: 7, kind: 'trace', direction: 'backward', name: '', selection: { predicate: { field: 0, op: 'equals', value: 'incident' } },
      application: 'local-1', status: 'succeeded', result_count: 1234, created_by: 'andy', created_at: null, duration_ms: 1500, pinned: true });
    assert.equal(row.href, '/traces/7/');
    assert.equal(row.title, 'backward trace 7');
    assert.equal(row.question, 'field 0 equals "incident"');
    assert.equal(row.results, '1,234');
    assert.equal(row.pinned, true);
    assert.equal(questionPath({ id: 3, kind: 'whatif' }), '/whatifs/3/');
    assert.equal(historyRow({ id: 3, kind: 'whatif', name: 'guest batch', selection: { ids: [1, 2] } }).question, 'ids 1, 2');
  });
});
