// Pure conversion of the graph API answer into Cytoscape elements, and the layout options.
// No DOM and no Cytoscape import: application_view.js (and the other pages) render what this module returns.
//
// API shape (GET /api/v1/applications/<app_id>/graph/):
//   {application, nodes: [{id, kind, label, parent, data}], edges: [{id, source, target, kind}]}

import { baseName, formatBytes, formatCount, formatDuration, shortCallSites, shorten } from './format.js';

export const NODE_KINDS = ['application', 'job', 'stage', 'operator', 'capture', 'dataset'];
export const EDGE_KINDS = ['narrow', 'shuffle', 'read', 'write', 'stage', 'capture'];

const HIDDEN_WORDS = {
  job: ['job', 'jobs'],
  stage: ['stage', 'stages'],
  operator: ['operator', 'operators'],
  capture: ['capture point', 'capture points'],
};

/** What a collapsed node holds, most telling first: "+ 3 stages · 12 operators". */
export function hiddenSubtitle(hidden) {
  const parts = Object.entries(HIDDEN_WORDS)
    .filter(([kind]) => hidden?.[kind] > 0)
    .map(([kind, [one, many]]) => `${formatCount(hidden[kind])} ${hidden[kind] === 1 ? one : many}`);
  return parts.length ? `+ ${parts.join(' · ')}` : '';
}

/** Second label line of a job: "3 stages · failed" (its status when not succeeded). */
export function jobSubtitle(data) {
  return data?.status && data.status !== 'succeeded' ? data.status : '';
}

/** Second label line of a capture point: "1,204 rows". */
export function captureSubtitle(data) {
  if (data?.not_captured) return 'not captured';
  if (data?.rows === null || data?.rows === undefined) return '';
  const rows = `${formatCount(data.rows)} row${data.rows === 1 ? '' : 's'}`;
  return data.lineage_complete === false ? `${rows} · incomplete` : rows;
}

const MAX_LABEL = 40;

/** Second label line of a stage: "8 tasks · 1.20 s · failed". */
export function stageSubtitle(data) {
  const parts = [];
  const tasks = data?.metrics?.tasks ?? data?.num_tasks;
  if (tasks !== null && tasks !== undefined) parts.push(`${formatCount(tasks)} task${tasks === 1 ? '' : 's'}`);
  const runTime = data?.metrics?.executor_run_time_ms;
  if (runTime !== null && runTime !== undefined) parts.push(formatDuration(runTime));
  if (data?.status && data.status !== 'succeeded') parts.push(data.status);
  return parts.join(' · ');
}

/**
 * Second label line of an operator: what its title does not already say, among its RDD name,
 * its fused Python operators and "cached".
 */
export function operatorSubtitle(data, title = '') {
  const parts = [];
  // RDDs reading files are named by their path: the file name says enough (the panel has the rest).
  const name = data?.name && data.name.includes('/') ? baseName(data.name) : data?.name;
  if (name && !title.includes(name)) parts.push(shorten(name, 30));
  const names = (data?.python_operators ?? []).map((op) => op?.name).filter(Boolean);
  const pipeline = names.join(' → ');
  if (pipeline && !title.includes(pipeline)) parts.push(shorten(pipeline, 30));
  if (data?.cached) parts.push('cached');
  return parts.join(' · ');
}

/** Second label line of a dataset: "parquet · 1.5 MiB · read". */
export function datasetSubtitle(data) {
  const parts = [];
  if (data?.format) parts.push(data.format);
  if (data?.size_bytes !== null && data?.size_bytes !== undefined) parts.push(formatBytes(data.size_bytes));
  const directions = data?.directions ?? [];
  if (directions.length) parts.push(directions.join(' + '));
  return parts.join(' · ');
}

/** The label the server chose, or one derived from the node's data when it sent none. */
export function baseLabel(node) {
  if (node.label) return String(node.label);
  const data = node.data ?? {};
  if (node.kind === 'stage') return `Stage ${data.stage_id ?? node.id}`;
  if (node.kind === 'operator') return `${data.name ?? 'RDD'} [${data.rdd_id ?? '?'}]`;
  if (node.kind === 'dataset') return baseName(data.path) || node.id;
  if (node.kind === 'job') return `Job ${data.job_id ?? node.id}`;
  if (node.kind === 'capture') return `${data.capture_kind ?? 'capture'} ${data.capture_id ?? node.id}`;
  if (node.kind === 'application') return data.name || data.app_id || 'Application';
  return String(node.id);
}

