// Pure helpers of the applications list page: query state <-> URLs, and table rows.

import { formatCount, formatDuration, formatTime } from './format.js';

export const STATUSES = ['running', 'succeeded', 'failed'];

/** Read {page, status, search, team} from a query string such as location.search; bad values are dropped. */
export function parseListState(queryString) {
  const params = new URLSearchParams(queryString ?? '');
  const page = Number.parseInt(params.get('page') ?? '', 10);
  const status = params.get('status') ?? '';
  return {
    page: Number.isInteger(page) && page > 1 ? page : 1,
    status: STATUSES.includes(status) ? status : '',
    search: (params.get('search') ?? '').trim(),
    team: /^[a-z0-9][a-z0-9-]*$/.test(params.get('team') ?? '') ? params.get('team') : '',
  };
}

/** The query string of a list state ("?status=failed&search=etl"), "" for the default state. */
export function listStateQuery(state) {
  const params = new URLSearchParams();
  if (state.page && state.page > 1) params.set('page', String(state.page));
  if (state.status) params.set('status', state.status);
  if (state.search) params.set('search', state.search);
  if (state.team) params.set('team', state.team);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** The API URL for a list state, keeping any query the base URL already has. */
export function applicationsApiUrl(baseUrl, state) {
  const url = new URL(baseUrl, 'http://placeholder.invalid');
  url.searchParams.delete('page');
  url.searchParams.delete('status');
  url.searchParams.delete('search');
  url.searchParams.delete('team');
  const extra = new URLSearchParams(listStateQuery(state));
  for (const [key, value] of extra) url.searchParams.set(key, value);
  const relative = !/^[a-z][a-z0-9+.-]*:/i.test(baseUrl);
  return relative ? `${url.pathname}${url.search}` : url.toString();
}

/** The page number a DRF "next"/"previous" link points to (1 when it has no page parameter), null for no link. */
export function pageOfLink(link) {
  if (!link) return null;
  const url = new URL(link, 'http://placeholder.invalid');
  const page = Number.parseInt(url.searchParams.get('page') ?? '1', 10);
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** One table row of an application: link target and cell texts (never HTML). */
export function applicationRow(app) {
  const jobs = app.failed_job_count
    ? `${formatCount(app.job_count)} (${formatCount(app.failed_job_count)} failed)`
    : formatCount(app.job_count);
  return {
    href: app.web_url || `/applications/${encodeURIComponent(app.app_id)}/`,
    status: app.status || 'unknown',
    cells: {
      name: app.name || app.app_id,
      app_id: app.app_id,
      team: app.team || '—',
      user: app.user || '—',
      status: app.status || 'unknown',
      started_at: formatTime(app.started_at),
      duration: formatDuration(app.duration_ms),
      jobs,
      stages: formatCount(app.stage_count),
      spark: [app.spark_version, app.master].filter(Boolean).join(' · ') || '—',
    },
  };
}

/** "Showing 51–100 of 230": full pages are all the same size, so the last page counts from the end. */
export function rangeSummary(count, page, shown, isLastPage) {
  if (!count || !shown) return 'No applications';
  const first = isLastPage ? count - shown + 1 : (page - 1) * shown + 1;
  return `Showing ${formatCount(first)}–${formatCount(first + shown - 1)} of ${formatCount(count)}`;
}
