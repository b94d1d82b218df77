// toElements' output fed to real Cytoscape (headless, no DOM) and laid out with dagre.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { layoutOptions, toElements } from '../src/graph.js';
import { runLayout } from '../src/layout.js';
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
