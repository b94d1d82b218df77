// Laying a drawn graph out, left to right with dagre.
//
// Small graphs go through cytoscape-dagre, which lays compound nodes (jobs, stages) out as boxes
// that never overlap, at a price: dagre's compound graphs cost about five times a flat one (340 ms
// against 60 ms for 220 stages in 10 jobs). Past FLAT_FROM drawn nodes, dagre runs on the leaves
// only (collapsed nodes included) and the boxes wrap what they hold: the graph stays responsive;
// boxes of jobs whose stages share ranks may overlap.

import dagre from '@dagrejs/dagre';

import { layoutMinLen, layoutOptions, readableViewport } from './graph.js';

export const FLAT_FROM = 150;

function leafOf(node) {
  let leaf = node;
  while (leaf.isParent() && leaf.children().length) leaf = leaf.children()[0];
  return leaf;
}

/** Lays out `cy`'s elements (synchronously); `flat` forces (true) or forbids (false) the flat run. */
export function runLayout(cy, { flat = cy.nodes().length > FLAT_FROM } = {}) {
  const options = layoutOptions();
  if (!flat) {
    cy.layout(options).run();
    return 'compound';
  }
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: options.rankDir, nodesep: options.nodeSep, ranksep: options.rankSep, edgesep: options.edgeSep });
  g.setDefaultEdgeLabel(() => ({}));
  const leaves = cy.nodes().filter((node) => !node.isParent());
  leaves.forEach((node) => {
    const size = node.layoutDimensions({ nodeDimensionsIncludeLabels: true });
    g.setNode(node.id(), { width: size.w, height: size.h });
  });
  cy.edges().forEach((edge) => {
    const source = leafOf(edge.source()).id();
    const target = leafOf(edge.target()).id();
    if (source !== target) g.setEdge(source, target, { minlen: layoutMinLen(edge), weight: 1 }, edge.id());
  });
  dagre.layout(g);
  cy.batch(() => leaves.forEach((node) => {
    const { x, y } = g.node(node.id());
    node.position({ x, y });
  }));
  return 'flat';
}

/**
 * Frames what `cy` draws at a readable zoom (graph.readableViewport), on the nodes' boxes: they
 * are sized to their labels already, and measuring every label for the bounding box cost 50-70 ms
 * at 250 nodes. A graph too big for the view opens at its leftmost node (a source).
 */
export function frameReadable(cy) {
  const box = cy.nodes().boundingBox({ includeLabels: false, includeOverlays: false });
  let anchor = null;
  cy.nodes().forEach((node) => {
    if (node.isParent()) return;
    const p = node.position();
    if (!anchor || p.x < anchor.x) anchor = { x: p.x, y: p.y };
  });
  cy.viewport(readableViewport(box, cy.width(), cy.height(), { anchor }));
}
