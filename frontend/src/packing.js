// Disconnected parts of a drawing (500 independent jobs) laid out one by one and packed in rows,
// in their order: dagre's cost grows faster than the graph, and dagre puts unconnected parts in one
// column (a 90-job window was 90 boxes one above the other, each job's neighbours out of reach).
// Pure: boxes in, offsets out.

/**
 * Where each box of `sizes` ([{w, h}], in order) goes when packed left to right in rows, a row
 * wrapping past a width that gives the whole about the `aspect` (width / height) of the view,
 * `gap` between boxes (a box goes on the row while its centre is within that width). Returns [{x, y}], each box's top-left corner.
 */
export function packInRows(sizes, { aspect = 16 / 9, gap = 40 } = {}) {
  const area = sizes.reduce((sum, { w, h }) => sum + (w + gap) * (h + gap), 0);
  const widest = sizes.reduce((most, { w }) => Math.max(most, w), 0);
  const width = Math.max(widest, Math.sqrt(area * aspect));
  const out = [];
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const { w, h } of sizes) {
    if (x > 0 && x + w / 2 > width) { // by its centre: rows as near the width as they come
      x = 0;
      y += rowHeight + gap;
      rowHeight = 0;
    }
    out.push({ x, y });
    x += w + gap;
    rowHeight = Math.max(rowHeight, h);
  }
  return out;
}

/**
 * The connected parts of a graph of `count` nodes (0 .. count - 1) joined by `links` ([a, b]), each
 * part's nodes in order, the parts in the order of their first node.
 */
export function connectedParts(count, links) {
  const root = Array.from({ length: count }, (_, i) => i);
  const find = (i) => {
    let r = i;
    while (root[r] !== r) r = root[r];
    for (let j = i; root[j] !== r;) {
      const up = root[j];
      root[j] = r;
      j = up;
    }
    return r;
  };
  for (const [a, b] of links) {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) root[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const parts = new Map();
  for (let i = 0; i < count; i += 1) {
    const r = find(i);
    if (!parts.has(r)) parts.set(r, []);
    parts.get(r).push(i);
  }
  return [...parts.values()];
}
