import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  depthsFromUrl, graphUrlOf, mergePipeline, pageUrlOf, pipelineElements, pipelineLabel,
} from '../src/pipeline_graph.js';

const answer = {
  center: 'dataset:2',
  truncated: false,
  nodes: [
    { id: 'dataset:2', kind: 'dataset', label: 'file:/data/out/counts', depth: 0, data: { path: 'file:/data/out/counts', format: 'text', size_bytes: 4096 } },
    { id: 'app:local-1', kind: 'application', label: 'wc', depth: -1, data: { app_id: 'local-1', name: 'wc', status: 'succeeded' } },
    { id: 'dataset:1', kind: 'dataset', label: 'file:/data/in.txt', depth: -2, data: { path: 'file:/data/in.txt' } },
    { id: 'dataset:1', kind: 'dataset', label: 'again', depth: -2, data: {} },
  ],
  edges: [
    { id: 'dataset:1->app:local-1', source: 'dataset:1', target: 'app:local-1', kind: 'read' },
    { id: 'app:local-1->dataset:2', source: 'app:local-1', target: 'dataset:2', kind: 'write' },
    { id: 'x', source: 'app:local-1', target: 'dataset:2', kind: 'write' },
    { id: 'y', source: 'dataset:9', target: 'app:local-1', kind: 'read' },
  ],
};

describe('the dataset graph as elements', () => {
  it('draws each node once, the centre marked, and edges between known nodes once', () => {
    const elements = pipelineElements(answer, { expanded: new Set(['app:local-1']) });
    const nodes = elements.filter((e) => e.group === 'nodes');
    const edges = elements.filter((e) => e.group === 'edges');
    assert.deepEqual(nodes.map((n) => n.data.id), ['dataset:2', 'app:local-1', 'dataset:1']);
    assert.deepEqual(nodes[0].classes, ['dataset', 'center']);
    assert.deepEqual(nodes[1].classes, ['app', 'expanded']);
    assert.deepEqual(edges.map((e) => e.data.id), ['dataset:1->app:local-1', 'app:local-1->dataset:2']);
    assert.equal(nodes[1].data.info.app_id, 'local-1');
  });

  it('labels datasets by file name and facts, applications by name, id and status', () => {
    assert.equal(pipelineLabel(answer.nodes[0]), 'counts\ntext · 4.0 KiB');
    assert.equal(pipelineLabel(answer.nodes[1]), 'wc\nlocal-1 · succeeded');
    assert.equal(pipelineLabel({ id: 'app:x', kind: 'application', data: { app_id: 'x' } }), 'x');
  });
});

describe('expanding a node', () => {
  it('merges answers by node id and edge ends, keeping the first centre and any truncation', () => {
    const more = {
      center: 'app:local-1',
      truncated: true,
      nodes: [{ id: 'app:local-1', kind: 'application', label: 'changed', depth: 0 }, { id: 'dataset:7', kind: 'dataset', label: '/x', depth: 1 }],
      edges: [{ source: 'app:local-1', target: 'dataset:7', kind: 'write' }, { source: 'app:local-1', target: 'dataset:2', kind: 'write' }],
    };
    const merged = mergePipeline(answer, more);
    assert.equal(merged.center, 'dataset:2');
    assert.equal(merged.truncated, true);
    assert.deepEqual(merged.nodes.map((n) => n.id), ['dataset:2', 'app:local-1', 'dataset:1', 'dataset:7']);
    assert.equal(merged.nodes[1].label, 'wc');
    assert.equal(merged.edges.length, 4); // the two drawn, the dangling one (dropped when drawn), the new one
    assert.equal(pipelineElements(merged).filter((e) => e.group === 'edges').length, 3);
  });
});

describe('URLs', () => {
  it('finds the API graph and the page of a node', () => {
    assert.equal(graphUrlOf('dataset:12'), '/api/v1/datasets/12/graph/');
    assert.equal(graphUrlOf('app:local-1'), '/api/v1/applications/local-1/pipeline/');
    assert.equal(pageUrlOf('dataset:12'), '/datasets/12/');
    assert.equal(pageUrlOf('app:app-2026 x'), '/applications/app-2026%20x/pipeline/');
    assert.equal(graphUrlOf('stage:1'), null);
  });

  it('reads depths from the URL, 2 when absent or out of range', () => {
    assert.deepEqual(depthsFromUrl('?upstream=0&downstream=5'), { upstream: 0, downstream: 5 });
    assert.deepEqual(depthsFromUrl('?upstream=11&downstream=-1'), { upstream: 2, downstream: 2 });
    assert.deepEqual(depthsFromUrl('?upstream=two&downstream='), { upstream: 2, downstream: 2 });
    assert.deepEqual(depthsFromUrl(''), { upstream: 2, downstream: 2 });
  });
});
