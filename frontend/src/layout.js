// Laying a drawn graph out, left to right with dagre.
//
// Small graphs go through cytoscape-dagre, which lays compound nodes (jobs, stages) out as boxes
// that never overlap, at a price: dagre's compound graphs cost about five times a flat one (340 ms
// against 60 ms for 220 stages in 10 jobs). Past FLAT_FROM drawn nodes, dagre runs on the leaves
// only (collapsed nodes included) and the boxes wrap what they hold: the graph stays responsive;
// boxes of jobs whose stages share ranks may overlap.

import dagre from '@dagrejs/dagre';

import { layoutMinLen, layoutOptions, readableViewport } from './graph.js';
import { connectedParts, packInRows } from './packing.js';

export const FLAT_FROM = 150;
// Fewer unconnected parts than this stay in dagre's column (a skipped stage beside its job): only
// many of them make the column too tall to read, and packing moves nodes off their rank's column.
export const PACK_FROM = 8;

function leafOf(node) {
  let leaf = node;
  while (leaf.isParent() && leaf.children().length) leaf = leaf.children()[0];
  return leaf;
}

/**
 * A leaf's drawn size from its style alone (style.js sizes a node to its label: labelWidth), with
 * its border: layoutDimensions measured every label and brought the compound boxes around each
 * leaf up to date, most of a 500-stage graph's layout (0.8 s of 1.2 s under load).
 */
function styledSize(node) {
  const border = node.pstyle('border-width').pfValue;
  return { w: node.pstyle('width').pfValue + border, h: node.pstyle('height').pfValue + border };
}

/** dagre's (flat) centres and sizes of `leaves` joined by the edges between them (id -> {x, y, w, h}). */
function flatPositions(leaves, edges, options) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: options.rankDir, nodesep: options.nodeSep, ranksep: options.rankSep, edgesep: options.edgeSep });
  g.setDefaultEdgeLabel(() => ({}));
  leaves.forEach((node) => {
    const { w, h } = styledSize(node);
    g.setNode(node.id(), { width: w, height: h });
  });
  edges.forEach((edge) => {
    const source = leafOf(edge.source()).id();
    const target = leafOf(edge.target()).id();
    if (source !== target && g.hasNode(source) && g.hasNode(target)) {
      g.setEdge(source, target, { minlen: layoutMinLen(edge), weight: 1 }, edge.id());
    }
  });
  dagre.layout(g);
  const out = new Map();
  leaves.forEach((node) => {
    const { x, y, width, height } = g.node(node.id());
    out.set(node.id(), { x, y, w: width, h: height });
  });
  return out;
}

/** The box around flatPositions' nodes: {x1, y1, x2, y2, w, h}. */
function placedBox(placed) {
  let x1 = Infinity; let x2 = -Infinity; let y1 = Infinity; let y2 = -Infinity;
  for (const { x, y, w, h } of placed.values()) {
    x1 = Math.min(x1, x - w / 2); x2 = Math.max(x2, x + w / 2);
    y1 = Math.min(y1, y - h / 2); y2 = Math.max(y2, y + h / 2);
  }
  return { x1, y1, x2, y2, w: x2 - x1, h: y2 - y1 };
}

// The outermost box holding `node` but the application's (its job), else itself: what a part keeps together.
function outerBox(node) {
  const boxes = node.ancestors().filter((box) => box.data('kind') !== 'application');
  return boxes.length ? boxes[boxes.length - 1].id() : node.id();
}

/**
 * flatPositions of each connected part of `leaves` (joined by an edge, or by the job holding them)
 * on its own, the parts packed in rows in their order (packing.js). One part: flatPositions.
 */
function packedPositions(cy, leaves, edges, options, aspect) {
  const index = new Map(leaves.map((node, i) => [node.id(), i]));
  const links = [];
  const firstIn = new Map();
  leaves.forEach((node, i) => {
    const box = outerBox(node);
    if (firstIn.has(box)) links.push([firstIn.get(box), i]);
    else firstIn.set(box, i);
  });
  edges.forEach((edge) => {
    const s = index.get(leafOf(edge.source()).id());
    const t = index.get(leafOf(edge.target()).id());
    if (s !== undefined && t !== undefined) links.push([s, t]);
  });
  // the parts in the order of their jobs (a job's stages come after every job in the API's order)
  const order = new Map(cy.nodes().map((node, i) => [node.id(), i]));
  const rank = (i) => order.get(outerBox(leaves[i]));
  const parts = connectedParts(leaves.length, links)
    .map((part) => ({ part, first: Math.min(...part.map(rank)) })).sort((a, b) => a.first - b.first).map(({ part }) => part);
  if (parts.length < PACK_FROM) return flatPositions(leaves, edges, options);
  const partOf = new Map();
  parts.forEach((part, p) => part.forEach((i) => partOf.set(leaves[i].id(), p)));
  const edgesOf = parts.map(() => []);
  edges.forEach((edge) => {
    const p = partOf.get(leafOf(edge.source()).id());
    if (p !== undefined && p === partOf.get(leafOf(edge.target()).id())) edgesOf[p].push(edge);
  });
  const laid = parts.map((part, p) => flatPositions(part.map((i) => leaves[i]), edgesOf[p], options));
  const boxes = laid.map(placedBox);
  const corners = packInRows(boxes, { aspect, gap: options.rankSep });
  const out = new Map();
  laid.forEach((placed, p) => {
    const dx = corners[p].x - boxes[p].x1;
    const dy = corners[p].y - boxes[p].y1;
    for (const [id, { x, y, w, h }] of placed) out.set(id, { x: x + dx, y: y + dy, w, h });
  });
  return out;
}

