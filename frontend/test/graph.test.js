import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  baseLabel, captureSubtitle, countElements, countSkippedStages, datasetSubtitle, isSkippedStage, layoutOptions, nodeClasses, nodeLabel,
  operatorSubtitle, readableViewport, stageSubtitle, summaryLine, toElements, withoutSkipped,
} from '../src/graph.js';
import { fixture } from './helpers.js';

const byId = (elements) => new Map(elements.map((e) => [e.data.id, e]));

describe('toElements on a word count graph', () => {
  const graph = fixture('wordcount_graph.json');
  const elements = toElements(graph);
  const index = byId(elements);

  it('keeps every node and edge of a consistent graph', () => {
    assert.equal(elements.filter((e) => e.group === 'nodes').length, graph.nodes.length);
    assert.equal(elements.filter((e) => e.group === 'edges').length, graph.edges.length);
    assert.deepEqual(countElements(elements), { stage: 2, operator: 5, dataset: 2, edges: 7 });
  });

  it('makes stages compound parents of their operators', () => {
    const children = elements.filter((e) => e.data.parent === 'stage:0').map((e) => e.data.id);
    assert.deepEqual(children.sort(), ['op:0:0', 'op:0:1', 'op:0:2']);
    assert.equal(index.get('op:1:4').data.parent, 'stage:1');
    assert.equal('parent' in index.get('stage:0').data, false, 'top-level nodes carry no parent key');
    assert.equal('parent' in index.get('dataset:1').data, false);
  });

  it('lists parents before their children', () => {
    const position = new Map(elements.map((e, i) => [e.data.id, i]));
    for (const element of elements) {
      if (element.data.parent) assert.ok(position.get(element.data.parent) < position.get(element.data.id));
    }
    const firstEdge = elements.findIndex((e) => e.group === 'edges');
    assert.ok(elements.slice(firstEdge).every((e) => e.group === 'edges'), 'edges come after all nodes');
  });

  it('turns datasets into top-level nodes classed by direction', () => {
    assert.deepEqual(index.get('dataset:1').classes, ['dataset', 'dataset-read']);
    assert.deepEqual(index.get('dataset:2').classes, ['dataset', 'dataset-written']);
    assert.equal(index.get('dataset:1').data.kind, 'dataset');
  });

  it('keeps edge endpoints and classes edges by kind', () => {
    const shuffle = index.get('op:0:2->op:1:3');
    assert.deepEqual(shuffle.data, { id: 'op:0:2->op:1:3', source: 'op:0:2', target: 'op:1:3', kind: 'shuffle' });
    assert.deepEqual(shuffle.classes, ['shuffle']);
    assert.deepEqual(index.get('dataset:1->op:0:0').classes, ['read']);
    assert.deepEqual(index.get('op:1:4->dataset:2').classes, ['write']);
    assert.equal(index.get('stage:0->stage:1').data.source, 'stage:0');
  });

  it('labels nodes with the server label and a line of what it does not already say', () => {
    assert.equal(index.get('stage:0').data.label, 'Stage 0: reduceByKey at wordcount.py:14\n2 tasks · 1.23 s');
    assert.equal(index.get('op:0:2').data.label, 'flatMap → map [2]\nPairwiseRDD', 'Python operators are not repeated');
    assert.equal(index.get('op:1:4').data.label, 'reduceByKey [4]\nPythonRDD · cached');
    assert.equal(index.get('op:0:0').data.label, 'textFile [0]\nwords.txt', 'a path names the RDD by its file');
    assert.equal(index.get('dataset:1').data.label, 'file:/data/words.txt\ntext · 1.5 MiB · read');
    assert.equal(index.get('dataset:2').data.label, 'file:/data/out/counts\ntext · written');
    assert.equal(index.get('stage:0').data.title, 'Stage 0: reduceByKey at wordcount.py:14');
  });

  it('keeps the API data of each node for the side panel', () => {
    assert.equal(index.get('op:0:2').data.info.python_operators.length, 2);
    assert.equal(index.get('dataset:1').data.info.path, 'file:/data/words.txt');
  });

  it('does not modify its input', () => {
    const again = fixture('wordcount_graph.json');
    toElements(again);
    assert.deepEqual(again, graph);
  });
});

