import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  collapseDatasets, columnLayout, columnUrlOf, impactUrlOf, kindClass, placed, reach, ROW, toElements,
} from '../src/column_graph.js';

// raw.amount -> clean.total -> daily.sum -> report.daily_total; raw.name filters clean's rows
const answer = {
  center: 'column:2:total',
  truncated: false,
  nodes: [
    { id: 'column:2:total', kind: 'column', label: 'total', parent: 'dataset:2', depth: 0, data: { path: 'file:/clean', column: 'total' } },
    { id: 'dataset:2', kind: 'dataset', label: 'file:/clean', parent: null, depth: null, data: { path: 'file:/clean' } },
    { id: 'dataset:1', kind: 'dataset', label: 'file:/raw', parent: null, depth: null, data: { path: 'file:/raw' } },
    { id: 'column:1:amount', kind: 'column', label: 'amount', parent: 'dataset:1', depth: -1, data: {} },
    { id: 'column:1:name', kind: 'column', label: 'name', parent: 'dataset:1', depth: -1, data: {} },
    { id: 'dataset:3', kind: 'dataset', label: 'file:/daily', parent: null, depth: null, data: { path: 'file:/daily' } },
    { id: 'column:3:sum', kind: 'column', label: 'sum', parent: 'dataset:3', depth: 1, data: {} },
    { id: 'dataset:4', kind: 'dataset', label: 'file:/report', parent: null, depth: null, data: { path: 'file:/report' } },
    { id: 'column:4:daily_total', kind: 'column', label: 'daily_total', parent: 'dataset:4', depth: 2, data: {} },
    { id: 'column:9:orphan', kind: 'column', label: 'orphan', parent: 'dataset:9', depth: 1, data: {} },
    { id: 'column:2:total', kind: 'column', label: 'again', parent: 'dataset:2', depth: 0, data: {} },
  ],
  edges: [
    { id: 'a', source: 'column:1:amount', target: 'column:2:total', type: 'DIRECT', kind: 'TRANSFORMATION', app_ids: ['local-clean'] },
    { id: 'f', source: 'column:1:name', target: 'dataset:2', type: 'INDIRECT', kind: 'FILTER', app_ids: ['local-clean'] },
    { id: 's', source: 'column:2:total', target: 'column:3:sum', type: 'DIRECT', kind: 'AGGREGATION', app_ids: ['local-daily'] },
    { id: 'r', source: 'column:3:sum', target: 'column:4:daily_total', type: 'DIRECT', kind: 'IDENTITY', app_ids: ['ol'] },
    { id: 'r', source: 'column:3:sum', target: 'column:4:daily_total', type: 'DIRECT', kind: 'IDENTITY', app_ids: ['ol'] },
    { id: 'x', source: 'column:9:orphan', target: 'column:2:total', type: 'DIRECT', kind: 'IDENTITY' },
    { id: 'q', source: 'column:3:sum', target: 'column:4:daily_total', type: 'DIRECT', kind: 'MASKING_ODDITY' },
  ],
};

const byId = (elements) => Object.fromEntries(elements.map((e) => [e.data.id, e]));

describe('the column graph as elements', () => {
  it('puts datasets first as boxes and each column once inside its dataset', () => {
    const elements = toElements(answer);
    const nodes = elements.filter((e) => e.group === 'nodes');
    assert.deepEqual(nodes.map((n) => n.data.id),
      ['dataset:2', 'dataset:1', 'dataset:3', 'dataset:4', 'column:2:total', 'column:1:amount', 'column:1:name',
        'column:3:sum', 'column:4:daily_total']);
    const ids = byId(elements);
    assert.equal(ids['column:3:sum'].data.parent, 'dataset:3');
    assert.equal(ids['dataset:2'].data.parent, undefined);
    assert.equal(ids['dataset:1'].data.label, 'raw');
    assert.equal(ids['column:2:total'].data.label, 'total');
    assert.deepEqual(ids['column:2:total'].classes, ['column', 'center']);
    assert.deepEqual(ids['dataset:4'].classes, ['dataset-box']);
  });

  it('draws edges between known nodes once, classed by kind and by direct or indirect', () => {
    const edges = toElements(answer).filter((e) => e.group === 'edges');
    assert.deepEqual(edges.map((e) => [e.data.id, e.classes]), [
      ['a', ['kind-transformation', 'direct']],
      ['f', ['kind-filter', 'indirect']],
      ['s', ['kind-aggregation', 'direct']],
      ['r', ['kind-identity', 'direct']],
      ['q', ['kind-other', 'direct']],
    ]);
    assert.deepEqual(byId(edges).s.data.apps, ['local-daily']);
  });

  it('marks what a picked column reaches upstream and downstream within the depth, and fades the rest', () => {
    const one = byId(toElements(answer, { picked: 'column:2:total', depth: 1 }));
    assert.ok(one['column:2:total'].classes.includes('picked'));
    assert.ok(one['column:1:amount'].classes.includes('upstream'));
    assert.ok(one['column:1:name'].classes.includes('upstream'), 'the filter column decides its rows');
    assert.ok(one['column:3:sum'].classes.includes('downstream'));
    assert.ok(one['column:4:daily_total'].classes.includes('faded'), 'two edges away at depth 1');
    assert.ok(one.s.classes.includes('reached') && one.r.classes.includes('faded'));
    const two = byId(toElements(answer, { picked: 'column:2:total', depth: 2 }));
    assert.ok(two['column:4:daily_total'].classes.includes('downstream'));
    assert.ok(two.r.classes.includes('reached'));
  });

  it('reaches upstream from a later column through the filter of its dataset', () => {
    const { up, down } = reach(answer, 'column:4:daily_total', 3);
    assert.deepEqual([...up].sort(), ['column:1:amount', 'column:1:name', 'column:2:total', 'column:3:sum']);
    assert.equal(down.size, 0);
  });

  it('survives an empty or odd answer', () => {
    assert.deepEqual(toElements(null), []);
    assert.deepEqual(toElements({ nodes: [{}, null], edges: [null] }).length, 0);
  });
});