/** Lays out `cy`'s elements (synchronously); `flat` forces (true) or forbids (false) the flat run. */
export function runLayout(cy, { flat = cy.nodes().length > FLAT_FROM } = {}) {
  const options = layoutOptions();
  if (!flat) {
    cy.layout(options).run();
    return 'compound';
  }
  const leaves = cy.nodes().filter((node) => !node.isParent());
  const aspect = cy.container() && cy.height() > 0 ? cy.width() / cy.height() : 16 / 9; // headless: 1 x 1
  const placed = packedPositions(cy, leaves, cy.edges(), options, aspect);
  cy.batch(() => leaves.forEach((node) => {
    const { x, y } = placed.get(node.id());
    node.position({ x, y });
  }));
  return 'flat';
}

/**
 * The drawn leaves' positions (id -> {x, y}): a zoom state's layout, to restore or expand from.
 * With `widths`, each one's drawn width too (`w`: cheap on nodes already rendered, whose label
 * sizes Cytoscape has measured; expandInPlace needs them, and measuring every label of a freshly
 * added graph cost ~100 ms at 250 nodes).
 */
export function leafPositions(cy, { widths = false } = {}) {
  const out = new Map();
  cy.nodes().forEach((node) => {
    if (!node.isParent()) out.set(node.id(), widths ? { ...node.position(), w: node.outerWidth() } : { ...node.position() });
  });
  return out;
}

/** Puts every drawn leaf back where `positions` has it; false (nothing moved) when one is missing. */
export function restorePositions(cy, positions) {
  const leaves = cy.nodes().filter((node) => !node.isParent());
  if (leaves.some((node) => !positions.has(node.id()))) return false;
  cy.batch(() => leaves.forEach((node) => node.position({ ...positions.get(node.id()) })));
  return true;
}

/**
 * ZoomIn of one node without laying the whole graph out again: the leaves it now shows (those
 * not in `before`, the positions drawn until then) are laid out on their own and centred where
 * the collapsed node was (`box`, its bounding box); every other leaf keeps its place, moved aside
 * by the room the contents need more than the node had: left or right of its centre by half the
 * extra width, and, in the columns the contents now cover, up or down by half the extra height.
 * So nothing overlaps and the rest of the graph stays where the user saw it. False (nothing
 * moved) when a leaf that was not new has no position in `before`.
 */
export function expandInPlace(cy, before, box, { margin = 48 } = {}) {
  const leaves = cy.nodes().filter((node) => !node.isParent());
  const fresh = leaves.filter((node) => !before.has(node.id()));
  if (!fresh.length || !box) return false;
  const ids = new Set(fresh.map((node) => node.id()));
  const inner = cy.edges().filter((edge) => ids.has(leafOf(edge.source()).id()) && ids.has(leafOf(edge.target()).id()));
  const placed = flatPositions(fresh, inner, layoutOptions());
  const { x1, y1, x2, y2 } = placedBox(placed);
  const cx = (box.x1 + box.x2) / 2;
  const cy0 = (box.y1 + box.y2) / 2;
  const dx = cx - (x1 + x2) / 2;
  const dy = cy0 - (y1 + y2) / 2;
  const halfW = (x2 - x1) / 2 + margin;
  const wider = Math.max(0, 2 * halfW - (box.x2 - box.x1)) / 2;
  const taller = Math.max(0, (y2 - y1) + 2 * margin - (box.y2 - box.y1)) / 2;
  cy.batch(() => leaves.forEach((node) => {
    const id = node.id();
    if (ids.has(id)) {
      const p = placed.get(id);
      node.position({ x: p.x + dx, y: p.y + dy });
      return;
    }
    const p = before.get(id);
    const x = p.x + Math.sign(p.x - cx) * wider;
    const covered = Math.abs(x - cx) < halfW + (p.w ?? node.outerWidth()) / 2;
    node.position({ x, y: covered ? p.y + (p.y >= cy0 ? taller : -taller) : p.y });
  }));
  return true;
}

/**
 * Frames what `cy` draws at a readable zoom (graph.readableViewport), on the nodes' boxes: they
 * are sized to their labels already, and measuring every label for the bounding box cost 50-70 ms
 * at 250 nodes. A graph too big for the view opens at its leftmost node (a source). Given `box`
 * (drawnBox of the same layout, kept from an earlier drawing), nothing is measured: on nodes just
 * added, measuring costs their whole style computation (~100 ms at 250 nodes) before the frame.
 */
export function frameReadable(cy, { box = null } = {}) {
  box = box ?? drawnBox(cy);
  let anchor = null;
  cy.nodes().forEach((node) => {
    if (node.isParent()) return;
    const p = node.position();
    if (!anchor || p.x < anchor.x) anchor = { x: p.x, y: p.y };
  });
  cy.viewport(readableViewport(box, cy.width(), cy.height(), { anchor }));
}

/** The box of everything drawn (node boxes, labels left out), as frameReadable frames it. */
export function drawnBox(cy) {
  return cy.nodes().boundingBox({ includeLabels: false, includeOverlays: false });
}

/**
 * The drawn boxes of `ids` that are drawn (id -> box), with room above each for a compound's
 * title (drawn above its box). Labels are not measured: on a graph just drawn that costs their
 * whole style computation (~75 ms for a job of a 5,000-operator application).
 */
export function nodeBoxes(cy, ids, { title = 32 } = {}) {
  const out = new Map();
  for (const id of ids) {
    const node = cy.getElementById(id);
    if (node.empty()) continue;
    const box = node.boundingBox({ includeLabels: false, includeOverlays: false });
    const y1 = node.isParent() ? box.y1 - title : box.y1;
    out.set(id, { x1: box.x1, x2: box.x2, y1, y2: box.y2, w: box.w, h: box.y2 - y1 });
  }
  return out;
}
