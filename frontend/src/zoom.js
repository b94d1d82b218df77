// Zoom levels of the application graph (Lipstick's ZoomIn/ZoomOut): pure, no DOM, no Cytoscape.
//
// The graph API nests its nodes (`parent`): application -> jobs -> stages -> operators -> capture
// points, with datasets outside them all; a trace's page adds its records inside their capture
// points (the record level). The zoom state is the set of collapsed nodes. A collapsed
// node is drawn alone, in place of everything inside it, and keeps the same inputs and outputs:
// each edge is drawn between the outermost collapsed nodes holding its ends (the node itself
// when none holds it), once per pair, and an edge inside one collapsed node disappears.
// ZoomIn(n) takes n out of the set, ZoomOut(n) puts it in: what is collapsed inside n stays
// as it was, so ZoomIn(ZoomOut(G)) = G at every level.

/** The levels, outermost first, by node kind; their names as the page's buttons say them. */
export const LEVELS = ['application', 'job', 'stage', 'operator', 'capture', 'record'];
export const LEVEL_NAMES = {
  application: 'Application', job: 'Jobs', stage: 'Stages', operator: 'Operators', capture: 'Capture points',
  record: 'Records',
};

/** Nodes drawn at most, for a level to count as readable in a window (see readableLevel). */
export const READABLE_NODES = 60;
/** Nodes a whole level may draw at once (laying out more freezes the page for seconds). */
export const MAX_DRAWN = 2000;

const str = (value) => (value === null || value === undefined ? null : String(value));

/**
 * The nesting of an API graph: {nodes: Map id -> node, parentOf: Map id -> parent id (only for a
 * parent that exists; a loop is cut), childrenOf: Map id -> [child ids]}. A repeated id keeps its
 * first node, as toElements does.
 */
export function zoomTree(apiGraph) {
  const nodes = new Map();
  for (const node of apiGraph?.nodes ?? []) {
    const id = str(node?.id);
    if (id !== null && !nodes.has(id)) nodes.set(id, { ...node, id });
  }
  const parentOf = new Map();
  for (const [id, node] of nodes) {
    const parent = str(node.parent);
    if (parent !== null && parent !== id && nodes.has(parent)) parentOf.set(id, parent);
  }
  for (const id of [...parentOf.keys()]) {
    const seen = new Set([id]);
    for (let p = parentOf.get(id); p !== undefined; p = parentOf.get(p)) {
      if (seen.has(p)) {
        parentOf.delete(id);
        break;
      }
      seen.add(p);
    }
  }
  const childrenOf = new Map();
  for (const [id, parent] of parentOf) {
    if (!childrenOf.has(parent)) childrenOf.set(parent, []);
    childrenOf.get(parent).push(id);
  }
  return { nodes, parentOf, childrenOf };
}

/** Whether a node can be collapsed (it holds other nodes). */
export function isCompound(tree, id) {
  return (tree.childrenOf.get(String(id)) ?? []).length > 0;
}

/** The node drawn in place of `id`: its outermost collapsed ancestor, else itself. */
export function shownAs(tree, collapsed, id) {
  let shown = String(id);
  for (let p = tree.parentOf.get(shown); p !== undefined; p = tree.parentOf.get(p)) {
    if (collapsed.has(p)) shown = p;
  }
  return shown;
}

/**
 * The zoom state that shows one level: every compound node of that kind collapsed (its content
 * hidden), every compound node of the levels above it expanded. The deepest level present
 * collapses nothing. Returns a new Set of node ids.
 */
export function levelState(tree, level) {
  const collapsed = new Set();
  for (const [id, node] of tree.nodes) {
    if (node.kind === level && isCompound(tree, id)) collapsed.add(id);
  }
  return collapsed;
}

/** ZoomIn: the state with `ids` (one id or several) expanded. The input is not modified. */
export function zoomIn(collapsed, ids) {
  const next = new Set(collapsed);
  for (const id of [ids].flat()) next.delete(String(id));
  return next;
}

/** ZoomOut: the state with `ids` (compound nodes; others are ignored) collapsed. */
export function zoomOut(tree, collapsed, ids) {
  const next = new Set(collapsed);
  for (const id of [ids].flat()) if (isCompound(tree, id)) next.add(String(id));
  return next;
}

/**
 * Zoom of a selection of drawn nodes: "in" opens those that are collapsed; "out" collapses each
 * compound one, and the node holding each leaf. Returns the new state (the same nodes as before
 * when the selection has nothing to zoom).
 */
export function zoomSelection(tree, collapsed, ids, direction) {
  const chosen = [ids].flat().map(String);
  if (direction === 'in') return zoomIn(collapsed, chosen.filter((id) => collapsed.has(id)));
  const targets = chosen.map((id) => (isCompound(tree, id) ? id : tree.parentOf.get(id))).filter((id) => id !== undefined);
  return zoomOut(tree, collapsed, targets);
}

/**
 * The API graph as drawn in zoom state `collapsed`: the nodes not hidden inside a collapsed node
 * (a collapsed node gets data.hidden: {kind: count} of what it holds, and `collapsed: true`),
 * and the edges between the nodes drawn for their ends (see the module comment). Same shape as
 * the API answer, so toElements draws it.
 */
