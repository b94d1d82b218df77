// Traces and what-ifs on the page, pure: the question's subgraph laid over the application graph,
// its progress and selection in words, and its records as table rows. No DOM, no Cytoscape.
//
// API shapes: GET /api/v1/{traces,whatifs}/<id>/ (status, progress, summary, links),
// GET .../graph/ ({points: [{capture_id, records | deleted, changed, unchanged, ...}], edges,
// records: {nodes, edges} | null}), GET .../records/ (paged).

import { formatCount, recordIdCell } from './format.js';
import { levelState, readableLevel, zoomIn } from './zoom.js';

export const TERMINAL = ['succeeded', 'failed', 'cancelled'];
export const FATES = ['deleted', 'changed', 'unchanged', 'appeared'];
// Told apart by a word and a border style as well as a colour (style.js).
export const FATE_MARKS = { deleted: '✕', changed: '≠', unchanged: '=', appeared: '+' };

const captureNode = (captureId) => `capture:${captureId}`;

/** The node ids to keep expanded so that each crossed capture point is drawn: its ancestors. */
export function ancestorsOf(tree, ids) {
  const out = new Set();
  for (const id of ids) {
    for (let p = tree.parentOf.get(id); p !== undefined; p = tree.parentOf.get(p)) out.add(p);
  }
  return out;
}

/**
 * The zoom state a question opens with: the application's readable level, opened down to every
 * capture point the question crossed.
 */
export function questionZoom(tree, points) {
  const crossed = points.map((p) => captureNode(p.capture_id)).filter((id) => tree.nodes.has(id));
  return zoomIn(levelState(tree, readableLevel(tree)), [...ancestorsOf(tree, crossed)]);
}

/**
 * What a crossed capture point says on the graph: "12 records", or a what-if's fates one a line
 * ("3 ✕ deleted\n1 ≠ changed"), which keeps the node narrow enough for the path to fit the view.
 */
export function pointNote(point, kind) {
  if (kind === 'whatif') {
    const parts = FATES.filter((fate) => point[fate] > 0).map((fate) => `${formatCount(point[fate])} ${FATE_MARKS[fate]} ${fate}`);
    return parts.join('\n') || 'untouched';
  }
  const n = point.records ?? 0;
  return `${formatCount(n)} record${n === 1 ? '' : 's'}${point.in_result ? ' · in the result' : ''}`;
}

/** The classes of a crossed capture point: 'crossed', 'result', and for a what-if its worst fate. */
export function pointClasses(point, kind) {
  const classes = ['crossed'];
  if (kind === 'whatif') {
    const worst = FATES.find((fate) => point[fate] > 0);
    if (worst) classes.push(`fate-${worst}`);
  } else if (point.in_result) classes.push('result');
  return classes;
}

/**
 * The application's API graph with the question laid over it: crossed capture points get
 * data.note (pointNote) and their classes in `marks` (id -> classes), their ancestors 'on-path'.
 * Returns {graph, marks}; the input graph is not modified.
 */
export function overlay(apiGraph, questionGraph, kind, tree) {
  const marks = new Map();
  const notes = new Map();
  for (const point of questionGraph?.points ?? []) {
    const id = captureNode(point.capture_id);
    if (!tree.nodes.has(id)) continue;
    marks.set(id, pointClasses(point, kind));
    notes.set(id, pointNote(point, kind));
  }
  for (const id of ancestorsOf(tree, [...marks.keys()])) if (!marks.has(id)) marks.set(id, ['on-path']);
  const nodes = (apiGraph?.nodes ?? []).map((node) => (notes.has(String(node.id))
    ? { ...node, label: `${node.label ?? node.id}\n${notes.get(String(node.id))}` }
    : node));
  return { graph: { ...apiGraph, nodes }, marks };
}

/** The progress line of a question still running. */
export function progressText(question) {
  const p = question.progress ?? {};
  if (question.status === 'queued') return 'Queued: waiting for a worker…';
  const points = p.points_total ? `${formatCount(p.points_done)} of ${formatCount(p.points_total)} capture points` : `${formatCount(p.points_done ?? 0)} capture points`;
  return `Running: ${points} · ${formatCount(p.records ?? 0)} records so far`;
}

/** The fraction done (0..1) of a running question, or null when unknown. */
export function progressFraction(question) {
  const p = question.progress ?? {};
  if (question.status === 'succeeded') return 1;
  return p.points_total ? Math.min(1, p.points_done / p.points_total) : null;
}

/** A selection in words: "ids 1, 2, 3", "field 0 equals \"x\"", "the result of trace 4", "all records". */
export function selectionText(selection) {
  if (!selection || typeof selection !== 'object') return String(selection ?? '');
  if (selection.all) return 'all records';
  if (Array.isArray(selection.ids)) {
    const shown = selection.ids.slice(0, 10).join(', ');
    return `ids ${shown}${selection.ids.length > 10 ? `, … (${formatCount(selection.ids.length)})` : ''}`;
  }
  if (selection.trace !== undefined) return `the result of trace ${selection.trace}`;
  if (selection.predicate) return predicateText(selection.predicate);
  return JSON.stringify(selection);
}

function predicateText(p) {
  if (p.and) return p.and.map(predicateText).join(' and ');
  if (p.or) return `(${p.or.map(predicateText).join(' or ')})`;
  if (p.not) return `not ${predicateText(p.not)}`;
  const field = p.field === undefined || p.field === null ? 'record' : `field ${p.field}`;
  return `${field} ${p.op} ${JSON.stringify(p.value)}`;
}

/** Columns of the records table. */
export function recordColumns(kind) {
  return kind === 'whatif'
    ? ['Fate', 'Capture point', 'Record', 'Value', 'New value']
    : ['Capture point', 'Record', 'Value', 'Where'];
}

