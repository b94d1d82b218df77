// Whether an application's record-level lineage is complete, as the lines of the page's banner.
// Pure: fed by the application (lineage_complete, missing_table_count) and its incomplete capture
// points (GET .../capture-points/?lineage_complete=false); the page draws the lines it returns.

import { formatCount } from './format.js';

export const INCOMPLETE = 'Record-level lineage incomplete';

const noun = (count) => (count === 1 ? 'table' : 'tables');
const tables = (count) => `${formatCount(count)} ${noun(count)}`;

/** "disk full" for one reason; "disk full (2 tables); permission denied (1 table)" for several. */
export function describeReasons(missingTables) {
  const counts = new Map();
  for (const entry of missingTables ?? []) {
    const reason = String(entry?.reason ?? '').trim() || 'no reason given';
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  if (counts.size === 0) return 'no reason given';
  if (counts.size === 1) return [...counts.keys()][0];
  return [...counts].map(([reason, count]) => `${reason} (${tables(count)})`).join('; ');
}

/**
 * The banner's lines, one per capture point with missing tables; [] when the lineage is complete.
 *
 * `points` is a page of the capture points endpoint ({count, results}) or a plain list; points it
 * does not hold are summed up in a last line, and without any (the request failed) one line says
 * how many tables are missing in all.
 */
export function incompleteLineageLines(application, points) {
  if (!application || application.lineage_complete !== false) return [];
  const results = Array.isArray(points) ? points : points?.results ?? [];
  const incomplete = results.filter((point) => (point.missing_table_count ?? point.missing_tables?.length ?? 0) > 0);
  const lines = incomplete.map((point) => {
    const count = point.missing_table_count ?? point.missing_tables.length;
    return `${INCOMPLETE}: ${tables(count)} of capture point ${point.capture_id} could not be written: `
      + `${describeReasons(point.missing_tables)}.`;
  });
  const total = application.missing_table_count ?? 0;
  const shown = incomplete.reduce((sum, point) => sum + (point.missing_table_count ?? point.missing_tables.length), 0);
  if (lines.length === 0) {
    lines.push(`${INCOMPLETE}: ${tables(total)} could not be written; traces may miss records.`);
  } else if (total > shown) {
    const others = Math.max((points?.count ?? incomplete.length) - incomplete.length, 0);
    const where = others > 0 ? ` of ${formatCount(others)} other capture ${others === 1 ? 'point' : 'points'}` : '';
    const more = total - shown;
    lines.push(`${INCOMPLETE}: ${formatCount(more)} more ${noun(more)}${where} could not be written.`);
  }
  return lines;
}
