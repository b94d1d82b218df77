// What each graph page opens on, pure: which nodes matter and the viewport that shows them.
// No DOM and no Cytoscape: the pages pass the laid-out nodes' boxes (model coordinates) in.
//
// The application page opens on the whole graph when it fits the view at a readable zoom, at the
// deepest level for which it does (openingLevels); else on the job that holds most of its capture
// points, and when even its stages are more than the view could read (readableNodeCount), on that
// job's stages with every other job collapsed (focusedOpening). A trace or what-if page opens on the path its answer took: the capture points crossed,
// the stages holding them and the datasets those stages read or wrote.

import { READABLE_ZOOM, layoutOptions, readableViewport } from './graph.js';
import { labelHeight, labelWidth } from './style.js';
import { LEVELS, isCompound, levelState, readableLevel, shownAs, zoomOut } from './zoom.js';

export const VIEW_PADDING = 24;
/** A path too long for the readable zoom is shown whole down to this zoom (labels still drawn). */
export const PATH_MIN_ZOOM = 0.5;

/** The box around `ids`' boxes (a Map id -> {x1, y1, x2, y2}); null when none of them has one. */
export function unionBox(boxes, ids) {
  let out = null;
  for (const id of ids) {
    const b = boxes.get(id);
    if (!b) continue;
    out = out
      ? { x1: Math.min(out.x1, b.x1), y1: Math.min(out.y1, b.y1), x2: Math.max(out.x2, b.x2), y2: Math.max(out.y2, b.y2) }
      : { x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2 };
  }
  return out && { ...out, w: out.x2 - out.x1, h: out.y2 - out.y1 };
}

/** The zoom at which `box` fills the view (width x height pixels) but for the padding. */
export function fitZoom(box, width, height, padding = VIEW_PADDING) {
  return Math.min((width - 2 * padding) / Math.max(box.w, 1), (height - 2 * padding) / Math.max(box.h, 1));
}

/** Whether `box` fits the view whole at a zoom where labels read (READABLE_ZOOM or more). */
export function fitsReadable(box, width, height) {
  return Boolean(box) && fitZoom(box, width, height) >= READABLE_ZOOM;
}

/**
 * The levels the application page tries when it opens, deepest first: from the readable level
 * (zoom.readableLevel, by node count) up to the stages, never above them (a handful of job boxes
 * says little). The page draws each in turn until one fits the view.
 */
export function openingLevels(tree) {
  const deepest = readableLevel(tree);
  const kinds = new Set([...tree.nodes.values()].map((node) => node.kind));
  const rank = (level) => LEVELS.indexOf(level);
  const out = LEVELS.filter((level) => kinds.has(level) && rank(level) <= rank(deepest) && rank(level) >= rank('stage'))
    .reverse();
  return out.length ? out : [deepest];
}

/**
 * How many nodes a view of `width` x `height` pixels shows with readable labels, at most: the
 * smallest node the style draws (an empty label's box, 80 x 36) with the layout's separations
 * (rankSep beside it, nodeSep below it), at READABLE_ZOOM (its 12 px labels drawn at 8.4 px),
 * packed as a grid inside the padding. The application page's view at 1280x800 (873 x 475) reads
 * 9 x 6 = 54. A real layout packs fewer (wider labels, chains on one row): a zoom state drawing
 * more leaves than this cannot be read whole, whatever its labels.
 */
export function readableNodeCount(width, height, padding = VIEW_PADDING) {
  const { rankSep, nodeSep } = layoutOptions();
  const across = Math.floor((width - 2 * padding) / ((labelWidth('') + rankSep) * READABLE_ZOOM));
  const down = Math.floor((height - 2 * padding) / ((labelHeight('') + nodeSep) * READABLE_ZOOM));
  return Math.max(0, across) * Math.max(0, down);
}

/** The nodes zoom state `collapsed` draws as boxes of their own (a collapsed node, not one around others). */
function drawnLeaves(tree, collapsed) {
  let count = 0;
  for (const id of tree.nodes.keys()) {
    if (shownAs(tree, collapsed, id) === id && (collapsed.has(id) || !isCompound(tree, id))) count += 1;
  }
  return count;
}

