// The provenance pages: the team's provenance graphs (GET /api/v1/provenance/graphs/), and one
// graph's index with a lineage query drawn as a graph (GET .../lineage/?item=&direction=).

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { el, fetchJson, renderSection, statusBadge } from './dom.js';
import { formatCount, formatTime } from './format.js';
import { frameReadable } from './layout.js';
import {
  DIRECTIONS, buildRows, lineageElements, lineageSummary, lineageUrl, queryFromUrl, setsText,
} from './provenance_view.js';
import { graphStyle } from './style.js';

cytoscape.use(dagre);

/** Mount the list of graphs on `root` (data-api-url). */
export async function mountProvenanceGraphsPage(root) {
  root.dataset.state = 'loading';
  let answer;
  try {
    answer = await fetchJson(root.dataset.apiUrl);
  } catch (error) {
    root.replaceChildren(el('p', { class: 'error' }, `Could not load the graphs: ${error.message}`));
    root.dataset.state = 'error';
    return;
  }
  const rows = answer.results.map((graph) => el('tr', {},
    el('td', { class: 'col-name' }, el('a', { href: graph.links.page }, graph.name)),
    el('td', {}, graph.team),
    el('td', {}, formatCount(graph.triple_count)),
    el('td', {}, formatCount(graph.set_threshold)),
    el('td', {}, formatTime(graph.created_at))));
  root.replaceChildren(answer.results.length
    ? el('table', { class: 'grid listing', id: 'provenance-graphs' },
      el('thead', {}, el('tr', {}, ['Graph', 'Team', 'Triples', 'Set threshold', 'Created'].map((c) => el('th', { scope: 'col' }, c)))),
      el('tbody', {}, rows))
    : el('p', { class: 'hint' }, 'No provenance graph yet: make one with POST /api/v1/provenance/graphs/ and post triples to it.'));
  root.dataset.state = 'ready';
}

/** Mount one graph's page on `root` (data-api-url, data-lineage-url, data-title). */
export async function mountProvenancePage(root) {
  const start = queryFromUrl(window.location.search);
  const item = el('input', { type: 'text', id: 'item', name: 'item', value: start.item, required: true, placeholder: 'an item, as its triples name it' });
  const direction = el('select', { id: 'direction', name: 'direction' },
    DIRECTIONS.map((d) => el('option', { value: d, selected: d === start.direction }, d)));
  const form = el('form', { class: 'toolbar', id: 'lineage-form' },
    el('label', { for: 'item' }, 'Item'), item, el('label', { for: 'direction' }, 'Lineage'), direction,
    el('button', { type: 'submit', id: 'ask-lineage' }, 'Show lineage'));
  const status = el('p', { class: 'graph-status', id: 'lineage-status', 'aria-live': 'polite' }, 'Ask the lineage of an item.');
  const container = el('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Lineage of the item' });
  const panel = el('aside', { id: 'details', class: 'details', 'aria-live': 'polite' });
  root.replaceChildren(
    el('h1', {}, 'Provenance graph ', el('span', { class: 'center-title' }, root.dataset.title ?? '')),
    form, status,
    el('div', { class: 'graph-layout' }, el('div', { class: 'graph-frame' }, container), panel),
  );
  const cy = cytoscape({ container, style: graphStyle(), minZoom: 0.05, maxZoom: 3 });
  window.lineageGraph = cy;
  let graph = null;

  function showIndex(extra = []) {
    const build = graph?.index ?? null;
    const latest = graph?.latest_build;
    const sections = [{ heading: 'Index', rows: buildRows(build) }];
    if (latest && (!build || latest.id !== build.id)) sections.push({ heading: 'Newest build', rows: buildRows(latest) });
    panel.replaceChildren(el('h2', {}, 'CSProv index'), latest ? statusBadge(latest.status) : null,
      ...[...sections, ...extra].map(renderSection));
  }

  async function ask(query) {
    root.dataset.state = 'loading';
    status.textContent = `Reading the lineage of ${query.item}…`;
    const url = new URL(window.location.href);
    url.searchParams.set('item', query.item);
    url.searchParams.set('direction', query.direction);
    window.history.replaceState(null, '', url);
    let answer;
    try {
      answer = await fetchJson(lineageUrl(root.dataset.lineageUrl, query));
    } catch (error) {
      cy.elements().remove();
      status.textContent = `No lineage: ${error.message}`;
      root.dataset.state = 'error';
      return;
    }
    cy.batch(() => {
      cy.elements().remove();
      cy.add(lineageElements(answer));
    });
    cy.layout({ name: 'dagre', rankDir: 'LR', nodeSep: 20, rankSep: 70, nodeDimensionsIncludeLabels: true, fit: false, animate: false }).run();
    frameReadable(cy);
    status.textContent = lineageSummary(answer);
    showIndex([{ heading: 'Read by this query', rows: [
      ['Connected set', String(answer.connected_set)], ['Component', String(answer.component)],
      ['Sets read', setsText(answer.sets_read)], ['Triples read', formatCount(answer.triples_read)],
      ['Time', `${Object.values(answer.timings).reduce((a, b) => a + b, 0).toFixed(1)} ms`],
    ] }]);
    root.dataset.state = 'ready';
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (item.value.trim()) ask({ item: item.value.trim(), direction: direction.value });
  });
  try {
    graph = await fetchJson(root.dataset.apiUrl);
  } catch (error) {
    status.textContent = `Could not load the graph: ${error.message}`;
    root.dataset.state = 'error';
    return;
  }
  showIndex();
  if (start.item) await ask(start);
  else root.dataset.state = 'ready';
}
