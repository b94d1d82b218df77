import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fieldOf, idsOf, questionBody } from '../src/ask.js';

const base = { kind: 'trace', application: 'local-1', capturePoint: 'run/0003-output', direction: 'backward', target: 'end' };

describe('asking from the graph', () => {
  it('builds a trace by predicate, ids or all records', () => {
    assert.deepEqual(questionBody({ ...base, selectionKind: 'predicate', op: 'contains', value: 'disk', field: '' }).body, {
      application: 'local-1', capture_point: 'run/0003-output', direction: 'backward', target: 'end',
      selection: { predicate: { op: 'contains', value: 'disk' } },
    });
    assert.deepEqual(questionBody({ ...base, selectionKind: 'predicate', op: 'equals', value: 'x', field: '0' }).body.selection,
      { predicate: { op: 'equals', value: 'x', field: 0 } });
    assert.deepEqual(questionBody({ ...base, selectionKind: 'predicate', op: 'in', value: 'a, b,', field: 'user' }).body.selection,
      { predicate: { op: 'in', value: ['a', 'b'], field: 'user' } });
    assert.deepEqual(questionBody({ ...base, selectionKind: 'ids', ids: '4, 5 6' }).body.selection, { ids: [4, 5, 6] });
    assert.deepEqual(questionBody({ ...base, selectionKind: 'all', direction: 'forward', name: ' mine ' }).body,
      { application: 'local-1', capture_point: 'run/0003-output', direction: 'forward', target: 'end', selection: { all: true }, name: 'mine' });
  });

  it('builds a what-if without direction or target', () => {
    const { body } = questionBody({ ...base, kind: 'whatif', selectionKind: 'ids', ids: '1' });
    assert.deepEqual(body, { application: 'local-1', capture_point: 'run/0003-output', selection: { ids: [1] } });
  });

  it('says what to fix', () => {
    assert.match(questionBody({ ...base, selectionKind: 'ids', ids: '1, x' }).error, /"x" is not a record id/);
    assert.match(questionBody({ ...base, selectionKind: 'ids', ids: ' ' }).error, /at least one/);
    assert.match(questionBody({ ...base, selectionKind: 'predicate', op: 'contains', value: '' }).error, /type the value/);
    assert.match(questionBody({ ...base, selectionKind: 'predicate', op: 'like', value: 'a' }).error, /choose an operation/);
    assert.equal(fieldOf(' 12 '), 12);
    assert.equal(fieldOf('name'), 'name');
    assert.deepEqual(idsOf('7'), { ids: [7] });
  });
});
