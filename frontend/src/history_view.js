// The history of traces and what-ifs, pure: filter state <-> URL, and table rows.

import { formatCount, formatDuration, formatTime } from './format.js';
import { selectionText } from './question_view.js';

export const KINDS = ['trace', 'whatif', 'diff'];
const PATHS = { trace: 'traces', whatif: 'whatifs', diff: 'diffs' };
export const QUESTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
export const ORDERINGS = [
  ['-created_at', 'newest first'], ['created_at', 'oldest first'], ['name', 'name'],
  ['-result_count', 'most records'], ['status', 'status'],
];

/** {page, kind, status, search, pinned, ordering} from a query string; bad values dropped. */
export function parseHistoryState(queryString) {
  const params = new URLSearchParams(queryString ?? '');
  const page = Number.parseInt(params.get('page') ?? '', 10);
  const pick = (name, allowed) => (allowed.includes(params.get(name)) ? params.get(name) : '');
  return {
    page: Number.isInteger(page) && page > 1 ? page : 1,
    kind: pick('kind', KINDS),
    status: pick('status', QUESTION_STATUSES),
    search: (params.get('search') ?? '').trim(),
    pinned: params.get('pinned') === 'true',
    ordering: pick('ordering', ORDERINGS.map(([value]) => value)),
  };
}

/** The query string of a state ("" for the default one); the API takes the same parameters. */
export function historyQuery(state) {
  const params = new URLSearchParams();
  if (state.page > 1) params.set('page', String(state.page));
  for (const key of ['kind', 'status', 'search', 'ordering']) if (state[key]) params.set(key, state[key]);
  if (state.pinned) params.set('pinned', 'true');
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** The permalink of a trace or what-if's page. */
export function questionPath(question) {
  return `/${PATHS[question.kind] ?? 'traces'}/${question.id}/`;
}

/** A history row's texts (never HTML). */
export function historyRow(q) {
  const what = { whatif: 'what-if', diff: 'diff' }[q.kind] ?? `${q.direction} trace`;
  return {
    href: questionPath(q),
    title: q.name || `${what} ${q.id}`,
    what,
    question: selectionText(q.selection),
    application: q.application,
    status: q.status,
    results: q.result_count === null || q.result_count === undefined ? '—' : formatCount(q.result_count),
    asked: `${q.created_by || '—'} · ${formatTime(q.created_at)}`,
    took: formatDuration(q.duration_ms),
    pinned: Boolean(q.pinned),
  };
}
