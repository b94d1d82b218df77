// toElements' output fed to real Cytoscape (headless, no DOM) and laid out with dagre.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { layoutOptions, syncElements, toElements } from '../src/graph.js';
import { expandInPlace, leafPositions, restorePositions, runLayout } from '../src/layout.js';
import { levelState, visibleGraph, zoomIn, zoomTree } from '../src/zoom.js';
import { graphStyle } from '../src/style.js';
import { fixture } from './helpers.js';

cytoscape.use(dagre);

const instances = [];
// Cytoscape keeps an animation timer running until destroyed, which would keep the test process alive.
after(() => instances.forEach((cy) => cy.destroy()));

function render(graph, options) {
  const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle(), elements: toElements(graph, options) });
  instances.push(cy);
  cy.layout({ ...layoutOptions(), fit: false }).run();
  return cy;
}

describe('toElements with Cytoscape', () => {
  it('builds compound stages that Cytoscape accepts and dagre lays out left to right', () => {
    const cy = render(fixture('wordcount_graph.json'));
    assert.equal(cy.nodes('.stage').length, 2);
    assert.ok(cy.getElementById('stage:0').isParent());
    assert.equal(cy.getElementById('stage:0').children().length, 3);
    assert.equal(cy.nodes('.dataset').filter((n) => n.isChild()).length, 0);
    const x = (id) => cy.getElementById(id).position('x');
    assert.ok(x('dataset:1') < x('op:0:0'), 'the input dataset is left of the operator reading it');
    assert.ok(x('op:0:2') < x('op:1:3'), 'the shuffle goes left to right');
    assert.ok(x('op:1:4') < x('dataset:2'), 'the output dataset is right of its writer');
  });

  it('accepts graphs with dangling edges and empty graphs', () => {
    assert.equal(render(fixture('dangling_graph.json')).nodes().length, 3);
    assert.equal(render(fixture('empty_graph.json')).elements().length, 0);
  });
});

describe('layout of a real run with skipped stages', () => {
  const graph = fixture('skipped_stages_graph.json');

  it('hides skipped stages and lays the rest out left to right, datasets at the ends', () => {
    const cy = render(graph, { showSkipped: false });
    assert.equal(cy.nodes('.stage').length, 8);
    assert.equal(cy.nodes('.status-skipped').length, 0);
    assert.equal(cy.nodes('.dataset').length, 4);
    const x = (id) => cy.getElementById(id).position('x');
    const box = (id) => cy.getElementById(id).boundingBox({ includeLabels: false });
    // The output written by stage 3 as a whole sits right of all of stage 3, not beside its first operator.
    assert.ok(box('dataset:3').x1 > box('stage:3').x2, 'the written dataset is right of its stage');
    assert.ok(box('dataset:1').x2 < box('stage:0').x1, 'the input dataset is left of its reader');
    assert.ok(box('dataset:4').x2 < box('stage:13').x1, 'a dataset read by a whole stage is left of it');
    assert.ok(x('op:0:3') < x('op:1:4') && x('op:1:12') < x('op:2:13') && x('op:2:16') < x('op:11:17'));
  });

  it('shows skipped stages on request', () => {
    const cy = render(graph, { showSkipped: true });
    assert.equal(cy.nodes('.stage').length, 14);
    assert.equal(cy.nodes('.status-skipped').length, 6);
    assert.ok(cy.getElementById('stage:6->stage:7').nonempty());
  });
});

describe('the flat layout of big graphs', () => {
  for (const flat of [false, true]) {
    it(`keeps the same left-to-right order as the compound one (flat: ${flat})`, () => {
      const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle(), elements: toElements(fixture('skipped_stages_graph.json'), { showSkipped: false }) });
      instances.push(cy);
      assert.equal(runLayout(cy, { flat }), flat ? 'flat' : 'compound');
      const x = (id) => cy.getElementById(id).position('x');
      const box = (id) => cy.getElementById(id).boundingBox({ includeLabels: false });
      assert.ok(x('op:0:3') < x('op:1:4') && x('op:1:12') < x('op:2:13') && x('op:2:16') < x('op:11:17'));
      assert.ok(box('dataset:3').x1 > box('stage:3').x2, 'the written dataset is right of its stage');
      assert.ok(box('dataset:1').x2 < box('stage:0').x1, 'the input dataset is left of its reader');
      // no two leaves overlap
      const leaves = cy.nodes().filter((n) => !n.isParent()).map((n) => n.boundingBox({ includeLabels: false }));
      for (let i = 0; i < leaves.length; i += 1) {
        for (let j = i + 1; j < leaves.length; j += 1) {
          const [a, b] = [leaves[i], leaves[j]];
          assert.ok(a.x2 <= b.x1 || b.x2 <= a.x1 || a.y2 <= b.y1 || b.y2 <= a.y1, `leaves ${i} and ${j} overlap`);
        }
      }
    });
  }
});