/** The text drawn on a node: its label, shortened, and a second line of key facts. */
export function nodeLabel(node) {
  const data = node.data ?? {};
  // each line on its own: a trace's note is a line of its own below the title
  const title = baseLabel(node).split('\n').map((line) => shorten(shortCallSites(line), MAX_LABEL)).join('\n');
  let subtitle = '';
  if (node.kind === 'stage') subtitle = stageSubtitle(data);
  else if (node.kind === 'operator') subtitle = operatorSubtitle(data, baseLabel(node));
  else if (node.kind === 'dataset') subtitle = datasetSubtitle(data);
  else if (node.kind === 'job') subtitle = jobSubtitle(data);
  else if (node.kind === 'capture') subtitle = captureSubtitle(data);
  const lines = [title, subtitle];
  if (node.collapsed) lines.push(hiddenSubtitle(data.hidden));
  return lines.filter(Boolean).join('\n');
}

/** CSS-like classes that the stylesheet keys on (kind, status, dataset direction, cached). */
export function nodeClasses(node) {
  const data = node.data ?? {};
  const classes = [node.kind];
  if (node.collapsed) classes.push('collapsed');
  if ((node.kind === 'stage' || node.kind === 'job') && data.status) classes.push(`status-${data.status}`);
  if (node.kind === 'operator' && data.cached) classes.push('cached');
  if (node.kind === 'operator' && (data.python_operators ?? []).length) classes.push('python');
  if (node.kind === 'dataset') {
    const directions = new Set(data.directions ?? []);
    if (directions.has('read') && directions.has('written')) classes.push('dataset-read-written');
    else if (directions.has('written')) classes.push('dataset-written');
    else classes.push('dataset-read');
  }
  return classes;
}

// A parent is kept only if it is a node of this graph and following parents never loops.
function resolveParents(nodesById) {
  const parents = new Map();
  for (const [id, node] of nodesById) {
    const parent = node.parent;
    if (parent === null || parent === undefined || parent === id || !nodesById.has(parent)) continue;
    parents.set(id, parent);
  }
  for (const id of [...parents.keys()]) {
    const seen = new Set([id]);
    let current = parents.get(id);
    while (current !== undefined) {
      if (seen.has(current)) {
        parents.delete(id);
        break;
      }
      seen.add(current);
      current = parents.get(current);
    }
  }
  return parents;
}

/** Whether an API node is a stage Spark skipped (its shuffle output was reused from an earlier job). */
export function isSkippedStage(node) {
  return node?.kind === 'stage' && node?.data?.status === 'skipped';
}

/** How many distinct stages of the API graph were skipped. */
export function countSkippedStages(apiGraph) {
  const ids = new Set();
  for (const node of apiGraph?.nodes ?? []) {
    if (isSkippedStage(node) && node.id !== null && node.id !== undefined) ids.add(String(node.id));
  }
  return ids.size;
}

/**
 * The API graph without its skipped stages: a new graph (the input is not modified) in which
 * skipped stages, the nodes inside them (their operators, at any depth) and every edge touching
 * one of those are gone. Everything else is kept as it is, datasets left without any edge too.
 */
export function withoutSkipped(apiGraph) {
  const nodes = (apiGraph?.nodes ?? []).filter(Boolean);
  const parentOf = new Map();
  for (const node of nodes) {
    const id = String(node.id);
    if (!parentOf.has(id)) parentOf.set(id, node.parent === null || node.parent === undefined ? null : String(node.parent));
  }
  const removed = new Set(nodes.filter(isSkippedStage).map((node) => String(node.id)));
  // Nodes inside a removed node go too; the walk up the parents stops on a loop.
  for (const id of parentOf.keys()) {
    const seen = new Set([id]);
    for (let p = parentOf.get(id); p !== null && p !== undefined && !seen.has(p); p = parentOf.get(p)) {
      if (removed.has(p)) {
        removed.add(id);
        break;
      }
      seen.add(p);
    }
  }
  const keep = (id) => !removed.has(String(id));
  return {
    ...apiGraph,
    nodes: nodes.filter((node) => keep(node.id)),
    edges: (apiGraph?.edges ?? []).filter((edge) => edge && keep(edge.source) && keep(edge.target)),
  };
}

