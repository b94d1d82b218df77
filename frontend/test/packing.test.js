// Packing the unconnected parts of a drawing: pure functions, then a window of independent jobs
// laid out by real Cytoscape and dagre, headless.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import cytoscape from 'cytoscape';

import { toElements } from '../src/graph.js';
import { runLayout } from '../src/layout.js';
import { connectedParts, packInRows } from '../src/packing.js';
import { graphStyle } from '../src/style.js';
import { visibleGraph, zoomTree } from '../src/zoom.js';

const instances = [];
after(() => instances.forEach((cy) => cy.destroy()));

describe('packing parts in rows', () => {
  it('finds the connected parts, in the order of their first node', () => {
    assert.deepEqual(connectedParts(6, [[4, 1], [2, 5], [5, 4]]), [[0], [1, 2, 4, 5], [3]]);
    assert.deepEqual(connectedParts(0, []), []);
  });

  it('packs boxes left to right, wrapping into rows about the view\'s shape, in order', () => {
    const corners = packInRows(Array.from({ length: 9 }, () => ({ w: 100, h: 50 })), { aspect: 2, gap: 0 });
    // 9 boxes of 100 x 50: sqrt(45,000 x 2) = 300 wide, three rows of three
    assert.deepEqual(corners.slice(0, 4), [{ x: 0, y: 0 }, { x: 100, y: 0 }, { x: 200, y: 0 }, { x: 0, y: 50 }]);
    assert.deepEqual(corners[8], { x: 200, y: 100 });
    const wide = packInRows([{ w: 1000, h: 10 }, { w: 10, h: 10 }], { gap: 5 });
    assert.deepEqual(wide, [{ x: 0, y: 0 }, { x: 0, y: 15 }], 'a box wider than the rest has a row to itself');
  });

  it('lays 40 independent jobs out in rows, not one column, each next to the jobs numbered beside it', () => {
    const nodes = [{ id: 'application', kind: 'application', label: 'many' }];
    for (let j = 0; j < 40; j += 1) nodes.push({ id: `job:${j}`, kind: 'job', parent: 'application', label: `Job ${j}` });
    const graph = { nodes, edges: [] };
    const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle(), elements: toElements(visibleGraph(graph, new Set(), zoomTree(graph))) });
    instances.push(cy);
    assert.equal(runLayout(cy, { flat: true }), 'flat');
    const box = cy.nodes().boundingBox({ includeLabels: false });
    assert.ok(box.w > box.h, `${box.w} x ${box.h}: rows, not a column`);
    const at = (id) => cy.getElementById(id).position();
    assert.equal(at('job:1').y, at('job:0').y, 'job 1 on job 0\'s row');
    assert.ok(at('job:1').x > at('job:0').x, 'to its right');
  });
});