describe('zooming one node in place', () => {
  const graph = fixture('skipped_stages_graph.json');
  const tree = zoomTree(graph);
  const drawState = (collapsed) => {
    const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle(), elements: toElements(visibleGraph(graph, collapsed, tree)) });
    instances.push(cy);
    return cy;
  };
  const leafBoxes = (cy) => cy.nodes().filter((n) => !n.isParent()).map((n) => ({ id: n.id(), ...n.boundingBox({ includeLabels: false }) }));
  const overlapping = (boxes) => boxes.flatMap((a, i) => boxes.slice(i + 1)
    .filter((b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2).map((b) => `${a.id} / ${b.id}`));

  for (const flat of [false, true]) {
    it(`lays out what a node holds where it was, moves the rest aside, overlaps nothing (flat: ${flat})`, () => {
      let zoomed = 0;
      for (const level of ['job', 'stage']) {
        const state = levelState(tree, level);
        const before = drawState(state);
        runLayout(before, { flat });
        const positions = leafPositions(before);
        for (const id of [...state].filter((node) => before.getElementById(node).nonempty())) {
          const box = before.getElementById(id).boundingBox({ includeLabels: false });
          const after = drawState(zoomIn(state, id));
          assert.equal(expandInPlace(after, positions, box), true);
          assert.deepEqual(overlapping(leafBoxes(after)), [], `zooming into ${id} at the ${level} level`);
          const inside = after.nodes().filter((n) => !n.isParent() && !positions.has(n.id())).map((n) => n.id());
          const x = (cy, node) => cy.getElementById(node).position('x');
          const centre = (box.x1 + box.x2) / 2;
          for (const [other, p] of positions) {
            if (other === id) continue;
            // every other node keeps its side of the zoomed node, and its order with the others
            if (p.x < centre) assert.ok(inside.every((n) => x(after, other) < x(after, n)), `${other} stays left of ${id}`);
            if (p.x > centre) assert.ok(inside.every((n) => x(after, other) > x(after, n)), `${other} stays right of ${id}`);
          }
          const order = (cy) => [...positions.keys()].filter((n) => n !== id).sort((a, b) => x(cy, a) - x(cy, b));
          assert.deepEqual(order(after), order(before));
          zoomed += 1;
        }
        // Back: the state drawn before comes back exactly as it was.
        const back = drawState(state);
        assert.equal(restorePositions(back, positions), true);
        assert.deepEqual(leafPositions(back), positions);
        assert.equal(restorePositions(back, new Map()), false);
      }
      assert.ok(zoomed >= 8);
    });
  }
});

describe('syncElements', () => {
  it('draws exactly the new elements, keeping the unchanged ones (and their positions)', () => {
    const graph = fixture('skipped_stages_graph.json');
    const tree = zoomTree(graph);
    const cy = cytoscape({ headless: true, styleEnabled: true, style: graphStyle() });
    instances.push(cy);
    const stages = levelState(tree, 'stage');
    const first = toElements(visibleGraph(graph, stages, tree));
    assert.equal(syncElements(cy, first).length, first.length);
    cy.getElementById('dataset:1').position({ x: 123, y: 45 });
    const kept = cy.getElementById('dataset:1');
    const second = toElements(visibleGraph(graph, zoomIn(stages, 'stage:1'), tree));
    const added = syncElements(cy, second);
    const ids = (list) => list.map((e) => e.data.id).sort();
    assert.deepEqual(cy.elements().map((e) => e.id()).sort(), ids(second));
    assert.ok(added.length < second.length / 2, 'only what changed is added');
    assert.equal(cy.getElementById('dataset:1'), kept);
    assert.deepEqual(kept.position(), { x: 123, y: 45 });
    const stage = second.find((e) => e.data.id === 'stage:1');
    assert.equal(cy.getElementById('stage:1').data('label'), stage.data.label, 'a node drawn otherwise is replaced');
    assert.ok(cy.getElementById('stage:1').isParent());
    // and back
    syncElements(cy, first);
    assert.deepEqual(cy.elements().map((e) => e.id()).sort(), ids(first));
    assert.equal(cy.getElementById('stage:1').isParent(), false);
  });
});
