// What the application page draws of a zoom state too big to draw whole: the drawn nodes nearest
// to what matters (seeds: the framed job's capture points or outputs, or the last operators of a
// stage zoomed into), up to a budget. Drawing, styling and laying out 1,500 nodes of which the
// view shows 50 was most of a 500-job application's opening (2 s of dagre alone); what is left out
// is drawn by choosing a level. Pure: no DOM, no Cytoscape; a visible graph (zoom.visibleGraph)
// and the zoom tree in, node ids out.

import { shownAs } from './zoom.js';

/** Leaves drawn beyond what the view reads (framing.readableNodeCount), for panning around it. */
export const WINDOW_FACTOR = 2;

/** The drawn leaves of `visible` (the nodes no drawn node sits inside), in its order. */
export function drawnLeafIds(visible) {
  const parents = new Set();
  for (const node of visible.nodes) if (node.parent !== null && node.parent !== undefined) parents.add(String(node.parent));
  return visible.nodes.map((node) => String(node.id)).filter((id) => !parents.has(id));
}

function adjacency(visible) {
  const next = new Map();
  const link = (a, b) => {
    if (!next.has(a)) next.set(a, []);
    next.get(a).push(b);
  };
  for (const edge of visible.edges) {
    link(String(edge.source), String(edge.target));
    link(String(edge.target), String(edge.source));
  }
  return next;
}

// Each drawn node's place in the graph's order: that of the outermost node holding it below the
// root (a stage's job), so that the jobs next to a job come next to its stages.
function orderPlaces(visible) {
  const index = new Map(visible.nodes.map((node, i) => [String(node.id), i]));
  const parentOf = new Map(visible.nodes.map((node) => [String(node.id), node.parent == null ? null : String(node.parent)]));
  const place = new Map();
  for (const id of index.keys()) {
    let top = id;
    while (parentOf.get(top) !== null && parentOf.get(top) !== undefined && parentOf.get(parentOf.get(top))) top = parentOf.get(top);
    place.set(id, index.get(top));
  }
  return place;
}

/**
 * The drawn leaves nearest to `seeds` (drawn ids), following edges both ways, the seeds first and
 * then by distance, at most `budget` of them; only among `among` (a Set of leaf ids) when given.
 * Compound nodes an edge ends on are crossed but not counted. When the edges lead no further (500
 * independent jobs), the walk goes on from the leaf nearest the seeds in the graph's order (the
 * neighbouring job).
 */
export function nearestLeaves(visible, seeds, budget, among = null) {
  const leaves = new Set(drawnLeafIds(visible));
  const next = adjacency(visible);
  const counted = (id) => leaves.has(id) && (!among || among.has(id));
  const candidates = [...leaves].filter(counted);
  const place = orderPlaces(visible);
  const start = [...seeds].map(String).filter(counted);
  const centre = start.length ? place.get(start[0]) : 0;
  const byOrder = [...candidates].sort((a, b) => Math.abs(place.get(a) - centre) - Math.abs(place.get(b) - centre));
  const seen = new Set();
  const out = [];
  let queue = start;
  let k = 0;
  while (out.length < budget) {
    if (!queue.length) {
      while (k < byOrder.length && seen.has(byOrder[k])) k += 1;
      if (k === byOrder.length) break;
      queue = [byOrder[k]];
    }
    const following = [];
    for (const id of queue) {
      if (seen.has(id)) continue;
      seen.add(id);
      if (counted(id)) {
        out.push(id);
        if (out.length >= budget) break;
      }
      for (const other of next.get(id) ?? []) if (!seen.has(other) && (counted(other) || !leaves.has(other))) following.push(other);
    }
    queue = following;
  }
  return out;
}

/** `ids` and every node around them in the zoom tree: the ids a window draws. */
export function withAncestors(tree, ids) {
  const out = new Set();
  for (const id of ids) {
    for (let p = String(id); p !== undefined && !out.has(p); p = tree.parentOf.get(p)) out.add(p);
  }
  return out;
}

/** `visible` with only the nodes in `window` (a Set of ids), and the edges between them. */
export function restrictTo(visible, window) {
  if (!window) return visible;
  return {
    ...visible,
    nodes: visible.nodes.filter((node) => window.has(String(node.id))),
    edges: visible.edges.filter((edge) => window.has(String(edge.source)) && window.has(String(edge.target))),
  };
}

/** Whether `id` is `ancestor` or inside it. */
export function within(tree, id, ancestor) {
  for (let p = id; p !== undefined; p = tree.parentOf.get(p)) if (p === ancestor) return true;
  return false;
}

/**
 * Where a window starts inside `holder` (a node id, or null for the whole graph) as drawn in
 * `visible` at zoom state `collapsed`: the drawn leaves holding capture points, else the leaves
 * nothing else inside it follows (its outputs), else all its leaves.
 */
export function windowSeeds(tree, visible, collapsed, holder) {
  const inside = drawnLeafIds(visible).filter((id) => holder === null || within(tree, id, holder));
  const insideSet = new Set(inside);
  const captured = new Set();
  for (const [id, node] of tree.nodes) {
    if (node.kind !== 'capture') continue;
    const drawn = shownAs(tree, collapsed, id);
    if (insideSet.has(drawn)) captured.add(drawn);
  }
  if (captured.size) return [...captured];
  const followed = new Set();
  for (const edge of visible.edges) {
    if (insideSet.has(String(edge.target)) && insideSet.has(String(edge.source))) followed.add(String(edge.source));
  }
  const outputs = inside.filter((id) => !followed.has(id));
  return outputs.length ? outputs : inside;
}
