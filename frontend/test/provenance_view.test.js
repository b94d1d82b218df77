import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildRows, lineageElements, lineageSummary, lineageUrl, queryFromUrl, setsText,
} from '../src/provenance_view.js';

// The lineage of data-item 23 of the CSProv paper's person example.
const answer = {
  item: '23', direction: 'ancestors', component: 3, connected_set: 3,
  items: ['15', '18', '3', '6'], item_count: 4,
  edges: [
    { src: '15', dst: '23', op: 'R2' }, { src: '18', dst: '23', op: 'R2' },
    { src: '3', dst: '15', op: 'R1' }, { src: '6', dst: '18', op: 'R1' }, { src: '6', dst: '18', op: 'R1' },
  ],
  edge_count: 4, truncated: false, sets_read: [3], triples_read: 4, index: 1, timings: { locate: 1 },
};

describe('a lineage answer as elements', () => {
  it('draws the item marked, each item reached once and each triple once, labelled by its operation', () => {
    const elements = lineageElements(answer);
    const nodes = elements.filter((e) => e.group === 'nodes');
    const edges = elements.filter((e) => e.group === 'edges');
    assert.deepEqual(nodes.map((n) => n.data.id), ['item:23', 'item:15', 'item:18', 'item:3', 'item:6']);
    assert.deepEqual(nodes[0].classes, ['record', 'center']);
    assert.deepEqual(edges.map((e) => [e.data.source, e.data.target, e.data.label]), [
      ['item:15', 'item:23', 'R2'], ['item:18', 'item:23', 'R2'], ['item:3', 'item:15', 'R1'], ['item:6', 'item:18', 'R1'],
    ]);
  });

  it('leaves out edges to items that were cut at the limit', () => {
    const cut = { ...answer, items: ['15'], truncated: true };
    assert.equal(lineageElements(cut).filter((e) => e.group === 'edges').length, 1);
  });
});

describe('what a query read', () => {
  it('says how many items and triples, and how many sets it read', () => {
    assert.equal(lineageSummary(answer), '4 ancestors · 4 triples · read 1 connected set (4 triples)');
    assert.match(lineageSummary({ ...answer, direction: 'descendants', item_count: 1, truncated: true }),
      /^1 descendant · .* · only the first ones are drawn$/);
  });

  it('lists the sets read, the first few when there are many', () => {
    assert.equal(setsText([3, 9]), '3, 9');
    assert.equal(setsText([1, 2, 3, 4], 2), '4: 1, 2, …');
  });

  it('describes an index build, or its absence', () => {
    assert.deepEqual(buildRows(null), [['Index', 'none yet']]);
    const rows = buildRows({ id: 7, status: 'succeeded', incremental: true, meta: { counts: { sets: 4, triples: 12 }, timings: { total: 3.5 } } });
    assert.deepEqual(rows, [['Build', '#7 · succeeded · incremental'], ['Triples', '12'], ['Connected sets', '4'], ['Build time', '3.5 s']]);
  });
});

describe('the page query in its URL', () => {
  it('reads item and direction, defaulting to ancestors', () => {
    assert.deepEqual(queryFromUrl('?item=c8&direction=descendants'), { item: 'c8', direction: 'descendants' });
    assert.deepEqual(queryFromUrl('?item=%20x%20&direction=sideways'), { item: 'x', direction: 'ancestors' });
  });

  it('builds the API URL', () => {
    assert.equal(lineageUrl('/api/v1/provenance/graphs/1/lineage/', { item: 'a b', direction: 'ancestors' }, 10),
      '/api/v1/provenance/graphs/1/lineage/?item=a+b&direction=ancestors&limit=10');
  });
});
