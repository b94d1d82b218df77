// Small DOM helpers shared by the pages. Text always goes in as text, never as HTML.

/** Create an element: el('a', {href: '/x', class: 'link'}, 'text', childNode). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** GET a JSON document; throws an Error whose message names the status for a non-2xx answer. */
export async function fetchJson(url) {
  const response = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  if (!response.ok) {
    let detail = '';
    try {
      const body = await response.json();
      detail = body?.detail ? `: ${body.detail}` : '';
    } catch {
      // not JSON: the status line says enough
    }
    throw new Error(`${response.status} ${response.statusText}${detail} (${url})`);
  }
  return response.json();
}

/** One section of a node panel (details.js's {heading, rows | table + columns | text}) as HTML. */
/** A table cell of a text, or of {text, title} (the title a tooltip: a record's raw id). */
export function tableCell(cell) {
  if (cell && typeof cell === 'object' && 'text' in cell) return el('td', { title: cell.title || null }, cell.text);
  return el('td', {}, cell);
}

export function renderSection(section) {
  const parts = [el('h3', {}, section.heading)];
  if (section.rows) {
    parts.push(el('table', { class: 'kv' }, el('tbody', {},
      section.rows.map(([label, value]) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', {}, String(value)))))));
  }
  if (section.table) {
    parts.push(el('table', { class: 'grid' },
      el('thead', {}, el('tr', {}, section.columns.map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, section.table.map((row) => el('tr', {}, row.map(tableCell))))));
  }
  if (section.text) parts.push(el('pre', {}, section.text));
  return el('section', { class: `details-section section-${section.heading.toLowerCase().replace(/\W+/g, '-')}` }, parts);
}

/** A status pill: <span class="status status-failed">failed</span>. */
export function statusBadge(status) {
  const value = status || 'unknown';
  return el('span', { class: `status status-${value}` }, value);
}

/** The CSRF token Django keeps in its cookie (session writes must send it back in a header). */
export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : '';
}

/**
 * Send a JSON body (POST by default) with the session's CSRF token; returns {ok, status, body}.
 * Never throws for an HTTP error: the caller shows the server's message (a 400 names the field).
 */
export async function sendJson(url, body, { method = 'POST' } = {}) {
  const response = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let answer = null;
  try {
    answer = response.status === 204 ? null : await response.json();
  } catch {
    answer = null;
  }
  return { ok: response.ok, status: response.status, body: answer };
}

/** The message of a failed write's answer: DRF's detail, or each field's first complaint. */
export function errorText(answer) {
  const body = answer?.body;
  if (!body) return `${answer?.status ?? ''} error`;
  if (typeof body.detail === 'string') return body.detail;
  return Object.entries(body).map(([field, problems]) => `${field}: ${[problems].flat().join(' ')}`).join('; ');
}