describe('the column graph URLs', () => {
  it('maps the dataset graph URLs to the column ones', () => {
    assert.equal(columnUrlOf('/api/v1/datasets/3/graph/'), '/api/v1/datasets/3/columns/');
    assert.equal(columnUrlOf('/api/v1/applications/local-1/pipeline/'), '/api/v1/applications/local-1/columns/');
    assert.equal(columnUrlOf('/elsewhere/'), null);
  });

  it('names the impact CSV of a column, whatever its name holds', () => {
    assert.equal(impactUrlOf('column:2:a b&c:d', 3), '/api/v1/datasets/2/column-impact/?column=a+b%26c%3Ad&depth=3&format=csv');
    assert.equal(impactUrlOf('dataset:2', 3), null);
    assert.equal(kindClass('GROUP_BY'), 'kind-group-by');
  });
});

describe('the column layout', () => {
  it('stacks each dataset\'s columns in its box and lays the datasets out left to right', () => {
    const elements = toElements(answer);
    const layout = columnLayout(elements);
    const x = (id) => layout.boxes.get(id).x;
    assert.ok(x('dataset:1') < x('dataset:2') && x('dataset:2') < x('dataset:3') && x('dataset:3') < x('dataset:4'));
    const amount = layout.positions.get('column:1:amount');
    const name = layout.positions.get('column:1:name');
    assert.equal(amount.x, x('dataset:1'));
    assert.equal(name.y - amount.y, ROW);
    const raw = layout.boxes.get('dataset:1');
    assert.ok(amount.y > raw.y - raw.h / 2 && name.y < raw.y + raw.h / 2, 'inside its box');
    assert.ok(layout.box.w > 0 && layout.box.x1 <= raw.x - raw.w / 2);
  });

  it('draws datasets as compound parents, or flat boxes behind their columns', () => {
    const elements = toElements(answer);
    const layout = columnLayout(elements);
    const compound = byId(placed(elements, layout));
    assert.equal(compound['column:1:amount'].data.parent, 'dataset:1');
    assert.equal(compound['dataset:1'].position, undefined);
    const flat = byId(placed(elements, layout, { flat: true }));
    assert.equal(flat['column:1:amount'].data.parent, undefined);
    assert.deepEqual(flat['dataset:1'].position, { x: layout.boxes.get('dataset:1').x, y: layout.boxes.get('dataset:1').y });
    assert.ok(flat['dataset:1'].classes.includes('flat') && flat['dataset:1'].data.h > 0);
  });
});

describe('collapsing a dataset of the column graph', () => {
  // raw's two columns both feed clean.total (the second through a filter edge into clean)
  const two = {
    ...answer,
    edges: [...answer.edges,
      { id: 'b', source: 'column:1:name', target: 'column:2:total', type: 'DIRECT', kind: 'TRANSFORMATION', app_ids: ['local-other'] }],
  };

  it('draws it as one node carrying its columns\' edges, merged by target and kind', () => {
    const folded = collapseDatasets(two, new Set(['dataset:1']));
    assert.equal(folded.nodes.some((n) => n.parent === 'dataset:1'), false);
    assert.equal(folded.nodes.find((n) => n.id === 'dataset:1').collapsed, 2);
    const fromRaw = folded.edges.filter((e) => e.source === 'dataset:1').map((e) => [e.target, e.kind, e.merged, e.app_ids]);
    assert.deepEqual(fromRaw, [
      ['column:2:total', 'TRANSFORMATION', 2, ['local-clean', 'local-other']],
      ['dataset:2', 'FILTER', 1, ['local-clean']],
    ]);
    assert.equal(two.edges.find((e) => e.id === 'a').source, 'column:1:amount', 'the answer is not modified');
    const elements = byId(toElements(folded));
    assert.equal(elements['dataset:1'].data.label, 'raw\n2 columns');
    assert.ok(elements['dataset:1'].classes.includes('collapsed'));
    assert.equal(elements['column:1:amount'], undefined);
    const layout = columnLayout(toElements(folded));
    const box = placed(toElements(folded), layout).find((e) => e.data.id === 'dataset:1');
    assert.deepEqual(box.position, { x: layout.boxes.get('dataset:1').x, y: layout.boxes.get('dataset:1').y });
  });

  it('drops the edges inside it, and gives the answer back expanded', () => {
    const inside = { ...answer, edges: [{ id: 'i', source: 'column:1:name', target: 'column:1:amount', type: 'DIRECT', kind: 'IDENTITY', app_ids: [] }] };
    assert.deepEqual(collapseDatasets(inside, new Set(['dataset:1'])).edges, []);
    assert.equal(collapseDatasets(two, new Set()), two);
    const both = collapseDatasets(two, new Set(['dataset:1', 'dataset:2']));
    assert.deepEqual(both.edges.filter((e) => e.source === 'dataset:1').map((e) => [e.target, e.kind, e.merged]),
      [['dataset:2', 'TRANSFORMATION', 2], ['dataset:2', 'FILTER', 1]]);
  });
});
