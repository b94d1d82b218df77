// Pure helpers of the provenance pages: a lineage answer (GET .../lineage/) as Cytoscape elements,
// what it read as text, an index build's summary, and the page's query state <-> URL.

import { formatCount } from './format.js';

export const DIRECTIONS = ['ancestors', 'descendants'];

/** The item's node, one node per item reached and one edge per triple (op as its label). */
export function lineageElements(answer) {
  const id = (item) => `item:${item}`;
  const nodes = [{ group: 'nodes', data: { id: id(answer.item), label: answer.item, item: answer.item }, classes: ['record', 'center'] }];
  const seen = new Set([answer.item]);
  for (const item of answer.items) {
    if (seen.has(item)) continue;
    seen.add(item);
    nodes.push({ group: 'nodes', data: { id: id(item), label: item, item }, classes: ['record'] });
  }
  const edges = [];
  const drawn = new Set();
  for (const edge of answer.edges) {
    const key = `${edge.src}\u0000${edge.dst}\u0000${edge.op}`;
    if (drawn.has(key) || !seen.has(edge.src) || !seen.has(edge.dst)) continue;
    drawn.add(key);
    edges.push({ group: 'edges', data: { id: `edge:${edges.length}`, source: id(edge.src), target: id(edge.dst), label: edge.op }, classes: ['lineage', 'operation'] });
  }
  return [...nodes, ...edges];
}

/** "6 ancestors · 7 triples · read 3 connected sets (9 triples)", and whether the lists were cut. */
export function lineageSummary(answer) {
  const word = answer.direction === 'descendants' ? 'descendant' : 'ancestor';
  const sets = answer.sets_read.length;
  const parts = [
    `${formatCount(answer.item_count)} ${word}${answer.item_count === 1 ? '' : 's'}`,
    `${formatCount(answer.edge_count)} triple${answer.edge_count === 1 ? '' : 's'}`,
    `read ${formatCount(sets)} connected set${sets === 1 ? '' : 's'} (${formatCount(answer.triples_read)} triple${answer.triples_read === 1 ? '' : 's'})`,
  ];
  if (answer.truncated) parts.push('only the first ones are drawn');
  return parts.join(' · ');
}

/** Rows (label, value) describing an index build for the page's panel. */
export function buildRows(build) {
  if (!build) return [['Index', 'none yet']];
  const counts = build.meta?.counts ?? {};
  const rows = [
    ['Build', `#${build.id} · ${build.status}${build.incremental ? ' · incremental' : ''}`],
  ];
  if (build.error) rows.push(['Error', build.error]);
  for (const [key, label] of [['triples', 'Triples'], ['items', 'Items'], ['components', 'Components'],
    ['large_components', 'Large components'], ['sets', 'Connected sets'], ['largest_set', 'Largest set'],
    ['set_dependencies', 'Set dependencies']]) {
    if (counts[key] !== undefined) rows.push([label, formatCount(counts[key])]);
  }
  if (build.meta?.timings?.total !== undefined) rows.push(['Build time', `${build.meta.timings.total} s`]);
  return rows;
}

/** The ids of the sets a query read, the first few of them when there are many. */
export function setsText(sets, shown = 12) {
  const head = sets.slice(0, shown).join(', ');
  return sets.length > shown ? `${formatCount(sets.length)}: ${head}, …` : head;
}

/** {item, direction} from a query string; unknown directions fall back to ancestors. */
export function queryFromUrl(search) {
  const params = new URLSearchParams(search ?? '');
  const direction = params.get('direction');
  return { item: (params.get('item') ?? '').trim(), direction: DIRECTIONS.includes(direction) ? direction : 'ancestors' };
}

/** The lineage endpoint's URL for a query. */
export function lineageUrl(base, query, limit = 2000) {
  const params = new URLSearchParams({ item: query.item, direction: query.direction, limit: String(limit) });
  return `${base}?${params}`;
}
