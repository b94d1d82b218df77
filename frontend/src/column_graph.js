// The column graph, pure: the API answer as Cytoscape elements (datasets as compound nodes holding
// their columns, edges coloured by kind), what a picked column reaches upstream and downstream
// within a depth, and the URLs it needs. No DOM, no Cytoscape.
//
// API shape (GET /api/v1/datasets/<id>/columns/, /api/v1/applications/<app_id>/columns/):
//   {center, truncated, nodes: [{id, kind: 'dataset'|'column', label, parent, depth, data}],
//    edges: [{id, source, target, type: 'DIRECT'|'INDIRECT', kind, app_ids}]}

import dagre from '@dagrejs/dagre';

import { baseName, shorten } from './format.js';
import { labelWidth } from './style.js';

const MAX_LABEL = 40;

// Edge kinds in the legend's order; anything else an OpenLineage producer names is 'other'.
export const EDGE_KINDS = ['IDENTITY', 'TRANSFORMATION', 'AGGREGATION', 'CONDITIONAL', 'FILTER', 'JOIN', 'GROUP_BY',
  'SORT', 'WINDOW'];

/** The class an edge kind is drawn with ('kind-identity'...; 'kind-other' for unknown kinds). */
export function kindClass(kind) {
  const known = EDGE_KINDS.includes(String(kind)) ? String(kind) : 'OTHER';
  return `kind-${known.toLowerCase().replace('_', '-')}`;
}

/**
 * What a node reaches within `depth` edges: `up` (nodes it comes from), `down` (nodes written from
 * it) and the `edges` walked. Only column-to-column edges are walked on; an INDIRECT edge into a
 * dataset (a filter, join, group by column) is taken as upstream of every column of that dataset.
 */
export function reach(answer, nodeId, depth) {
  const nodes = (answer?.nodes ?? []).filter(Boolean);
  const datasets = new Set(nodes.filter((n) => n.kind === 'dataset').map((n) => String(n.id)));
  // what is drawn: datasets, and columns inside a drawn dataset
  const parents = new Map(nodes.filter((n) => n.kind === 'dataset' || datasets.has(String(n.parent)))
    .map((n) => [String(n.id), n.kind === 'column' ? String(n.parent) : null]));
  const into = new Map();
  const outOf = new Map();
  for (const edge of answer?.edges ?? []) {
    const source = String(edge?.source);
    const target = String(edge?.target);
    if (!parents.has(source) || !parents.has(target)) continue;
    const add = (map, key, value) => { if (!map.has(key)) map.set(key, []); map.get(key).push(value); };
    add(outOf, source, edge);
    add(into, target, edge);
  }
  const walk = (start, next) => {
    const seen = new Set();
    const edges = new Set();
    let frontier = [String(start)];
    for (let step = 0; step < depth && frontier.length; step += 1) {
      const following = [];
      for (const id of frontier) {
        for (const [edge, other] of next(id)) {
          edges.add(String(edge.id));
          if (!seen.has(other) && other !== String(start)) {
            seen.add(other);
            following.push(other);
          }
        }
      }
      frontier = following;
    }
    return { nodes: seen, edges };
  };
  const upstream = walk(nodeId, (id) => [
    ...(into.get(id) ?? []).map((e) => [e, String(e.source)]),
    ...(into.get(parents.get(id)) ?? []).map((e) => [e, String(e.source)]),
  ]);
  const downstream = walk(nodeId, (id) => (outOf.get(id) ?? [])
    .filter((e) => parents.has(String(e.target)) && parents.get(String(e.target)) !== null)
    .map((e) => [e, String(e.target)]));
  return { up: upstream.nodes, down: downstream.nodes, edges: new Set([...upstream.edges, ...downstream.edges]) };
}

/**
 * The column answer with each dataset of `collapsed` (node ids) drawn as one node: its columns
 * left out, their edges carried by the dataset instead, merged into one per source, target and
 * kind (their applications joined, `merged` counting them); an edge between two columns of one
 * collapsed dataset goes. Other nodes and edges are kept as they are, so collapsing nothing gives
 * the answer back (expanding a dataset again is drawing without it in `collapsed`).
 */
