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

/** A status pill: <span class="status status-failed">failed</span>. */
export function statusBadge(status) {
  const value = status || 'unknown';
  return el('span', { class: `status status-${value}` }, value);
}
