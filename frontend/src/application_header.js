// The application page's header (facts of the run, "Compare with the previous run") and the
// banner naming its capture points whose record-level lineage is incomplete.

import { INCOMPLETE, incompleteLineageLines } from './completeness.js';
import { el, errorText, fetchJson, sendJson, statusBadge } from './dom.js';
import { formatDuration, formatTime } from './format.js';
import { pageUrlOf } from './pipeline_graph.js';

export function renderHeader(app) {
  if (!app) return el('div');
  const facts = [
    ['User', app.user || '—'],
    ['Started', formatTime(app.started_at)],
    ['Duration', formatDuration(app.duration_ms)],
    ['Jobs', app.failed_job_count ? `${app.job_count} (${app.failed_job_count} failed)` : String(app.job_count ?? '—')],
    ['Stages', String(app.stage_count ?? '—')],
    ['Spark', [app.spark_version, app.master].filter(Boolean).join(' · ') || '—'],
  ];
  return el('div', { class: 'app-header' },
    el('h1', {}, app.name || app.app_id, ' ', statusBadge(app.status)),
    el('div', { class: 'app-id' }, app.app_id, ' · ',
      el('a', { href: pageUrlOf(`app:${app.app_id}`), class: 'pipeline-link' }, 'its datasets across applications')),
    el('dl', { class: 'facts' }, facts.map(([term, value]) => [el('dt', {}, term), el('dd', {}, value)])),
    compareButton(app));
}

/** "Compare with the previous run": asks a diff against the previous run of the same job and opens it. */
function compareButton(app) {
  const said = el('span', { class: 'compare-error', role: 'alert' });
  const compare = async () => {
    const asked = await sendJson('/api/v1/diffs/', { application: app.app_id });
    if (asked.ok) window.location.assign(`/diffs/${asked.body.id}/`);
    else said.textContent = errorText(asked);
  };
  return el('div', { class: 'compare' },
    el('button', { type: 'button', id: 'compare-previous', onclick: compare }, 'Compare with the previous run'), ' ', said);
}

// Not colour alone: a warning sign, a bold title and a sentence per capture point, in a bordered box.
export function renderLineageBanner(lines) {
  const line = (text) => el('p', {},
    el('span', { class: 'banner-icon', 'aria-hidden': 'true' }, '⚠'), ' ',
    text.startsWith(INCOMPLETE) ? [el('strong', {}, INCOMPLETE), text.slice(INCOMPLETE.length)] : text);
  return el('div', { id: 'lineage-incomplete', class: 'lineage-banner', role: 'alert' }, lines.map(line));
}

/** The banner's lines: the application's incomplete capture points, fetched only when it has some. */
export async function incompleteLineage(application, capturePointsUrl) {
  if (!application || application.lineage_complete !== false) return [];
  let points = [];
  try {
    points = await fetchJson(`${capturePointsUrl}?lineage_complete=false&page_size=500`);
  } catch {
    // The banner still says how many tables are missing, without naming the capture points.
  }
  return incompleteLineageLines(application, points);
}