describe('toElements on degenerate input', () => {
  it('returns no elements for an empty graph, null or a graph without lists', () => {
    assert.deepEqual(toElements(fixture('empty_graph.json')), []);
    assert.deepEqual(toElements(null), []);
    assert.deepEqual(toElements(undefined), []);
    assert.deepEqual(toElements({ application: {} }), []);
  });

  const elements = toElements(fixture('dangling_graph.json'));
  const index = byId(elements);

  it('drops edges whose source or target is missing', () => {
    const edges = elements.filter((e) => e.group === 'edges').map((e) => e.data.id);
    assert.ok(!edges.includes('e2'), 'source op:4:9 is missing');
    assert.ok(!edges.includes('e3'), 'target dataset:99 is missing');
    for (const edge of elements.filter((e) => e.group === 'edges')) {
      assert.ok(index.has(edge.data.source) && index.has(edge.data.target));
    }
  });

  it('keeps the first of repeated node and edge ids', () => {
    assert.equal(elements.filter((e) => e.data.id === 'op:5:10').length, 1);
    assert.equal(index.get('op:5:10').data.parent, 'stage:5');
    assert.equal(elements.filter((e) => e.data.id === 'e1').length, 1);
    assert.equal(index.get('e1').data.source, 'op:5:10');
  });

  it('draws a node whose parent is missing at the top level', () => {
    assert.equal('parent' in index.get('op:6:11').data, false);
  });

  it('gives an edge without id a stable one', () => {
    const edge = elements.find((e) => e.group === 'edges' && e.data.source === 'stage:5');
    assert.equal(edge.data.id, 'stage:stage:5->op:6:11');
  });

  it('derives a label when the server sent an empty one', () => {
    assert.equal(index.get('op:5:10').data.label, 'MapPartitionsRDD [10]');
    assert.equal(index.get('stage:5').data.label, 'Stage 5\nfailed');
  });

  it('breaks parent links that loop instead of failing', () => {
    const looped = toElements({
      nodes: [
        { id: 'a', kind: 'stage', label: 'a', parent: 'b', data: {} },
        { id: 'b', kind: 'stage', label: 'b', parent: 'a', data: {} },
        { id: 'c', kind: 'operator', label: 'c', parent: 'c', data: {} },
      ],
      edges: [],
    });
    assert.equal(looped.length, 3);
    const parentOf = new Map(looped.map((e) => [e.data.id, e.data.parent]));
    assert.equal(parentOf.get('c'), undefined, 'a node is never its own parent');
    assert.ok(!(parentOf.get('a') === 'b' && parentOf.get('b') === 'a'), 'the a/b loop is broken');
    assert.equal(looped[0].data.parent, undefined, 'a top-level node comes first');
  });

  it('never lets an edge reuse a node id', () => {
    const elements2 = toElements({
      nodes: [{ id: 'x', kind: 'dataset', label: 'x', data: {} }, { id: 'y', kind: 'dataset', label: 'y', data: {} }],
      edges: [{ id: 'x', source: 'x', target: 'y', kind: 'read' }],
    });
    assert.equal(elements2.filter((e) => e.group === 'edges').length, 0);
  });
});

describe('labels and classes', () => {
  it('subtitles a capture point by its rows, or says it was not captured', () => {
    assert.equal(captureSubtitle({ rows: 1204, lineage_complete: true }), '1,204 rows');
    assert.equal(captureSubtitle({ rows: 1, lineage_complete: false }), '1 row · incomplete');
    assert.equal(captureSubtitle({ rows: 0, not_captured: 'DataFrame.count ran plain: Window()' }), 'not captured');
  });

  it('derives labels from data when the server sent none', () => {
    assert.equal(baseLabel({ id: 'stage:3', kind: 'stage', data: { stage_id: 3 } }), 'Stage 3');
    assert.equal(baseLabel({ id: 'dataset:1', kind: 'dataset', data: { path: 's3a://b/k/part/' } }), 'part');
    assert.equal(baseLabel({ id: 'dataset:1', kind: 'dataset', data: { path: 'db.table' } }), 'db.table');
    assert.equal(baseLabel({ id: 'x', kind: 'mystery' }), 'x');
  });

  it('shortens long labels in the middle', () => {
    const label = nodeLabel({ id: 'd', kind: 'dataset', label: `hdfs://namenode:8020/${'x'.repeat(80)}/part-0000.parquet`, data: {} });
    assert.ok(label.length <= 44);
    assert.ok(label.startsWith('hdfs://') && label.endsWith('.parquet'));
  });

  it('writes subtitles of key facts', () => {
    assert.equal(stageSubtitle({ num_tasks: 1, status: 'running' }), '1 task · running');
    assert.equal(stageSubtitle({}), '');
    assert.equal(operatorSubtitle({ python_operators: [], cached: false }), '');
    assert.equal(datasetSubtitle({ directions: ['read', 'written'] }), 'read + written');
  });

  it('classes stages by status and datasets read and written', () => {
    assert.deepEqual(nodeClasses({ kind: 'stage', data: { status: 'failed' } }), ['stage', 'status-failed']);
    assert.deepEqual(nodeClasses({ kind: 'dataset', data: { directions: ['written', 'read'] } }), ['dataset', 'dataset-read-written']);
    assert.deepEqual(nodeClasses({ kind: 'operator', data: { python_operators: [{ name: 'map' }] } }), ['operator', 'python']);
  });

  it('lays the DAG out left to right with dagre', () => {
    assert.equal(layoutOptions().name, 'dagre');
    assert.equal(layoutOptions().rankDir, 'LR');
    assert.equal(layoutOptions({ animate: true }).animate, true);
  });
});

