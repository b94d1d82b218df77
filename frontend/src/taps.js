// Taps on graph nodes, telling a double tap (two taps on one node within DOUBLE_TAP_MS) from a
// single one. Cytoscape's own dbltap fires for any two taps close in time, on the same node or not.

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
