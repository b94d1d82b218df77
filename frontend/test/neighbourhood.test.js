// What the application page draws of a zoom state too big to draw whole: pure functions on
// applications built inline in bench/browser_graph.py's shapes, smaller.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { drawnLeafIds, nearestLeaves, restrictTo, windowSeeds, withAncestors } from '../src/neighbourhood.js';
import { levelState, visibleGraph, zoomIn, zoomOut, zoomTree } from '../src/zoom.js';

// `jobs` jobs of `stages` chained stages of `ops` chained operators, the stages chained across
// jobs, one dataset read and one written by each job; `captured` (a stage number) holds a capture point.
function application(jobs, stages, ops, { captured = null } = {}) {
  const nodes = [{ id: 'application', kind: 'application', label: 'bench' }];
  const edges = [];
  let previous = null;
  for (let j = 0; j < jobs; j += 1) {
    nodes.push({ id: `job:${j}`, kind: 'job', parent: 'application', label: `Job ${j}`, data: { job_id: j } });
    nodes.push({ id: `dataset:in-${j}`, kind: 'dataset' }, { id: `dataset:out-${j}`, kind: 'dataset' });
    for (let s = j * stages; s < (j + 1) * stages; s += 1) {
      nodes.push({ id: `stage:${s}`, kind: 'stage', parent: `job:${j}` });
      for (let o = 0; o < ops; o += 1) {
        const id = `op:${s}:${o}`;
        nodes.push({ id, kind: 'operator', parent: `stage:${s}` });
        if (previous) edges.push({ source: previous, target: id, kind: o ? 'narrow' : 'shuffle' });
        if (s === j * stages && o === 0) edges.push({ source: `dataset:in-${j}`, target: id, kind: 'read' });
        previous = id;
      }
      if (s === captured) nodes.push({ id: 'capture:1', kind: 'capture', parent: `op:${s}:0` });
    }
    edges.push({ source: previous, target: `dataset:out-${j}`, kind: 'write' });
  }
  return { application: {}, nodes, edges };
}

describe('a window on a graph too big to draw', () => {
  it('draws the leaves nearest the framed job: its outputs first, then along edges both ways', () => {
    const graph = application(500, 1, 10);
    const tree = zoomTree(graph);
    const others = [...tree.nodes.keys()].filter((id) => id.startsWith('job:') && id !== 'job:499');
    const collapsed = zoomOut(tree, levelState(tree, 'stage'), others);
    const visible = visibleGraph(graph, collapsed, tree);
    assert.equal(drawnLeafIds(visible).length, 1500, '499 jobs, one stage, 1,000 datasets');
    const seeds = windowSeeds(tree, visible, collapsed, 'job:499');
    assert.deepEqual(seeds, ['stage:499']);
    const nearest = nearestLeaves(visible, seeds, 10);
    assert.equal(nearest.length, 10);
    assert.deepEqual(nearest.slice(0, 4).sort(), ['dataset:in-499', 'dataset:out-499', 'job:498', 'stage:499']);
    const window = withAncestors(tree, nearest);
    assert.ok(window.has('job:499') && window.has('application'), 'the boxes around them too');
    const drawn = restrictTo(visible, window);
    assert.equal(drawn.nodes.length, 12);
    assert.ok(drawn.edges.every((edge) => window.has(edge.source) && window.has(edge.target)));
    assert.equal(restrictTo(visible, null), visible, 'no window: everything');
  });

  it('starts from the capture points when the job has some, else from what nothing inside follows', () => {
    const graph = application(1, 50, 2, { captured: 20 });
    const tree = zoomTree(graph);
    const collapsed = levelState(tree, 'stage');
    const visible = visibleGraph(graph, collapsed, tree);
    assert.deepEqual(windowSeeds(tree, visible, collapsed, 'job:0'), ['stage:20']);
    const near = nearestLeaves(visible, ['stage:20'], 5);
    assert.deepEqual(near, ['stage:20', 'stage:19', 'stage:21', 'stage:18', 'stage:22']);
    const plain = application(1, 50, 2);
    const plainTree = zoomTree(plain);
    const plainVisible = visibleGraph(plain, collapsed, plainTree);
    assert.deepEqual(windowSeeds(plainTree, plainVisible, collapsed, 'job:0'), ['stage:49'], 'the last stage');
  });

  it('zooms into a stage of 5,000 operators by its last ones, only among its own', () => {
    const graph = application(1, 2, 2500);
    const tree = zoomTree(graph);
    const collapsed = zoomIn(levelState(tree, 'stage'), 'stage:1');
    const visible = visibleGraph(graph, collapsed, tree);
    const inside = new Set(drawnLeafIds(visible).filter((id) => id.startsWith('op:1:')));
    const seeds = windowSeeds(tree, visible, collapsed, 'stage:1');
    assert.deepEqual(seeds, ['op:1:2499']);
    const near = nearestLeaves(visible, seeds, 100, inside);
    assert.equal(near.length, 100);
    assert.ok(near.every((id) => inside.has(id)), 'nothing outside the stage');
    assert.equal(near.at(-1), 'op:1:2400');
  });
});

describe('a window on unconnected jobs', () => {
  it('goes on with the jobs nearest in the graph\'s order when no edge leads further', () => {
    const graph = {
      nodes: [{ id: 'application', kind: 'application' },
        ...Array.from({ length: 9 }, (_, j) => ({ id: `job:${j}`, kind: 'job', parent: 'application' }))],
      edges: [{ source: 'job:4', target: 'job:5' }],
    };
    const visible = visibleGraph(graph, new Set(), zoomTree(graph));
    const nearest = nearestLeaves(visible, ['job:4'], 5);
    assert.deepEqual(nearest.slice(0, 3), ['job:4', 'job:5', 'job:3'], 'along its edge first, then beside it');
    assert.deepEqual(nearest.slice(3).sort(), ['job:2', 'job:6']);
    assert.equal(nearestLeaves(visible, ['job:4'], 50).length, 9, 'no more than there are');
  });
});