describe('readableViewport', () => {
  it('centres a graph too tall for the view on its source, within the graph', () => {
    const box = { x1: 0, y1: 0, w: 3000, h: 2000 };
    const top = readableViewport(box, 1000, 600);
    assert.equal(top.pan.y, 24); // without an anchor: the top edge
    const mid = readableViewport(box, 1000, 600, { anchor: { x: 10, y: 1000 } });
    assert.equal(mid.pan.y, 300 - 1000 * mid.zoom); // the source at the view's middle
    assert.equal(readableViewport(box, 1000, 600, { anchor: { x: 10, y: 10 } }).pan.y, 24); // never past the top
    const low = readableViewport(box, 1000, 600, { anchor: { x: 10, y: 1995 } });
    assert.equal(low.pan.y, 600 - 24 - 2000 * low.zoom); // nor past the bottom
    assert.deepEqual(readableViewport({ x1: 0, y1: 0, w: 400, h: 200 }, 1000, 600, { anchor: { x: 0, y: 0 } }),
      readableViewport({ x1: 0, y1: 0, w: 400, h: 200 }, 1000, 600)); // a graph that fits is centred as before
  });

  it('fits a small graph whole and centres it', () => {
    const { zoom, pan } = readableViewport({ x1: 0, y1: 0, w: 400, h: 200 }, 1000, 600);
    assert.equal(zoom, 1.25, 'never blown up past maxZoom');
    assert.equal(pan.x, (1000 - 400 * 1.25) / 2);
    assert.equal(pan.y, (600 - 200 * 1.25) / 2);
  });

  it('fits a medium graph at the zoom that shows all of it', () => {
    const { zoom } = readableViewport({ x1: 100, y1: 0, w: 1152, h: 300 }, 1000, 600);
    assert.equal(zoom, (1000 - 48) / 1152);
  });

  it('keeps labels readable on a wide graph and shows its sources', () => {
    const { zoom, pan } = readableViewport({ x1: -50, y1: 10, w: 5000, h: 300 }, 1000, 600);
    assert.equal(zoom, 0.7);
    assert.equal(pan.x, 24 + 50 * 0.7, 'the left edge (the sources) is in view');
    assert.equal(pan.y, (600 - 300 * 0.7) / 2 - 10 * 0.7, 'a graph that fits vertically is centred');
  });

  it('survives empty boxes and hidden containers', () => {
    assert.deepEqual(readableViewport({ x1: 0, y1: 0, w: 0, h: 0 }, 800, 600), { zoom: 1, pan: { x: 0, y: 0 } });
    assert.deepEqual(readableViewport({ x1: 0, y1: 0, w: 10, h: 10 }, 0, 0), { zoom: 1, pan: { x: 0, y: 0 } });
  });
});

