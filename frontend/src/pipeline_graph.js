// The dataset graph across applications, pure: the API answer as Cytoscape elements, answers
// merged as nodes are expanded, and the URLs of a node's graph and page. No DOM, no Cytoscape.
//
// API shape (GET /api/v1/datasets/<id>/graph/, /api/v1/applications/<app_id>/pipeline/):
//   {center, truncated, nodes: [{id, kind: 'dataset'|'application', label, depth, data}],
//    edges: [{id, source, target, kind: 'read'|'write'}]}

import { datasetSubtitle } from './graph.js';
import { baseName, shorten } from './format.js';

const MAX_LABEL = 40;

/** The lines drawn on a node: a dataset's file name and facts, an application's name, id and status. */
export function pipelineLabel(node) {
  const data = node.data ?? {};
  if (node.kind === 'dataset') {
    const title = shorten(baseName(data.path ?? node.label) || String(node.label ?? node.id), MAX_LABEL);
    const facts = datasetSubtitle({ ...data, directions: [] });
    return facts ? `${title}\n${facts}` : title;
  }
  const title = shorten(String(data.name || node.label || data.app_id || node.id), MAX_LABEL);
  const facts = [data.app_id !== title ? data.app_id : null, data.status].filter(Boolean).join(' · ');
  return facts ? `${title}\n${shorten(facts, MAX_LABEL)}` : title;
}

/**
 * Cytoscape elements of an answer: nodes (classes: their kind, 'center' for the centre,
 * 'expanded' for nodes whose neighbours were fetched), then edges between known nodes, once.
 */
export function pipelineElements(answer, { expanded = new Set() } = {}) {
  const ids = new Set();
  const nodes = [];
  for (const node of answer?.nodes ?? []) {
    const id = String(node?.id ?? '');
    if (!id || ids.has(id)) continue;
    ids.add(id);
    const classes = [node.kind === 'application' ? 'app' : 'dataset'];
    if (id === answer.center) classes.push('center');
    if (expanded.has(id)) classes.push('expanded');
    nodes.push({
      group: 'nodes',
      data: { id, kind: node.kind, label: pipelineLabel(node), title: String(node.label ?? id), depth: node.depth, info: node.data ?? {} },
      classes,
    });
  }
  const edges = [];
  const edgeIds = new Set();
  for (const edge of answer?.edges ?? []) {
    const source = String(edge?.source);
    const target = String(edge?.target);
    const id = `${source}->${target}`;
    if (!ids.has(source) || !ids.has(target) || edgeIds.has(id)) continue;
    edgeIds.add(id);
    edges.push({ group: 'edges', data: { id, source, target, kind: edge.kind }, classes: [edge.kind] });
  }
  return [...nodes, ...edges];
}

/**
 * Two answers as one, the first's centre kept: nodes by id (the first's version wins), edges by
 * their ends, `truncated` if either was. What a node's expansion adds to what is drawn.
 */
export function mergePipeline(first, second) {
  const nodes = new Map();
  for (const node of [...(first?.nodes ?? []), ...(second?.nodes ?? [])]) {
    if (node && !nodes.has(String(node.id))) nodes.set(String(node.id), node);
  }
  const edges = new Map();
  for (const edge of [...(first?.edges ?? []), ...(second?.edges ?? [])]) {
    const key = `${edge?.source}->${edge?.target}`;
    if (edge && !edges.has(key)) edges.set(key, edge);
  }
  return {
    center: first?.center ?? second?.center,
    truncated: Boolean(first?.truncated || second?.truncated),
    nodes: [...nodes.values()],
    edges: [...edges.values()],
  };
}

/** The API URL of a node's own graph ('dataset:<pk>' or 'app:<app_id>'), or null. */
export function graphUrlOf(nodeId) {
  const id = String(nodeId);
  if (id.startsWith('dataset:')) return `/api/v1/datasets/${encodeURIComponent(id.slice(8))}/graph/`;
  if (id.startsWith('app:')) return `/api/v1/applications/${encodeURIComponent(id.slice(4))}/pipeline/`;
  return null;
}

/** The page centred on a node, or null. */
export function pageUrlOf(nodeId) {
  const id = String(nodeId);
  if (id.startsWith('dataset:')) return `/datasets/${encodeURIComponent(id.slice(8))}/`;
  if (id.startsWith('app:')) return `/applications/${encodeURIComponent(id.slice(4))}/pipeline/`;
  return null;
}

/** The depth controls' values from URL parameters: integers 0..10, 2 when absent or wrong. */
export function depthsFromUrl(search) {
  const params = new URLSearchParams(search);
  const depth = (name) => {
    const raw = params.get(name);
    const value = raw === null || raw.trim() === '' ? NaN : Number(raw);
    return Number.isInteger(value) && value >= 0 && value <= 10 ? value : 2;
  };
  return { upstream: depth('upstream'), downstream: depth('downstream') };
}
