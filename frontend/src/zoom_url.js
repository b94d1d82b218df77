// The application page's zoom state in its URL: ?level=stage&in=<id>&out=<id> (repeated) and
// skipped=1 when skipped stages are shown (zoom.stateToUrl, zoom.stateFromUrl).

import { stateToUrl, zoomQuery } from './zoom.js';

/** The zoom state of the page's URL. */
export function urlZoom() {
  const params = new URLSearchParams(window.location.search);
  return { level: params.get('level'), in: params.getAll('in'), out: params.getAll('out'), skipped: params.get('skipped') === '1' };
}

/** Writes the zoom state into the page's URL, in place (no new history entry). */
export function writeUrlZoom(tree, level, collapsed, skipped) {
  const query = zoomQuery(window.location.search, stateToUrl(tree, level, collapsed), skipped);
  window.history.replaceState(null, '', `${window.location.pathname}?${query}`);
}
