import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  columnSourceRows, overlay, pointClasses, pointNote, progressFraction, progressText, questionZoom, recordRow, rowDeciders,
  selectionText, withRecords,
} from '../src/question_view.js';
import { toElements } from '../src/graph.js';
import { visibleGraph, zoomTree } from '../src/zoom.js';
import { fixture } from './helpers.js';

const graph = fixture('zoom_graph.json');
const tree = zoomTree(graph);

describe('a trace over the application graph', () => {
  const traceGraph = { points: [{ capture_id: 's1-output', records: 3, in_result: false }, { capture_id: 's0-input', records: 40, in_result: true }], edges: [] };

  it('marks the capture points crossed, the result, and the nodes holding them', () => {
    const { graph: drawn, marks } = overlay(graph, traceGraph, 'trace', tree);
    assert.deepEqual(marks.get('capture:s1-output'), ['crossed']);
    assert.deepEqual(marks.get('capture:s0-input'), ['crossed', 'result']);
    for (const id of ['op:1:4', 'stage:1', 'job:0', 'application', 'op:0:0', 'stage:0']) assert.deepEqual(marks.get(id), ['on-path'], id);
    assert.equal(marks.has('op:0:1'), false);
    assert.equal(drawn.nodes.find((n) => n.id === 'capture:s0-input').label, 'input s0-input\n40 records · in the result');
    assert.equal(graph.nodes.find((n) => n.id === 'capture:s0-input').label, 'input s0-input', 'the input is not modified');
  });

  it('draws each crossed point\'s note on a line of its own, however long its title', () => {
    const long = { ...graph, nodes: graph.nodes.map((n) => (n.id === 'capture:s0-input' ? { ...n, label: 'textFile events-of-the-whole-night-shift.txt · input' } : n)) };
    const { graph: drawn } = overlay(long, traceGraph, 'trace', zoomTree(long));
    const tree = zoomTree(drawn);
    const element = toElements(visibleGraph(drawn, new Set(), tree)).find((e) => e.data.id === 'capture:s0-input');
    const lines = element.data.label.split('\n');
    assert.equal(lines[1], '40 records · in the result');
    assert.ok(lines[0].length <= 40 && lines[0].startsWith('textFile'), lines[0]);
  });

  it('opens with every crossed capture point drawn', () => {
    const state = questionZoom(tree, traceGraph.points);
    const ids = new Set(visibleGraph(graph, state, tree).nodes.map((n) => n.id));
    assert.ok(ids.has('capture:s1-output') && ids.has('capture:s0-input'));
  });
});

describe('a what-if over the application graph', () => {
  it('says each point\'s fates in words and marks its worst fate', () => {
    const point = { capture_id: 's1-output', deleted: 1, changed: 2, unchanged: 5 };
    assert.equal(pointNote(point, 'whatif'), '1 ✕ deleted\n2 ≠ changed\n5 = unchanged');
    assert.deepEqual(pointClasses(point, 'whatif'), ['crossed', 'fate-deleted']);
    assert.deepEqual(pointClasses({ changed: 2, unchanged: 1 }, 'whatif'), ['crossed', 'fate-changed']);
    assert.equal(pointNote({}, 'whatif'), 'untouched');
  });
});

