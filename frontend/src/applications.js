// The applications list page: filters, table and pager over GET /api/v1/applications/.

import { el, fetchJson, statusBadge } from './dom.js';
import {
  STATUSES, applicationRow, applicationsApiUrl, listStateQuery, pageOfLink, parseListState, rangeSummary,
} from './listing.js';

const COLUMNS = [
  ['name', 'Application'],
  ['team', 'Team'],
  ['user', 'User'],
  ['status', 'Status'],
  ['started_at', 'Started'],
  ['duration', 'Duration'],
  ['jobs', 'Jobs'],
  ['stages', 'Stages'],
  ['spark', 'Spark'],
];

function renderRow(app) {
  const row = applicationRow(app);
  const cells = COLUMNS.map(([key]) => {
    if (key === 'name') {
      return el('td', { class: 'col-name' },
        el('a', { href: row.href }, row.cells.name),
        el('div', { class: 'app-id' }, row.cells.app_id));
    }
    if (key === 'status') return el('td', {}, statusBadge(row.status));
    return el('td', { class: `col-${key}` }, row.cells[key]);
  });
  return el('tr', { dataset: { appId: app.app_id } }, cells);
}

function buildForm(state, onChange) {
  const search = el('input', {
    type: 'search', name: 'search', value: state.search, placeholder: 'Search name or app id', 'aria-label': 'Search',
  });
  const status = el('select', { name: 'status', 'aria-label': 'Status' },
    el('option', { value: '' }, 'Any status'),
    STATUSES.map((value) => el('option', { value, selected: value === state.status }, value)));
  const form = el('form', { class: 'filters', role: 'search' }, search, status, el('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    onChange({ ...state, page: 1, status: status.value, search: search.value.trim() });
  });
  status.addEventListener('change', () => onChange({ ...state, page: 1, status: status.value, search: search.value.trim() }));
  return form;
}

/** Mount the list page on `root` (an element with data-api-url). */
export function mountApplicationsPage(root) {
  const apiUrl = root.dataset.apiUrl;
  let state = parseListState(window.location.search);

  const summary = el('p', { class: 'summary', 'aria-live': 'polite' }, 'Loading…');
  const tbody = el('tbody');
  const table = el('table', { class: 'applications' },
    el('thead', {}, el('tr', {}, COLUMNS.map(([, title]) => el('th', { scope: 'col' }, title)))), tbody);
  const previous = el('button', { type: 'button', class: 'pager-previous', disabled: true }, '← Previous');
  const next = el('button', { type: 'button', class: 'pager-next', disabled: true }, 'Next →');
  const pager = el('nav', { class: 'pager', 'aria-label': 'Pages' }, previous, next);
  let links = { previous: null, next: null };

  async function load(pushHistory) {
    if (pushHistory) window.history.pushState(state, '', `${window.location.pathname}${listStateQuery(state)}`);
    summary.textContent = 'Loading…';
    root.dataset.state = 'loading';
    try {
      const page = await fetchJson(applicationsApiUrl(apiUrl, state));
      const results = page.results ?? [];
      tbody.replaceChildren(...results.map(renderRow));
      if (!results.length) {
        tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: COLUMNS.length },
          state.search || state.status ? 'No application matches these filters.' : 'No application has been captured yet.')));
      }
      summary.textContent = rangeSummary(page.count, state.page, results.length, !page.next);
      links = { previous: pageOfLink(page.previous), next: pageOfLink(page.next) };
      previous.disabled = links.previous === null;
      next.disabled = links.next === null;
      root.dataset.state = 'ready';
    } catch (error) {
      summary.textContent = `Could not load applications: ${error.message}`;
      root.dataset.state = 'error';
    }
  }

  const change = (newState) => {
    state = newState;
    load(true);
  };
  previous.addEventListener('click', () => change({ ...state, page: links.previous }));
  next.addEventListener('click', () => change({ ...state, page: links.next }));
  window.addEventListener('popstate', () => {
    state = parseListState(window.location.search);
    form.replaceWith((form = buildForm(state, change)));
    load(false);
  });

  let form = buildForm(state, change);
  root.replaceChildren(form, summary, el('div', { class: 'table-wrap' }, table), pager);
  load(false);
}
