// toElements' output fed to real Cytoscape (headless, no DOM) and laid out with dagre.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { layoutOptions, toElements } from '../src/graph.js';
import { fixture } from './helpers.js';

cytoscape.use(dagre);

const instances = [];
// Cytoscape keeps an animation timer running until destroyed, which would keep the test process alive.
after(() => instances.forEach((cy) => cy.destroy()));

function render(graph) {
  const cy = cytoscape({ headless: true, styleEnabled: true, elements: toElements(graph) });
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
