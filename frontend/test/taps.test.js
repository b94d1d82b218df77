import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DOUBLE_TAP_MS, onNodeTap, onSelectionChange } from '../src/taps.js';

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

describe('selection changes', () => {
  it('tells a burst of adds, selects and removes once, with what is selected after it', () => {
    const handlers = [];
    let selected = false;
    let asked = 0;
    const cy = {
      on: (events, selector, fn) => handlers.push(fn),
      nodes: () => ({ nonempty: () => { asked += 1; return selected; } }),
    };
    const queued = [];
    const seen = [];
    onSelectionChange(cy, (some) => seen.push(some), { later: (fn) => queued.push(fn) });
    for (let i = 0; i < 500; i += 1) handlers.forEach((fn) => fn()); // a drawing's adds
    selected = true;
    assert.equal(queued.length, 1);
    queued.shift()();
    assert.deepEqual(seen, [true]);
    assert.equal(asked, 1, 'the selection asked once, not once an added node');
    handlers.forEach((fn) => fn());
    selected = false;
    queued.shift()();
    assert.deepEqual(seen, [true, false]);
  });
});
