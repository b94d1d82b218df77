// The dataset graph page: datasets and the applications that read and write them, across
// applications, centred on one dataset or application, with depth controls and expansion on demand.

import cytoscape from 'cytoscape';
import dagre from 'cytoscape-dagre';

import { nodeDetails } from './details.js';
import { el, fetchJson, renderSection } from './dom.js';
import { formatCount } from './format.js';
import { frameReadable } from './layout.js';
import {
  depthsFromUrl, graphUrlOf, mergePipeline, pageUrlOf, pipelineElements,
} from './pipeline_graph.js';
import { columnMode } from './pipeline_columns.js';
import { graphStyle } from './style.js';
import { onNodeTap } from './taps.js';

cytoscape.use(dagre);

function depthInput(id, label, value) {
  const input = el('input', { type: 'number', id, name: id, min: 0, max: 10, step: 1, value, inputmode: 'numeric' });
  return [el('label', { for: id }, label), input];
}

function layout() {
  return { name: 'dagre', rankDir: 'LR', nodeSep: 40, rankSep: 80, nodeDimensionsIncludeLabels: true, fit: false, animate: false };
}

function detailsOf(node) {
  const info = node.data('info') ?? {};
  if (node.data('kind') === 'dataset') return nodeDetails({ kind: 'dataset', label: info.path, data: { ...info, directions: [] } });
  return nodeDetails({ kind: 'application', label: node.data('title'), data: info });
}

/** Mount the page on `root` (data-graph-url: the centre's API graph; data-center: its node id). */
export async function mountPipelinePage(root) {
  const depths = depthsFromUrl(window.location.search);
  const [upLabel, upstream] = depthInput('upstream', 'Upstream', depths.upstream);
  const [downLabel, downstream] = depthInput('downstream', 'Downstream', depths.downstream);
  const apply = el('button', { type: 'submit', id: 'apply-depth' }, 'Show');
  const mode = el('select', { id: 'mode', name: 'mode' },
    el('option', { value: 'datasets' }, 'Datasets'), el('option', { value: 'columns' }, 'Columns'));
  mode.value = new URLSearchParams(window.location.search).get('mode') === 'columns' ? 'columns' : 'datasets';
  const modeHint = el('span', { class: 'hint' });
  const controls = el('form', { class: 'toolbar depth', id: 'depth-form' },
    el('label', { for: 'mode' }, 'Show'), mode,
    upLabel, upstream, downLabel, downstream, apply, modeHint);
  const status = el('p', { class: 'graph-status', 'aria-live': 'polite' }, 'Loading the dataset graph…');
  const container = el('div', { id: 'graph', class: 'graph', role: 'img', 'aria-label': 'Dataset graph across applications' });
  const hint = () => el('p', { class: 'hint' }, 'Click a dataset or an application to see it; double-click to add its neighbours.');
  const panel = el('aside', { id: 'details', class: 'details', 'aria-live': 'polite' }, hint());
  const toolsSlot = el('div', { class: 'mode-tools' });
  root.replaceChildren(
    el('h1', {}, 'Pipeline around ', el('span', { class: 'center-title' }, root.dataset.title ?? '')),
    controls, toolsSlot, status,
    el('div', { class: 'graph-layout' }, el('div', { class: 'graph-frame' }, container), panel),
  );
  root.dataset.state = 'loading';

  const cy = cytoscape({ container, style: graphStyle(), minZoom: 0.05, maxZoom: 3 });
  let answer = null;
  const expanded = new Set();
  const columns = columnMode(cy, { root, status, panel, toolsSlot });

  function draw() {
    root.dataset.layout = 'running';
    cy.batch(() => {
      cy.elements().remove();
      cy.add(pipelineElements(answer, { expanded }));
    });
    cy.layout(layout()).run();
    frameReadable(cy);
    const apps = answer.nodes.filter((n) => n.kind === 'application').length;
    const datasets = answer.nodes.length - apps;
    status.textContent = `${formatCount(datasets)} dataset${datasets === 1 ? '' : 's'} · ${formatCount(apps)} application${apps === 1 ? '' : 's'}`
      + (answer.truncated ? ' · stopped at the node limit: lower the depth or centre on a node further out' : '');
    status.classList.toggle('truncated', Boolean(answer.truncated));
    requestAnimationFrame(() => requestAnimationFrame(() => { root.dataset.layout = 'idle'; }));
  }

  async function load() {
    const params = new URLSearchParams({ upstream: upstream.value, downstream: downstream.value });
    root.dataset.state = 'loading';
    try {
      if (mode.value === 'columns') {
        await columns.load(root.dataset.graphUrl, params);
      } else {
        answer = await fetchJson(`${root.dataset.graphUrl}?${params}`);
      }
    } catch (error) {
      status.textContent = `Could not load the graph: ${error.message}`;
      root.dataset.state = 'error';
      return;
    }
    const url = new URL(window.location.href);
    url.searchParams.set('upstream', upstream.value);
    url.searchParams.set('downstream', downstream.value);
    url.searchParams.set('mode', mode.value);
    window.history.replaceState(null, '', url);
    if (mode.value === 'datasets') {
      columns.leave();
      expanded.clear();
      draw();
    }
    root.dataset.mode = mode.value;
    modeHint.textContent = mode.value === 'columns' ? 'jobs from the centre · click a column to follow it'
      : 'edges from the centre · double-click a node to add its neighbours';
    root.dataset.state = 'ready';
  }

  // A node's neighbours (one edge each way) join what is drawn.
  async function expand(node) {
    const url = graphUrlOf(node.id());
    if (!url || expanded.has(node.id())) return;
    root.dataset.state = 'loading';
    try {
      answer = mergePipeline(answer, await fetchJson(`${url}?upstream=1&downstream=1`));
      expanded.add(node.id());
      draw();
    } catch (error) {
      status.textContent = `Could not add the neighbours: ${error.message}`;
    }
    root.dataset.state = 'ready';
  }

  function showDetails(node) {
    const details = detailsOf(node);
    const links = [];
    const page = pageUrlOf(node.id());
    if (page && node.id() !== answer.center) links.push(el('a', { href: page, class: 'recenter' }, 'Centre the graph here'));
    if (node.data('kind') === 'application') {
      links.push(el('a', { href: `/applications/${encodeURIComponent(node.data('info').app_id)}/`, class: 'open-app' }, 'Open its lineage graph'));
    }
    const more = expanded.has(node.id()) ? null
      : el('button', { type: 'button', class: 'expand', onclick: () => expand(node) }, 'Add its neighbours');
    panel.replaceChildren(
      el('h2', {}, details.title), el('div', { class: `kind kind-${details.kind}` }, details.kind),
      el('p', { class: 'links' }, links, more),
      ...details.sections.map(renderSection),
    );
    panel.dataset.nodeId = node.id();
  }

  onNodeTap(cy, (node, double) => {
    if (mode.value === 'columns') {
      columns.pick(node, double);
      return;
    }
    showDetails(node);
    if (double) expand(node);
  });
  mode.addEventListener('change', () => load());
  controls.addEventListener('submit', (event) => {
    event.preventDefault();
    if (controls.reportValidity()) load();
  });

  window.lineageGraph = cy;
  await load();
  return cy;
}