/**
 * The zoom state an application page opens on when its stages level draws more nodes than the
 * view reads (readableNodeCount): the stages level with every job but `job` (focusJob's) collapsed,
 * so that only what is framed is drawn (a 500-stage application: 161 nodes instead of 651, the
 * most of its first paint) and a ZoomIn on a job shows its stages. Returns {level, collapsed}, or
 * null when the stages level reads, or has no other job to collapse.
 */
export function focusedOpening(tree, job, width, height) {
  const kinds = new Set([...tree.nodes.values()].map((node) => node.kind));
  if (job === null || !kinds.has('stage')) return null;
  const stages = levelState(tree, 'stage');
  if (drawnLeaves(tree, stages) <= readableNodeCount(width, height)) return null;
  const others = [...tree.nodes.entries()]
    .filter(([id, node]) => node.kind === 'job' && id !== job && isCompound(tree, id)).map(([id]) => id);
  return others.length ? { level: 'stage', collapsed: zoomOut(tree, stages, others) } : null;
}

/**
 * The job an application page frames when the whole graph does not fit: the one holding the
 * most capture points (the later of equals: the job that wrote the outputs), else the last job.
 * Returns its node id, or null when the graph has no job.
 */
export function focusJob(tree) {
  const held = new Map();
  for (const [id, node] of tree.nodes) {
    if (node.kind === 'job') held.set(id, held.get(id) ?? 0);
    if (node.kind !== 'capture') continue;
    for (let p = tree.parentOf.get(id); p !== undefined; p = tree.parentOf.get(p)) {
      if (tree.nodes.get(p).kind === 'job') held.set(p, (held.get(p) ?? 0) + 1);
    }
  }
  const order = (id) => Number(tree.nodes.get(id).data?.job_id ?? 0);
  let best = null;
  for (const id of held.keys()) {
    if (best === null || held.get(id) > held.get(best) || (held.get(id) === held.get(best) && order(id) >= order(best))) best = id;
  }
  return best;
}

/**
 * The drawn nodes of a trace's or what-if's path: each crossed capture point as drawn in zoom
 * state `collapsed` (itself, or the node collapsed over it), the stage holding it when that is
 * drawn, and the datasets whose read or write edges touch those stages. `points` are the
 * question graph's ({capture_id}); `edges` the application graph's.
 */
export function pathNodes(tree, collapsed, points, edges = []) {
  const out = new Set();
  const stages = new Set();
  const stageOf = (id) => {
    for (let p = id; p !== undefined; p = tree.parentOf.get(p)) if (tree.nodes.get(p)?.kind === 'stage') return p;
    return null;
  };
  for (const point of points ?? []) {
    const id = `capture:${point.capture_id}`;
    if (!tree.nodes.has(id)) continue;
    const drawn = shownAs(tree, collapsed, id);
    out.add(drawn);
    const stage = stageOf(drawn);
    if (stage !== null) {
      stages.add(stage);
      if (shownAs(tree, collapsed, stage) === stage) out.add(stage);
    }
  }
  for (const edge of edges) {
    const ends = [String(edge.source), String(edge.target)];
    const dataset = ends.find((id) => tree.nodes.get(id)?.kind === 'dataset');
    const other = ends.find((id) => id !== dataset);
    if (dataset !== undefined && other !== undefined && stages.has(stageOf(other))) out.add(dataset);
  }
  return out;
}

const leftMiddle = (box) => ({ x: box.x1, y: (box.y1 + box.y2) / 2 });

/**
 * The viewport a page opens with: the whole graph (`whole`, a box) when it fits at a readable
 * zoom; else `focus` (a box, or null) fitted, never below `minZoom`, its left side (the sources)
 * in view when it is longer than that. Without a focus, the whole graph from its left side.
 * Returns {zoom, pan} for cy.viewport().
 */
export function openingViewport(whole, focus, width, height, { minZoom = READABLE_ZOOM } = {}) {
  if (!focus || fitsReadable(whole, width, height)) {
    return readableViewport(whole, width, height, { padding: VIEW_PADDING, anchor: whole ? leftMiddle(whole) : null });
  }
  return readableViewport(focus, width, height, { padding: VIEW_PADDING, minZoom, anchor: leftMiddle(focus) });
}
