import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DOUBLE_TAP_MS, onNodeTap } from '../src/taps.js';

// A stand-in for the part of Cytoscape onNodeTap uses: cy.on('tap', 'node', fn) and taps fired at it.
function fakeCy() {
  const handlers = [];
  return {
    on: (event, selector, fn) => handlers.push(fn),
    tap: (id) => handlers.forEach((fn) => fn({ target: { id: () => id } })),
  };
}

describe('node taps', () => {
  it('reports a double tap only for two taps on one node within the delay', () => {
    let clock = 0;
    const seen = [];
    const cy = fakeCy();
    onNodeTap(cy, (node, double) => seen.push([node.id(), double]), { now: () => clock });
    cy.tap('a');
    clock += 100;
    cy.tap('b'); // another node: not a double tap of either
    clock += 100;
    cy.tap('b');
    clock += 100;
    cy.tap('b'); // the third tap starts over
    clock += DOUBLE_TAP_MS + 1;
    cy.tap('b'); // too late
    assert.deepEqual(seen, [['a', false], ['b', false], ['b', true], ['b', false], ['b', false]]);
  });
});