describe('words and rows', () => {
  it('tells progress', () => {
    const running = { status: 'running', progress: { points_done: 2, points_total: 8, records: 1500 } };
    assert.equal(progressText(running), 'Running: 2 of 8 capture points · 1,500 records so far');
    assert.equal(progressFraction(running), 0.25);
    assert.equal(progressText({ status: 'queued', progress: {} }), 'Queued: waiting for a worker…');
    assert.equal(progressFraction({ status: 'queued', progress: {} }), null);
  });

  it('tells selections', () => {
    assert.equal(selectionText({ all: true }), 'all records');
    assert.equal(selectionText({ trace: 4 }), 'the result of trace 4');
    assert.equal(selectionText({ ids: [...Array(12).keys()] }), 'ids 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (12)');
    assert.equal(selectionText({ predicate: { and: [{ op: 'contains', value: 'a' }, { not: { field: 'u', op: 'equals', value: 42 } }] } }),
      'record contains "a" and not field u equals 42');
  });

  it('makes table rows of trace and what-if records', () => {
    assert.deepEqual(recordRow({ capture_id: 'run/0001-input', record_id: 3, value: 'a b', file: 'file:/x', offset: 12 }, 'trace'),
      ['0001-input', { text: 'partition 0 · row 3', title: 'record id 3' }, 'a b', 'file:/x@12']);
    // the id's high 32 bits are its partition, as the API's own fields say when it sends them
    assert.deepEqual(recordRow({ capture_id: 'run/0008-output', record_id: 12884901905, fate: 'changed', value: ['storage', 232], new_value: ['storage', 79] }, 'whatif'),
      ['≠ changed', '0008-output', { text: 'partition 3 · row 17', title: 'record id 12884901905' }, '["storage",232]', '["storage",79]']);
    assert.deepEqual(recordRow({ capture_id: 'i', record_id: 5, partition: 2, position: 1500, value: 'x' }, 'trace')[1],
      { text: 'partition 2 · row 1,500', title: 'record id 5' });
    assert.deepEqual(recordRow({ capture_id: 'o', record_id: null, fate: 'deleted', value: 'x', new_value: null }, 'whatif'),
      ['✕ deleted', 'o', { text: '—', title: '' }, 'x', '']);
  });

  it('adds a small trace\'s records inside their capture points, joined by their lineage', () => {
    const full = withRecords(graph, { records: {
      nodes: [{ capture_id: 's0-input', record_id: 1, value: 'x' }, { capture_id: 's1-output', record_id: 2, value: ['a', 1] },
        { capture_id: 'nowhere', record_id: 3, value: null }],
      edges: [{ source: ['s0-input', 1], target: ['s1-output', 2] }, { source: ['nowhere', 3], target: ['s1-output', 2] }],
    } });
    const records = full.nodes.filter((n) => n.kind === 'record');
    assert.deepEqual(records.map((n) => [n.id, n.parent]), [['rec:s0-input:1', 'capture:s0-input'], ['rec:s1-output:2', 'capture:s1-output']]);
    assert.deepEqual(full.edges.filter((e) => e.kind === 'lineage').map((e) => e.id), ['rec:s0-input:1->rec:s1-output:2']);
    assert.equal(withRecords(graph, { records: null }), graph);
    // the record level zooms like the others: collapsing the capture points lifts the record edge onto them
    const tree = zoomTree(full);
    const drawn = visibleGraph(full, new Set(['capture:s0-input', 'capture:s1-output']), tree);
    assert.ok(drawn.edges.some((e) => e.source === 'capture:s0-input' && e.target === 'capture:s1-output'));
    assert.equal(drawn.nodes.some((n) => n.kind === 'record'), false);
  });
});

describe('the source columns of a backward trace\'s output columns', () => {
  const columns = {
    columns: [
      { column: 'country', sources: [{ dataset: 'file:/d/customers', dataset_id: 7, column: 'country', type: 'DIRECT', kind: 'IDENTITY' }] },
      { column: 'n', sources: [] },
      { column: 'v', sources: [
        { dataset: 'file:/d/orders', dataset_id: null, column: 'amount', type: 'DIRECT', kind: 'AGGREGATION' },
        { dataset: 'file:/d/orders', dataset_id: null, column: 'flag', type: 'INDIRECT', kind: 'CONDITIONAL' }] },
    ],
    rows_decided_by: [{ dataset: 'file:/d/orders', dataset_id: null, column: 'customer_id', type: 'INDIRECT', kind: 'JOIN' }],
  };

  it('lists one row per output column and source, a column without sources once', () => {
    assert.deepEqual(columnSourceRows(columns), [
      ['country', 'file:/d/customers', 7, 'country', 'copied (DIRECT IDENTITY)'],
      ['n', '', null, '', 'no source column'],
      ['v', 'file:/d/orders', null, 'amount', 'aggregated from (DIRECT AGGREGATION)'],
      ['v', 'file:/d/orders', null, 'flag', 'chosen by (INDIRECT CONDITIONAL)'],
    ]);
    assert.deepEqual(rowDeciders(columns), ['orders.customer_id (JOIN)']);
  });

  it('has nothing to show for a trace without column lineage', () => {
    assert.equal(columnSourceRows(null), null);
    assert.equal(columnSourceRows({ columns: [], rows_decided_by: [] }), null);
    assert.deepEqual(rowDeciders(null), []);
  });
});
