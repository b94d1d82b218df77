// The home page: one search box (applications, datasets by path, traces and what-ifs by name), the
// team's recent applications, pinned and recent traces and what-ifs.

import { el, fetchJson, statusBadge } from './dom.js';
import { formatTime } from './format.js';
import { historyRow } from './history_view.js';
import { applicationRow } from './listing.js';

const SHOWN = 8;

const appItem = (app) => {
  const row = applicationRow(app);
  return el('li', { dataset: { appId: app.app_id } }, el('a', { href: row.href }, row.cells.name), ' ', statusBadge(row.status),
    el('span', { class: 'muted' }, ` ${row.cells.started_at}`));
};
const questionItem = (q) => {
  const row = historyRow(q);
  return el('li', { dataset: { questionId: String(q.id) } }, el('a', { href: row.href }, row.title), ' ', statusBadge(row.status),
    el('span', { class: 'muted' }, ` ${row.what} · ${row.application} · ${formatTime(q.created_at)}`));
};
const datasetItem = (d) => el('li', {}, el('a', { href: `/datasets/${d.id}/` }, d.path), el('span', { class: 'muted' }, ` ${d.format || ''}`));

function section(id, title, items, empty, more) {
  return el('section', { class: 'home-section', id },
    el('h2', {}, title),
    items.length ? el('ul', { class: 'home-list' }, items) : el('p', { class: 'muted' }, empty),
    more ? el('p', {}, el('a', { href: more[0] }, more[1])) : null);
}

/** Mount on `root` (data-applications-url, data-history-url, data-datasets-url: the API lists). */
export async function mountHomePage(root) {
  const { applicationsUrl, historyUrl, datasetsUrl } = root.dataset;
  const box = el('input', { type: 'search', name: 'q', id: 'home-search', placeholder: 'Applications, dataset paths, trace names',
    'aria-label': 'Search applications, datasets and traces' });
  const form = el('form', { class: 'home-search', role: 'search' }, box, el('button', { type: 'submit' }, 'Search'));
  const results = el('div', { class: 'home-sections', id: 'search-results' });
  const sections = el('div', { class: 'home-sections' });
  root.replaceChildren(form, results, sections);
  root.dataset.state = 'loading';

  const list = (url) => fetchJson(url).then((a) => a.results).catch(() => []);
  async function search(text) {
    const params = new URLSearchParams(window.location.search);
    if (text) params.set('q', text); else params.delete('q');
    window.history.replaceState(null, '', `${window.location.pathname}${params.toString() ? `?${params}` : ''}`);
    if (!text) {
      results.replaceChildren();
      return;
    }
    const q = encodeURIComponent(text);
    const [apps, datasets, questions] = await Promise.all([
      list(`${applicationsUrl}?search=${q}&page_size=${SHOWN}`),
      list(`${datasetsUrl}?path=${q}&page_size=${SHOWN}`),
      list(`${historyUrl}?search=${q}&page_size=${SHOWN}`),
    ]);
    results.replaceChildren(
      section('found-applications', `Applications matching “${text}”`, apps.map(appItem), 'None.'),
      section('found-datasets', `Datasets whose path holds “${text}”`, datasets.map(datasetItem), 'None.'),
      section('found-questions', `Traces and what-ifs named “${text}”`, questions.map(questionItem), 'None.'));
  }
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    root.dataset.state = 'loading';
    await search(box.value.trim());
    root.dataset.state = 'ready';
  });

  const [apps, pinned, recent] = await Promise.all([
    list(`${applicationsUrl}?page_size=${SHOWN}`),
    list(`${historyUrl}?pinned=true&page_size=${SHOWN}`),
    list(`${historyUrl}?page_size=${SHOWN}`),
  ]);
  sections.replaceChildren(
    section('recent-applications', 'Recent applications', apps.map(appItem), 'No application has been captured yet.', ['/applications/', 'All applications']),
    section('pinned-questions', 'Pinned traces and what-ifs', pinned.map(questionItem), 'Nothing pinned yet.', ['/history/?pinned=true', 'All pinned']),
    section('recent-questions', 'Recent traces and what-ifs', recent.map(questionItem),
      'No trace yet: open an application, zoom to its capture points and trace from one.', ['/history/', 'The whole history']));
  const initial = new URLSearchParams(window.location.search).get('q') ?? '';
  if (initial) {
    box.value = initial;
    await search(initial);
  }
  root.dataset.state = 'ready';
}