/**
 * Convert the graph API answer into Cytoscape element definitions.
 *
 * Nodes keep their API id; stages become compound parents of their operators. A node whose
 * parent is not in the graph is drawn at the top level; an edge whose source or target is not
 * in the graph is dropped; a repeated id keeps its first occurrence. Unknown kinds pass
 * through with their kind as a class. With showSkipped false, skipped stages are left out
 * (see withoutSkipped).
 *
 * Returns an array: all nodes (parents first), then edges.
 */
export function toElements(apiGraph, { showSkipped = true } = {}) {
  if (!showSkipped && apiGraph) apiGraph = withoutSkipped(apiGraph);
  const nodesById = new Map();
  for (const node of apiGraph?.nodes ?? []) {
    if (!node || node.id === null || node.id === undefined) continue;
    const id = String(node.id);
    if (!nodesById.has(id)) nodesById.set(id, { ...node, id, parent: node.parent ?? null });
  }
  const parents = resolveParents(nodesById);

  const nodeElements = [];
  for (const [id, node] of nodesById) {
    const data = {
      id,
      kind: node.kind,
      label: nodeLabel(node),
      title: baseLabel(node),
      info: node.data ?? {},
    };
    if (parents.has(id)) data.parent = parents.get(id);
    nodeElements.push({ group: 'nodes', data, classes: nodeClasses(node) });
  }
  // Parents before children, so callers that add elements one by one never meet an unknown parent.
  const depth = (id) => {
    let d = 0;
    for (let p = parents.get(id); p !== undefined; p = parents.get(p)) d += 1;
    return d;
  };
  nodeElements.sort((a, b) => depth(a.data.id) - depth(b.data.id));

  const edgeElements = [];
  const edgeIds = new Set();
  for (const edge of apiGraph?.edges ?? []) {
    if (!edge) continue;
    const source = String(edge.source);
    const target = String(edge.target);
    if (!nodesById.has(source) || !nodesById.has(target)) continue;
    const kind = edge.kind ?? 'narrow';
    const id = edge.id !== null && edge.id !== undefined ? String(edge.id) : `${kind}:${source}->${target}`;
    if (edgeIds.has(id) || nodesById.has(id)) continue;
    edgeIds.add(id);
    const classes = String(id).startsWith('zoom:') ? [kind, 'lifted'] : [kind];
    edgeElements.push({ group: 'edges', data: { id, source, target, kind }, classes });
  }
  return [...nodeElements, ...edgeElements];
}

/**
 * Makes `cy` draw `elements` (toElements' output) by changing only what differs: an element no
 * longer drawn, or drawn otherwise (its data, parent or classes), is removed, and what is missing
 * added. The others keep their place and the style Cytoscape computed for them, which is most of
 * the cost of a redraw (about 100 ms for 250 nodes when everything is added afresh). Removing a
 * compound node removes what it holds: those come back among the missing. Call it in cy.batch.
 * Returns the elements added.
 */
export function syncElements(cy, elements) {
  const signatures = new Map(elements.map((e) => [e.data.id, JSON.stringify([e.group, e.data, e.classes])]));
  cy.remove(cy.elements().filter((ele) => ele.scratch('drawn') !== signatures.get(ele.id())));
  const missing = elements.filter((e) => cy.getElementById(e.data.id).empty());
  const added = cy.add(missing);
  added.forEach((ele) => { ele.scratch('drawn', signatures.get(ele.id())); });
  return added;
}

/** How many elements of each kind: {stage, operator, dataset, edges}. */
export function countElements(elements) {
  const counts = { stage: 0, operator: 0, dataset: 0, edges: 0 };
  for (const element of elements) {
    if (element.group === 'edges') counts.edges += 1;
    else if (element.data.kind in counts) counts[element.data.kind] += 1;
  }
  return counts;
}

/**
 * The line above the graph: "6 stages (4 skipped hidden) · 12 operators · 3 datasets".
 * counts is countElements' answer for what is drawn; skipped is how many stages were skipped
 * and hidden whether they are left out (else they are among the drawn stages).
 */