describe('skipped stages', () => {
  const graph = fixture('skipped_stages_graph.json');
  const skippedIds = ['stage:4', 'stage:5', 'stage:6', 'stage:8', 'stage:9', 'stage:10'];
  const ids = (list) => list.map((item) => String(item.id)).sort();

  it('counts the stages Spark skipped', () => {
    assert.equal(countSkippedStages(graph), 6);
    assert.equal(countSkippedStages(fixture('wordcount_graph.json')), 0);
    assert.equal(countSkippedStages(null), 0);
    assert.ok(isSkippedStage(graph.nodes.find((n) => n.id === 'stage:4')));
    assert.ok(!isSkippedStage({ kind: 'operator', data: { status: 'skipped' } }), 'only stages are skipped stages');
  });

  it('withoutSkipped drops skipped stages and the edges touching them, and nothing else', () => {
    const filtered = withoutSkipped(graph);
    assert.deepEqual(ids(filtered.nodes), ids(graph.nodes.filter((n) => !skippedIds.includes(n.id))));
    const touching = (edge) => skippedIds.includes(edge.source) || skippedIds.includes(edge.target);
    assert.deepEqual(graph.edges.filter(touching).map((e) => e.id).sort(), ['stage:10->stage:11', 'stage:6->stage:7']);
    assert.deepEqual(filtered.edges, graph.edges.filter((edge) => !touching(edge)));
    assert.deepEqual(filtered.nodes, graph.nodes.filter((n) => !skippedIds.includes(n.id)), 'kept nodes are unchanged');
    assert.deepEqual(filtered.application, graph.application);
    assert.deepEqual(graph, fixture('skipped_stages_graph.json'), 'the input is not modified');
  });

  it('toElements hides skipped stages on request and keeps them by default', () => {
    const all = toElements(graph);
    const shown = toElements(graph, { showSkipped: true });
    const hidden = toElements(graph, { showSkipped: false });
    assert.deepEqual(shown, all);
    assert.deepEqual(countElements(shown), { stage: 14, operator: 40, dataset: 4, edges: 43 });
    assert.deepEqual(countElements(hidden), { stage: 8, operator: 40, dataset: 4, edges: 41 });
    const hiddenIds = new Set(hidden.map((e) => e.data.id));
    for (const id of skippedIds) assert.ok(!hiddenIds.has(id), `${id} is hidden`);
    for (const edge of hidden.filter((e) => e.group === 'edges')) {
      assert.ok(hiddenIds.has(edge.data.source) && hiddenIds.has(edge.data.target));
    }
    // Apart from the skipped stages and their edges, the elements are the same.
    assert.deepEqual(hidden, shown.filter((e) => !skippedIds.includes(e.data.id) && !skippedIds.includes(e.data.source)));
  });

  it('keeps every dataset, connected or not', () => {
    const hidden = toElements(graph, { showSkipped: false });
    assert.deepEqual(hidden.filter((e) => e.data.kind === 'dataset').map((e) => e.data.id),
      ['dataset:1', 'dataset:2', 'dataset:3', 'dataset:4']);
    const lonely = toElements({
      nodes: [
        { id: 'stage:1', kind: 'stage', label: 'Stage 1', data: { status: 'skipped' } },
        { id: 'dataset:1', kind: 'dataset', label: 'in', data: { directions: ['read'] } },
      ],
      edges: [{ id: 'r', source: 'dataset:1', target: 'stage:1', kind: 'read' }],
    }, { showSkipped: false });
    assert.deepEqual(lonely.map((e) => e.data.id), ['dataset:1'], 'a dataset read only by a skipped stage stays');
  });

  it('drops the operators inside a skipped stage, and their edges', () => {
    const small = {
      nodes: [
        { id: 'stage:0', kind: 'stage', label: 'Stage 0', parent: null, data: { status: 'succeeded' } },
        { id: 'op:0:1', kind: 'operator', label: 'a', parent: 'stage:0', data: {} },
        { id: 'stage:1', kind: 'stage', label: 'Stage 1', parent: null, data: { status: 'skipped' } },
        { id: 'op:1:2', kind: 'operator', label: 'b', parent: 'stage:1', data: {} },
        { id: 'inner', kind: 'operator', label: 'c', parent: 'op:1:2', data: {} },
        { id: 'loop', kind: 'operator', label: 'd', parent: 'loop', data: {} },
      ],
      edges: [
        { id: 'e1', source: 'op:0:1', target: 'op:1:2', kind: 'shuffle' },
        { id: 'e2', source: 'inner', target: 'op:0:1', kind: 'narrow' },
        { id: 'e3', source: 'stage:0', target: 'loop', kind: 'stage' },
      ],
    };
    const filtered = withoutSkipped(small);
    assert.deepEqual(ids(filtered.nodes), ['loop', 'op:0:1', 'stage:0']);
    assert.deepEqual(filtered.edges.map((e) => e.id), ['e3']);
  });

  it('says how many skipped stages are hidden or shown', () => {
    const hidden = countElements(toElements(graph, { showSkipped: false }));
    assert.equal(summaryLine(hidden, { skipped: 6, hidden: true }), '8 stages (6 skipped hidden) · 40 operators · 4 datasets');
    const shown = countElements(toElements(graph));
    assert.equal(summaryLine(shown, { skipped: 6, hidden: false }), '14 stages (6 skipped) · 40 operators · 4 datasets');
    assert.equal(summaryLine({ stage: 2, operator: 5, dataset: 2 }), '2 stages · 5 operators · 2 datasets');
    assert.equal(summaryLine({ stage: 1, operator: 1, dataset: 0 }), '1 stage · 1 operator · 0 datasets');
    assert.equal(summaryLine({ stage: 1200, operator: 0, dataset: 1 }, { skipped: 1 }), '1,200 stages (1 skipped hidden) · 0 operators · 1 dataset');
  });
});