const show = (value) => (value === null || value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));
const shortPoint = (captureId) => String(captureId ?? '').split('/').pop();

const KIND_TEXT = {
  IDENTITY: 'copied', TRANSFORMATION: 'computed from', AGGREGATION: 'aggregated from', CONDITIONAL: 'chosen by',
};

/**
 * The rows of a backward trace's "Where its columns come from" table (the API's `columns`): one
 * per output column and source column, [output column, source dataset, its catalog id or null,
 * source column, kind text], an output column with no source (a constant, a count) once with
 * empty source cells. Null when the trace has none.
 */
export function columnSourceRows(columns) {
  if (!columns?.columns?.length) return null;
  const rows = [];
  for (const { column, sources } of columns.columns) {
    if (!sources.length) rows.push([column, '', null, '', 'no source column']);
    for (const s of sources) {
      const kind = KIND_TEXT[s.kind] ?? s.kind.toLowerCase();
      rows.push([column, s.dataset, s.dataset_id ?? null, s.column, `${kind} (${s.type} ${s.kind})`]);
    }
  }
  return rows;
}

/** The source columns that decided which rows there are, as "dataset.column (KIND)" texts. */
export function rowDeciders(columns) {
  return (columns?.rows_decided_by ?? []).map((s) => `${s.dataset.split('/').pop()}.${s.column} (${s.kind})`);
}

/** One row of the records table, as text cells. */
export function recordRow(record, kind) {
  if (kind === 'whatif') {
    return [`${FATE_MARKS[record.fate] ?? ''} ${record.fate}`, shortPoint(record.capture_id), recordIdCell(record),
      show(record.value), record.fate === 'changed' || record.fate === 'appeared' ? show(record.new_value) : ''];
  }
  const where = record.file ? `${record.file}${record.offset === null || record.offset === undefined ? '' : `@${record.offset}`}` : '';
  return [shortPoint(record.capture_id), recordIdCell(record), show(record.value), where];
}

/**
 * The application's API graph with a small trace's records added as the zoom's record level:
 * each record a node inside its capture point (kind 'record'), joined by 'lineage' edges. A capture
 * point holding records becomes a compound node that collapses onto them like any other level.
 * Returns the graph unchanged when the trace was too big for the server to keep its records.
 */
export function withRecords(apiGraph, questionGraph) {
  const records = questionGraph?.records;
  if (!records) return apiGraph;
  const known = new Set((apiGraph?.nodes ?? []).map((n) => String(n.id)));
  const id = ([cid, rid]) => `rec:${cid}:${rid}`;
  const nodes = records.nodes
    .filter((r) => known.has(captureNode(r.capture_id)))
    .map((r) => ({
      id: id([r.capture_id, r.record_id]),
      kind: 'record',
      label: `${recordIdCell(r).text}\n${show(r.value).slice(0, 40)}`,
      parent: captureNode(r.capture_id),
      data: { capture_id: r.capture_id, record_id: r.record_id, value: r.value },
    }));
  const ids = new Set(nodes.map((n) => n.id));
  const edges = records.edges
    .map((e) => ({ source: id(e.source), target: id(e.target) }))
    .filter((e) => ids.has(e.source) && ids.has(e.target))
    .map((e) => ({ id: `${e.source}->${e.target}`, ...e, kind: 'lineage' }));
  return { ...apiGraph, nodes: [...(apiGraph?.nodes ?? []), ...nodes], edges: [...(apiGraph?.edges ?? []), ...edges] };
}

/**
 * The application's API graph drawn for a question: in each stage holding a capture point the
 * question crossed, the operators are left out and the stage holds its capture points directly,
 * so that the path reads at one screen's width (the application page has the operators). An edge
 * to a left-out operator goes to its stage instead (once per pair; none inside a stage). Other
 * stages are as they were. Returns a new graph; the input is not modified.
 */
export function pathGraph(apiGraph, points) {
  const nodes = apiGraph?.nodes ?? [];
  const byId = new Map(nodes.map((n) => [String(n.id), n]));
  const stageOf = (id) => {
    const seen = new Set();
    for (let n = byId.get(id); n && !seen.has(n.id); n = byId.get(String(n.parent))) {
      seen.add(n.id);
      if (n.kind === 'stage') return String(n.id);
    }
    return null;
  };
  const stages = new Set((points ?? []).map((p) => stageOf(captureNode(p.capture_id))).filter((s) => s !== null));
  const dropped = new Map(); // operator id -> its stage
  for (const node of nodes) {
    const stage = node.kind === 'operator' ? stageOf(String(node.id)) : null;
    if (stage !== null && stages.has(stage)) dropped.set(String(node.id), stage);
  }
  if (!dropped.size) return apiGraph;
  const kept = nodes.filter((n) => !dropped.has(String(n.id))).map((n) => {
    if (n.kind !== 'capture' || !stages.has(stageOf(String(n.id)))) return n;
    return { ...n, parent: stageOf(String(n.id)) };
  });
  const edges = [];
  const pairs = new Set();
  for (const edge of apiGraph?.edges ?? []) {
    const source = dropped.get(String(edge.source)) ?? String(edge.source);
    const target = dropped.get(String(edge.target)) ?? String(edge.target);
    const lifted = source !== String(edge.source) || target !== String(edge.target);
    if (source === target || (lifted && pairs.has(`${source}->${target}`))) continue;
    pairs.add(`${source}->${target}`);
    edges.push(lifted ? { id: `path:${source}->${target}`, source, target, kind: edge.kind } : edge);
  }
  return { ...apiGraph, nodes: kept, edges };
}
