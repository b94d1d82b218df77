// Taps on graph nodes, telling a double tap (two taps on one node within DOUBLE_TAP_MS) from a
// single one. Cytoscape's own dbltap fires for any two taps close in time, on the same node or not.
// And changes of the selection, told once per burst of them.

export const DOUBLE_TAP_MS = 400;

/** Calls handler(node, isDouble) on every tap of a node of `cy`. */
export function onNodeTap(cy, handler, { now = () => Date.now() } = {}) {
  let last = { id: null, at: 0 };
  cy.on('tap', 'node', (event) => {
    const id = event.target.id();
    const at = now();
    const double = last.id === id && at - last.at <= DOUBLE_TAP_MS;
    last = double ? { id: null, at: 0 } : { id, at };
    handler(event.target, double);
  });
}

/**
 * Calls handler(someSelected) once after nodes are selected, unselected, added or removed, however
 * many at once: a drawing adds hundreds of nodes one event each, and asking Cytoscape which nodes
 * are selected at each one grew with the square of the nodes (70 ms for the 161 nodes of a
 * 500-stage application's opening under load, seconds at its 651 stages).
 */
export function onSelectionChange(cy, handler, { later = queueMicrotask } = {}) {
  let pending = false;
  cy.on('select unselect add remove', 'node', () => {
    if (pending) return;
    pending = true;
    later(() => {
      pending = false;
      handler(cy.nodes(':selected').nonempty());
    });
  });
}