export function collapseDatasets(answer, collapsed) {
  if (!answer || !collapsed?.size) return answer;
  const owner = new Map();
  const counts = new Map();
  for (const node of answer.nodes ?? []) {
    const parent = String(node?.parent ?? '');
    if (node?.kind !== 'column' || !collapsed.has(parent)) continue;
    owner.set(String(node.id), parent);
    counts.set(parent, (counts.get(parent) ?? 0) + 1);
  }
  const nodes = (answer.nodes ?? []).filter((n) => n && !owner.has(String(n.id))).map((n) => (
    n.kind === 'dataset' && collapsed.has(String(n.id)) ? { ...n, collapsed: counts.get(String(n.id)) ?? 0 } : n));
  const edges = new Map();
  for (const edge of answer.edges ?? []) {
    const source = owner.get(String(edge?.source)) ?? String(edge?.source);
    const target = owner.get(String(edge?.target)) ?? String(edge?.target);
    if (source === target) continue;
    if (source === String(edge.source) && target === String(edge.target)) {
      edges.set(String(edge.id), edge);
      continue;
    }
    const id = `${source}->${target}:${edge.kind}`;
    const known = edges.get(id);
    if (known) {
      known.app_ids = [...new Set([...known.app_ids, ...(edge.app_ids ?? [])])];
      known.merged += 1;
    } else {
      edges.set(id, { ...edge, id, source, target, app_ids: [...(edge.app_ids ?? [])], merged: 1 });
    }
  }
  return { ...answer, nodes, edges: [...edges.values()] };
}

/**
 * Cytoscape elements of a column answer: each dataset once as a box (its file name), each column
 * once inside its dataset, then edges between known nodes once, classed by kind. With `picked`
 * (a column id) and `depth`, what it reaches is classed 'upstream'/'downstream'/'reached' and the
 * rest 'faded'.
 */
export function toElements(answer, { picked = null, depth = 2 } = {}) {
  const ids = new Set();
  const nodes = [];
  const reached = picked ? reach(answer, picked, depth) : null;
  const mark = (id, classes) => {
    if (!reached) return classes;
    if (id === picked) return [...classes, 'picked'];
    if (reached.up.has(id)) return [...classes, 'upstream'];
    if (reached.down.has(id)) return [...classes, 'downstream'];
    return [...classes, 'faded'];
  };
  const all = answer?.nodes ?? [];
  // datasets first: a compound parent must exist before its children are added
  const ordered = [...all.filter((n) => n?.kind === 'dataset'), ...all.filter((n) => n?.kind === 'column')];
  for (const node of ordered) {
    const id = String(node?.id ?? '');
    if (!id || ids.has(id)) continue;
    const parent = node.kind === 'column' ? String(node.parent ?? '') : null;
    if (node.kind === 'column' && !ids.has(parent)) continue;
    ids.add(id);
    const data = node.data ?? {};
    const folded = node.kind === 'dataset' && node.collapsed !== undefined; // collapseDatasets' count
    let label = node.kind === 'dataset'
      ? shorten(baseName(data.path ?? node.label) || String(node.label ?? id), MAX_LABEL)
      : shorten(String(node.label ?? data.column ?? id), MAX_LABEL);
    if (folded) label = `${label}\n${node.collapsed} column${node.collapsed === 1 ? '' : 's'}`;
    const classes = node.kind === 'dataset' ? ['dataset-box'] : ['column'];
    if (folded) classes.push('collapsed');
    if (id === answer.center) classes.push('center');
    nodes.push({
      group: 'nodes',
      data: {
        id, kind: node.kind, label, title: String(node.label ?? id), depth: node.depth, info: data,
        ...(parent ? { parent, w: labelWidth(label, { min: 60, padding: 16 }) } : {}),
        ...(folded ? { collapsed: node.collapsed, w: labelWidth(label.split('\n')[0], { min: 80, padding: 16 }) } : {}),
      },
      classes: node.kind === 'column' ? mark(id, classes) : classes,
    });
  }
  const edges = [];
  const edgeIds = new Set();
  for (const edge of answer?.edges ?? []) {
    const source = String(edge?.source);
    const target = String(edge?.target);
    const id = String(edge?.id ?? `${source}->${target}:${edge?.kind}`);
    if (!ids.has(source) || !ids.has(target) || edgeIds.has(id)) continue;
    edgeIds.add(id);
    const classes = [kindClass(edge.kind), edge.type === 'INDIRECT' ? 'indirect' : 'direct'];
    if (reached) classes.push(reached.edges.has(id) ? 'reached' : 'faded');
    edges.push({
      group: 'edges',
      data: { id, source, target, kind: String(edge.kind), type: edge.type, apps: edge.app_ids ?? [] },
      classes,
    });
  }
  return [...nodes, ...edges];
}

/** The column graph's API URL for a dataset graph's URL (…/graph/ or …/pipeline/), or null. */
export function columnUrlOf(graphUrl) {
  const url = String(graphUrl ?? '');
  const match = url.match(/^(.*\/)(graph|pipeline)\/$/);
  return match ? `${match[1]}columns/` : null;
}

