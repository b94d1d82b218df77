// The history page: the team's traces and what-ifs, filtered, sorted and searched, named and
// pinned, each linking to its permalink; run again and delete where the server allows it.

import { el, errorText, fetchJson, sendJson, statusBadge } from './dom.js';
import {
  KINDS, ORDERINGS, QUESTION_STATUSES, historyQuery, historyRow, parseHistoryState, questionPath,
} from './history_view.js';
import { pageOfLink } from './listing.js';

function select(name, label, options, value) {
  return el('select', { name, 'aria-label': label },
    options.map(([v, text]) => el('option', { value: v, selected: v === value }, text)));
}

/** Mount on `root` (data-api-url: GET /api/v1/history/). */
export async function mountHistoryPage(root) {
  let state = parseHistoryState(window.location.search);
  const message = el('p', { class: 'message', role: 'status', 'aria-live': 'polite' });
  const table = el('div', { class: 'history-table' });
  const form = el('form', { class: 'history-filters', role: 'search' });
  root.replaceChildren(form, message, table);

  function buildForm() {
    const search = el('input', { type: 'search', name: 'search', value: state.search, placeholder: 'Search names and notes', 'aria-label': 'Search' });
    const pinned = el('input', { type: 'checkbox', name: 'pinned', id: 'history-pinned', checked: state.pinned });
    form.replaceChildren(
      select('kind', 'Kind', [['', 'Traces, what-ifs and diffs'], ...KINDS.map((k) => [k, { whatif: 'What-ifs', diff: 'Diffs' }[k] ?? 'Traces'])], state.kind),
      select('status', 'Status', [['', 'Any status'], ...QUESTION_STATUSES.map((s) => [s, s])], state.status),
      select('ordering', 'Sort', [['', 'newest first'], ...ORDERINGS.slice(1)], state.ordering),
      el('label', { for: 'history-pinned' }, pinned, ' pinned only'),
      search, el('button', { type: 'submit' }, 'Filter'));
  }

  form.addEventListener('change', (event) => {
    if (event.target.name !== 'search') apply();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    apply();
  });
  function apply() {
    const data = new FormData(form);
    state = { ...state, page: 1, kind: data.get('kind') ?? '', status: data.get('status') ?? '', ordering: data.get('ordering') ?? '',
      search: String(data.get('search') ?? '').trim(), pinned: data.get('pinned') === 'on' };
    load();
  }

  async function act(promise, done) {
    const answer = await promise;
    if (!answer.ok) message.textContent = errorText(answer);
    else {
      message.textContent = done;
      await load(false);
    }
  }

  function row(q) {
    const r = historyRow(q);
    const rename = el('form', { class: 'rename inline' },
      el('input', { type: 'text', name: 'name', value: q.name ?? '', 'aria-label': `Name of ${r.title}`, maxlength: 200, size: 16 }),
      el('button', { type: 'submit' }, 'Rename'));
    rename.addEventListener('submit', (event) => {
      event.preventDefault();
      act(sendJson(q.url, { name: new FormData(rename).get('name') }, { method: 'PATCH' }), 'Renamed.');
    });
    return el('tr', { dataset: { questionId: String(q.id), kind: q.kind } },
      el('td', {}, el('a', { href: r.href, class: 'permalink' }, r.title), el('div', { class: 'muted' }, r.what)),
      el('td', { class: 'col-question' }, r.question),
      el('td', {}, el('a', { href: `/applications/${encodeURIComponent(r.application)}/` }, r.application)),
      el('td', {}, statusBadge(r.status)),
      el('td', { class: 'num' }, r.results),
      el('td', {}, r.asked, el('div', { class: 'muted' }, r.took)),
      el('td', { class: 'actions' },
        el('button', { type: 'button', class: 'pin', 'aria-pressed': String(r.pinned),
          onclick: () => act(sendJson(q.url, { pinned: !r.pinned }, { method: 'PATCH' }), r.pinned ? 'Unpinned.' : 'Pinned.') },
        r.pinned ? '★ Unpin' : '☆ Pin'),
        rename,
        el('button', { type: 'button', class: 'rerun',
          onclick: () => sendJson(q.links.rerun, {}).then((answer) => {
            if (answer.ok) window.location.assign(questionPath(answer.body));
            else message.textContent = errorText(answer);
          }) }, 'Run again'),
        el('button', { type: 'button', class: 'delete',
          onclick: () => {
            if (window.confirm(`Delete ${r.title} and its stored answer?`)) act(sendJson(q.url, undefined, { method: 'DELETE' }), 'Deleted.');
          } }, 'Delete')));
  }

  async function load(push = true) {
    buildForm();
    if (push) window.history.replaceState(null, '', `${window.location.pathname}${historyQuery(state)}`);
    root.dataset.state = 'loading';
    let answer;
    try {
      answer = await fetchJson(`${root.dataset.apiUrl}${historyQuery(state)}`);
    } catch (error) {
      table.replaceChildren(el('p', { class: 'error', role: 'alert' }, `Could not load the history: ${error.message}`));
      root.dataset.state = 'error';
      return;
    }
    const pager = el('p', { class: 'pager' },
      el('button', { type: 'button', disabled: !answer.previous, onclick: () => { state = { ...state, page: pageOfLink(answer.previous) }; load(); } }, '‹ Newer'),
      ` ${answer.count} in all `,
      el('button', { type: 'button', disabled: !answer.next, onclick: () => { state = { ...state, page: pageOfLink(answer.next) }; load(); } }, 'Older ›'));
    table.replaceChildren(
      el('table', { class: 'grid', id: 'history-table' },
        el('thead', {}, el('tr', {}, ['Name', 'Question', 'Application', 'Status', 'Records', 'Asked', ''].map((c) => el('th', { scope: 'col' }, c)))),
        el('tbody', {}, answer.results.length ? answer.results.map(row)
          : el('tr', { class: 'empty' }, el('td', { colspan: 7 }, 'Nothing matches: ask a trace from a capture point of an application graph.')))),
      pager);
    root.dataset.state = 'ready';
  }

  await load(false);
}