export function summaryLine(counts, { skipped = 0, hidden = true } = {}) {
  const plural = (n, word) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
  let stages = plural(counts.stage, 'stage');
  if (skipped > 0) stages += hidden ? ` (${formatCount(skipped)} skipped hidden)` : ` (${formatCount(skipped)} skipped)`;
  return `${stages} · ${plural(counts.operator, 'operator')} · ${plural(counts.dataset, 'dataset')}`;
}

// cytoscape-dagre ranks an edge that ends on a compound node (an expanded stage) as if it ended on
// the node's first leaf child. The helpers below take Cytoscape elements (never imported here).
function firstLeaf(node) {
  let leaf = node;
  while (leaf.isParent() && leaf.children().length) leaf = leaf.children()[0];
  return leaf;
}

// The longest chain of edges from `start` (forward: 'out', backward: 'in') inside `container`.
function chainInside(start, container, direction) {
  const inside = container.descendants();
  const memo = new Map();
  const onPath = new Set();
  const visit = (node) => {
    const id = node.id();
    if (memo.has(id)) return memo.get(id);
    if (onPath.has(id)) return 0; // a cycle: dagre breaks it anyway
    onPath.add(id);
    let longest = 0;
    const next = direction === 'out' ? node.outgoers('node') : node.incomers('node');
    next.forEach((other) => {
      if (inside.contains(other)) longest = Math.max(longest, 1 + visit(other));
    });
    onPath.delete(id);
    memo.set(id, longest);
    return longest;
  };
  return visit(start);
}

/**
 * dagre's minimum rank distance for an edge. An edge leaving an expanded stage (a write, a
 * stage-level dependency) is ranked from the stage's first operator: it must span the operators
 * after that one, so that what the stage wrote lands right of the whole stage. Likewise an edge
 * entering an expanded stage spans the operators before the one it is ranked to.
 */
export function layoutMinLen(edge) {
  const source = edge.source();
  const target = edge.target();
  let length = 1;
  if (source.isParent()) length += chainInside(firstLeaf(source), source, 'out');
  if (target.isParent()) length += chainInside(firstLeaf(target), target, 'in');
  return length;
}

/** Options of the dagre DAG layout: left to right, room for two-line labels. */
export function layoutOptions({ animate = false } = {}) {
  return {
    name: 'dagre',
    rankDir: 'LR',
    minLen: layoutMinLen,
    // Room between stacked stages for their padding and the title drawn above each box.
    nodeSep: 64,
    rankSep: 44,
    edgeSep: 12,
    nodeDimensionsIncludeLabels: true,
    fit: false, // the page sets a readable viewport when the layout stops
    animate,
    animationDuration: 250,
  };
}

/** The smallest zoom at which node labels stay legible. */
export const READABLE_ZOOM = 0.7;

/**
 * The viewport that shows a laid-out graph: the whole graph when that keeps labels readable
 * (zoom >= minZoom), else minZoom with the graph's sources (left edge) in view. Given `anchor`
 * (a source node's position), a graph too tall for the view is centred on it vertically, as far as
 * the graph's edges allow, instead of showing its top edge (often an empty corner of a box).
 *
 * Args: box is the graph's bounding box in model coordinates ({x1, y1, w, h}); width and
 * height are the view's size in pixels. Returns {zoom, pan} for cy.viewport().
 */
export function readableViewport(box, width, height, { minZoom = READABLE_ZOOM, maxZoom = 1.25, padding = 24, anchor = null } = {}) {
  if (!box || !(box.w > 0 || box.h > 0) || !(width > 0) || !(height > 0)) return { zoom: 1, pan: { x: 0, y: 0 } };
  const fitZoom = Math.min(
    (width - 2 * padding) / Math.max(box.w, 1),
    (height - 2 * padding) / Math.max(box.h, 1),
  );
  const zoom = Math.min(maxZoom, Math.max(minZoom, fitZoom));
  const along = (size, start, view) => (size * zoom <= view - 2 * padding
    ? (view - size * zoom) / 2 - start * zoom
    : padding - start * zoom);
  let y = along(box.h, box.y1, height);
  if (anchor && box.h * zoom > height - 2 * padding) {
    const lowest = height - padding - (box.y1 + box.h) * zoom; // the graph's bottom edge at the view's
    y = Math.min(y, Math.max(lowest, height / 2 - anchor.y * zoom));
  }
  return { zoom, pan: { x: along(box.w, box.x1, width), y } };
}