/** The CSV download of a column node's impact ('column:<dataset pk>:<name>'), `depth` deep, or null. */
export function impactUrlOf(nodeId, depth) {
  const match = String(nodeId).match(/^column:(\d+):(.*)$/s);
  if (!match) return null;
  const params = new URLSearchParams({ column: match[2], depth: String(depth), format: 'csv' });
  return `/api/v1/datasets/${match[1]}/column-impact/?${params}`;
}

export const ROW = 30; // a column's slot in its dataset's box, in model units
const BOX_PAD = 12;

/**
 * Positions of the columns of `elements` (toElements' output), the datasets' boxes (centre and
 * size) and the box of all: dagre lays the datasets out left to
 * right as boxes as tall as their columns, joined by the edges between their columns, and each
 * dataset's columns are stacked inside its box in the answer's order. dagre's own compound layout
 * (cytoscape-dagre over boxes and columns) took 8 s for 510 columns; this runs on the datasets only.
 */
export function columnLayout(elements, { rankSep = 120, nodeSep = 30 } = {}) {
  const columnsOf = new Map();
  const parentOf = new Map();
  const least = new Map(); // a collapsed dataset's width: its label's
  for (const element of elements) {
    if (element.group !== 'nodes') continue;
    if (element.data.kind === 'dataset') {
      if (!columnsOf.has(element.data.id)) columnsOf.set(element.data.id, []);
      if (element.data.collapsed !== undefined) least.set(element.data.id, element.data.w);
    } else if (element.data.parent) {
      if (!columnsOf.has(element.data.parent)) columnsOf.set(element.data.parent, []);
      columnsOf.get(element.data.parent).push(element.data);
      parentOf.set(element.data.id, element.data.parent);
    }
  }
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', ranksep: rankSep, nodesep: nodeSep });
  g.setDefaultEdgeLabel(() => ({}));
  const widths = new Map();
  for (const [id, columns] of columnsOf) {
    const width = Math.max(80, least.get(id) ?? 0, ...columns.map((c) => c.w));
    widths.set(id, width);
    g.setNode(id, { width: width + 2 * BOX_PAD, height: Math.max(1, columns.length) * ROW + 2 * BOX_PAD });
  }
  for (const element of elements) {
    if (element.group !== 'edges') continue;
    const source = parentOf.get(element.data.source) ?? element.data.source;
    const target = parentOf.get(element.data.target) ?? element.data.target;
    if (source !== target && g.hasNode(source) && g.hasNode(target)) g.setEdge(source, target);
  }
  dagre.layout(g);
  const positions = new Map();
  const boxes = new Map();
  const box = { x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity };
  for (const [id, columns] of columnsOf) {
    const node = g.node(id);
    boxes.set(id, { x: node.x, y: node.y, w: node.width, h: node.height });
    const top = node.y - (columns.length * ROW) / 2 + ROW / 2;
    columns.forEach((column, i) => positions.set(column.id, { x: node.x, y: top + i * ROW }));
    box.x1 = Math.min(box.x1, node.x - node.width / 2);
    box.x2 = Math.max(box.x2, node.x + node.width / 2);
    box.y1 = Math.min(box.y1, node.y - node.height / 2);
    box.y2 = Math.max(box.y2, node.y + node.height / 2);
  }
  box.w = Math.max(0, box.x2 - box.x1);
  box.h = Math.max(0, box.y2 - box.y1);
  return { positions, boxes, box };
}

// Past this many columns, datasets are drawn as plain boxes behind their columns rather than as
// Cytoscape compound nodes: keeping 51 compound boxes around 510 columns up to date took 0.7 s of
// the first drawing (bench/column_graph.py).
export const COMPOUND_UP_TO = 150;

/**
 * Elements placed by a columnLayout: compound datasets, or (`flat`) plain boxes sized by the layout;
 * a collapsed dataset is always a plain box.
 */
export function placed(elements, { positions, boxes }, { flat = false } = {}) {
  return elements.map((element) => {
    const id = element.data.id;
    if (positions.has(id)) {
      const data = flat ? { ...element.data, parent: undefined } : element.data;
      return { ...element, data, position: positions.get(id) };
    }
    if ((flat || element.data.collapsed !== undefined) && boxes.has(id)) {
      const { x, y, w, h } = boxes.get(id);
      return { ...element, data: { ...element.data, w, h }, position: { x, y }, classes: [...element.classes, 'flat'] };
    }
    return element;
  });
}