export function visibleGraph(apiGraph, collapsed, tree = zoomTree(apiGraph)) {
  const shown = new Map();
  const rep = (id) => {
    if (!shown.has(id)) shown.set(id, shownAs(tree, collapsed, id));
    return shown.get(id);
  };
  const hidden = new Map();
  const nodes = [];
  for (const [id, node] of tree.nodes) {
    const drawn = rep(id);
    if (drawn !== id) {
      if (!hidden.has(drawn)) hidden.set(drawn, {});
      const counts = hidden.get(drawn);
      counts[node.kind] = (counts[node.kind] ?? 0) + 1;
      continue;
    }
    nodes.push(node);
  }
  const drawnNodes = nodes.map((node) => {
    const parent = tree.parentOf.get(node.id) ?? null;
    if (!collapsed.has(node.id) || !isCompound(tree, node.id)) return { ...node, parent };
    return { ...node, parent, collapsed: true, data: { ...(node.data ?? {}), hidden: hidden.get(node.id) ?? {} } };
  });
  const edges = [];
  const pairs = new Set();
  for (const edge of apiGraph?.edges ?? []) {
    const source = str(edge?.source);
    const target = str(edge?.target);
    if (source === null || target === null || !tree.nodes.has(source) || !tree.nodes.has(target)) continue;
    const from = rep(source);
    const to = rep(target);
    if (from === to) continue;
    const pair = `${from}->${to}`;
    if (pairs.has(pair)) continue;
    pairs.add(pair);
    const lifted = from !== source || to !== target;
    edges.push(lifted ? { id: `zoom:${pair}`, source: from, target: to, kind: edge.kind } : edge);
  }
  return { ...apiGraph, nodes: drawnNodes, edges };
}

/** How many nodes a zoom state draws (compound parents included). */
export function drawnCount(tree, collapsed) {
  let count = 0;
  for (const id of tree.nodes.keys()) if (shownAs(tree, collapsed, id) === id) count += 1;
  return count;
}

/**
 * The level a graph opens at: the deepest level drawing at most `maxNodes` nodes, so that labels
 * stay legible at a zoom that shows the whole graph, but never above the stages (a big
 * application opens with its stages collapsed, to be read with the minimap, rather than as a
 * handful of job boxes). Levels no node has are skipped.
 */
export function readableLevel(tree, maxNodes = READABLE_NODES) {
  const kinds = new Set([...tree.nodes.values()].map((node) => node.kind));
  const present = LEVELS.filter((level) => kinds.has(level));
  if (!present.length) return LEVELS[LEVELS.length - 1];
  const floor = present.includes('stage') ? 'stage' : present[present.length - 1];
  let best = floor;
  for (const level of present.slice(present.indexOf(floor) + 1)) {
    if (drawnCount(tree, levelState(tree, level)) <= maxNodes) best = level;
  }
  return best;
}

/**
 * The zoom state as URL parameters, relative to its level: {level, in: ids expanded though the
 * level collapses them, out: ids collapsed though the level shows them}. stateFromUrl reverses it.
 */
export function stateToUrl(tree, level, collapsed) {
  const base = levelState(tree, level);
  return {
    level,
    in: [...base].filter((id) => !collapsed.has(id)).sort(),
    out: [...collapsed].filter((id) => !base.has(id)).sort(),
  };
}

/**
 * Query strings longer than this keep no zoom state, and a reload opens where the page opens:
 * gunicorn refuses a request line over 4,094 bytes, and a zoom state can name hundreds of nodes
 * (the opening of an application of 300 jobs collapses 299 of them at the stages level).
 */
export const URL_QUERY_MAX = 2000;

/**
 * The page's query string `search` with the zoom state `state` (stateToUrl's: level, in and out)
 * and the skipped stages' switch, its other parameters kept; the zoom state left out when it would
 * make the query longer than URL_QUERY_MAX.
 */
export function zoomQuery(search, state, skipped = false) {
  const params = new URLSearchParams(search);
  for (const key of ['level', 'in', 'out', 'skipped']) params.delete(key);
  const without = new URLSearchParams(params);
  params.set('level', state.level);
  for (const id of state.in) params.append('in', id);
  for (const id of state.out) params.append('out', id);
  for (const kept of [params, without]) if (skipped) kept.set('skipped', '1');
  const query = params.toString();
  return query.length > URL_QUERY_MAX ? without.toString() : query;
}

/**
 * The zoom state of URL parameters (stateToUrl's); unknown levels and ids are ignored, and a level
 * drawing more than MAX_DRAWN nodes opens at the readable level instead.
 */
export function stateFromUrl(tree, { level, in: opened = [], out: closed = [] } = {}) {
  const drawable = LEVELS.includes(level) && drawnCount(tree, levelState(tree, level)) <= MAX_DRAWN;
  const known = drawable ? level : readableLevel(tree);
  return { level: known, collapsed: zoomOut(tree, zoomIn(levelState(tree, known), opened), closed) };
}
