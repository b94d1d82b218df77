// Laid-out positions kept across page loads (localStorage), so that a graph already laid out in
// this browser opens without laying it out again: dagre over the 651 nodes of a 500-stage
// application is most of a second (layout.js), restoring its positions a few milliseconds.
//
// The layout is a pure function of what is drawn (layout.js), so it is kept under a key made of
// exactly that: every drawn node's id, parent, kind and label (which sizes it) and every edge's
// ends, with LAYOUT_VERSION (bumped when the layout's options or the node styles change). A
// graph that changed (more events ingested, another zoom state) has another key and is laid out.
// Pure but for the `storage` given (window.localStorage on the page); a storage that refuses
// (full, private mode) only means laying out again.

/** Bumped when the layout's options or the nodes' sizes change: old positions are then unused. */
export const LAYOUT_VERSION = 1;
/** Laid-out graphs kept at most; the least recently laid out goes first. */
export const LAYOUTS_STORED = 12;
const PREFIX = 'lineage-layout:';
const INDEX = `${PREFIX}index`;

/** FNV-1a (32 bits) of a string, as 8 hex digits. */
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** The key of a drawing: `elements` as toElements gives them (nodes and edges, in any order). */
export function layoutKey(elements) {
  const parts = [];
  for (const element of elements) {
    const d = element.data;
    parts.push(element.group === 'edges' ? `e ${d.source} ${d.target}` : `n ${d.id} ${d.parent ?? ''} ${d.kind} ${d.label}`);
  }
  parts.sort();
  const text = `${LAYOUT_VERSION}\n${parts.join('\n')}`;
  return `${fnv1a(text)}${fnv1a(`${text.length}:${text}`)}-${elements.length}`;
}

function readIndex(storage) {
  try {
    const index = JSON.parse(storage.getItem(INDEX) ?? '[]');
    return Array.isArray(index) ? index.filter((k) => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * What was kept for `key`: {positions: Map id -> {x, y}, box, job} (the boxes the page measured
 * on that layout: the whole drawing's and the framed job's, or null), or null when nothing was.
 */
export function readLayout(storage, key) {
  if (!storage) return null;
  try {
    const kept = JSON.parse(storage.getItem(PREFIX + key) ?? 'null');
    if (!kept || !Array.isArray(kept.ids) || !Array.isArray(kept.xy) || kept.xy.length !== 2 * kept.ids.length) return null;
    const positions = new Map();
    kept.ids.forEach((id, i) => positions.set(id, { x: kept.xy[2 * i], y: kept.xy[2 * i + 1] }));
    return { positions, box: kept.box ?? null, job: kept.job ?? null };
  } catch {
    return null;
  }
}

/**
 * Keeps `positions` (id -> {x, y}) and the boxes measured on them (`box`, `job`) under `key`,
 * forgetting the least recently kept past `limit`.
 */
export function keepLayout(storage, key, positions, { box = null, job = null, limit = LAYOUTS_STORED } = {}) {
  if (!storage) return;
  const ids = [...positions.keys()];
  const xy = ids.flatMap((id) => {
    const { x, y } = positions.get(id);
    return [Math.round(x * 10) / 10, Math.round(y * 10) / 10];
  });
  const index = readIndex(storage).filter((k) => k !== key);
  index.push(key);
  try {
    while (index.length > limit) storage.removeItem(PREFIX + index.shift());
    storage.setItem(PREFIX + key, JSON.stringify({ ids, xy, box, job }));
    storage.setItem(INDEX, JSON.stringify(index));
  } catch {
    // full or refused: the layout is computed again next time
  }
}
